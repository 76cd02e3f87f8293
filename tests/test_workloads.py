"""Workload expansion: the pods Deployment / ReplicaSet / StatefulSet / Job / DaemonSet controllers create."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubefit.cli import main
from kubefit.errors import InputError
from kubefit.manifests.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[1]
MANIFESTS = ROOT / "examples" / "manifests"
SUFFIX = "[bcdfghjklmnpqrstvwxz2456789]{5}"

NODE = """apiVersion: v1
kind: Node
metadata: {{name: {name}, labels: {{disk: {disk}}}}}
spec: {{unschedulable: {cordoned}}}
status: {{allocatable: {{cpu: "4", memory: 8Gi, pods: "110"}}}}
"""
CONTAINERS = "containers: [{name: c, resources: {requests: {cpu: 500m, memory: 1Gi}}}]"


def nodes(n: int = 2, cordoned: str = "false") -> str:
    return "---\n".join(NODE.format(name=f"n{i}", disk="ssd" if i % 2 else "hdd", cordoned=cordoned)
                        for i in range(1, n + 1))


def workload(kind: str, name: str, spec: str, api: str = "apps/v1", meta: str = "") -> str:
    return (f"apiVersion: {api}\nkind: {kind}\nmetadata: {{name: {name}{meta}}}\n"
            f"spec: {{{spec}, template: {{metadata: {{labels: {{app: {name}}}}}, spec: {{{CONTAINERS}}}}}}}\n")


def owned_pod(name: str, owner_kind: str, owner: str, phase: str = "Running", node: str = "n1") -> str:
    return (f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, labels: {{app: {owner}}}, ownerReferences: "
            f"[{{apiVersion: apps/v1, kind: {owner_kind}, name: {owner}, controller: true}}]}}\n"
            f"spec: {{nodeName: {node}, {CONTAINERS}}}\nstatus: {{phase: {phase}}}\n")


def load(tmp_path: Path, *parts: str):
    path = tmp_path / "scenario.yaml"
    path.write_text("---\n".join(parts))
    return load_scenario([path])


def names(scenario, created: bool = True) -> list[str]:
    return [p.name for p in scenario.pods if bool(p.created_by) == created]


def simulate_json(capsys, *args: str) -> tuple[int, dict, str]:
    rc = main(["simulate", *args, "-o", "json"])
    out = capsys.readouterr()
    return rc, (json.loads(out.out) if rc == 0 else {}), out.err


# --------------------------------------------------------------------------- the example folder

def test_folder_of_real_manifests_simulates(capsys):
    """Deployment + StatefulSet + DaemonSets + Service + ConfigMap + Secret, read with -f DIR -R."""
    rc, data, err = simulate_json(capsys, "-f", str(MANIFESTS), "-R")
    assert rc == 0, err
    placed = {s["pod"]: s["node"] for s in data["steps"]}
    assert data["unschedulable"] == 0 and len(placed) == 14
    assert [p for p in placed if p.startswith("db-")] == ["db-0", "db-1", "db-2"]
    web = [p for p in placed if p.startswith("web-")]
    assert len(web) == 4 and all(re.fullmatch(f"web-{SUFFIX[:-3]}{{6,10}}-{SUFFIX}", p) for p in web), web
    exporter = {placed[p] for p in placed if p.startswith("node-exporter-")}
    agent = [placed[p] for p in placed if p.startswith("log-agent-")]
    assert exporter == {"worker-1", "worker-2", "worker-3", "control-plane"}  # tolerates every taint
    assert sorted(agent) == ["worker-1", "worker-2", "worker-3"]  # the control-plane taint is not tolerated
    skipped = [line for line in err.splitlines() if "skipped" in line]
    assert len(skipped) == 1 and all(k in skipped[0] for k in ("ConfigMap (1)", "Secret (1)"))
    assert "Service" not in skipped[0]  # read: PodTopologySpread's system defaults select pods through it


def test_folder_without_recursive_reads_only_its_own_files(capsys):
    rc, data, err = simulate_json(capsys, "-f", str(MANIFESTS))
    assert rc == 0, err
    assert not any(s["pod"].startswith(("node-exporter-", "log-agent-")) for s in data["steps"])
    assert len(data["steps"]) == 7


def test_folder_with_no_manifests_is_an_error(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("hello")
    assert main(["simulate", "-f", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and str(tmp_path) in err and "no .json, .yaml, .yml files" in err


def test_deployment_chain_of_owners(tmp_path):
    scenario = load(tmp_path, nodes(), workload("Deployment", "web", "replicas: 2, selector: {matchLabels: {app: web}}"))
    rs = [w for w in scenario.workloads if w.kind == "ReplicaSet"]
    assert len(rs) == 1
    digest = rs[0].body["metadata"]["labels"]["pod-template-hash"]
    assert rs[0].name == f"web-{digest}"
    assert rs[0].body["metadata"]["ownerReferences"][0]["kind"] == "Deployment"
    pods = [p for p in scenario.pods if p.created_by]
    assert len(pods) == 2
    for pod in pods:
        meta = pod.raw["metadata"]
        assert re.fullmatch(f"web-{digest}-{SUFFIX}", pod.name)
        assert meta["labels"] == {"app": "web", "pod-template-hash": digest}
        assert meta["ownerReferences"][0]["kind"] == "ReplicaSet" and meta["ownerReferences"][0]["name"] == rs[0].name


def test_names_are_stable_between_loads(tmp_path):
    content = (nodes(), workload("Deployment", "web", "replicas: 3, selector: {matchLabels: {app: web}}"),
               workload("Job", "batch", "parallelism: 2", api="batch/v1"))
    assert names(load(tmp_path, *content)) == names(load(tmp_path, *content))


def test_names_follow_the_objects_not_the_files_they_came_in(tmp_path):
    """Suffixes are seeded by each workload's kind, namespace and name (one object in a scenario: a second of
    that name is refused), so the same objects get the same pod names from another file or a folder of files
    (`kubefit serve` writes a session's scenario to a file of its own); the same Deployment in another
    namespace gets other suffixes."""
    content = (nodes(), workload("Deployment", "web", "replicas: 3, selector: {matchLabels: {app: web}}"),
               workload("Job", "batch", "parallelism: 2", api="batch/v1"),
               workload("DaemonSet", "agent", "selector: {matchLabels: {app: agent}}"))
    first = names(load(tmp_path, *content))
    (tmp_path / "split").mkdir()
    for i, part in enumerate(content):
        (tmp_path / "split" / f"{i}.yaml").write_text(part)
    assert names(load_scenario([tmp_path / "split"])) == first
    moved = workload("Deployment", "web", "replicas: 3, selector: {matchLabels: {app: web}}").replace(
        "name: web", "name: web, namespace: shop", 1)
    other = names(load(tmp_path, nodes(), moved))
    assert len(other) == 3 and not set(other) & set(first)


# --------------------------------------------------------------------------- only what the controller still creates

def test_replica_set_with_its_pods_does_not_grow(tmp_path):
    rs = workload("ReplicaSet", "api", "replicas: 3, selector: {matchLabels: {app: api}}")
    pods = [owned_pod(f"api-{i}", "ReplicaSet", "api") for i in range(3)]
    assert names(load(tmp_path, nodes(), rs, *pods)) == []


def test_a_template_a_pod_gave_already_warns_as_its_own(tmp_path):
    """The template's spec is that of an existing replica (decoded once: `PodFactory`'s memo), yet each warns
    at its own place: the pod at its spec, the ReplicaSet at its template; the two new replicas ask the same."""
    spec = "containers: [{name: c, resources: {requests: {cpu: 500m, memory: 1Gi, foo: '1'}}}]"
    rs = (f"apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {{name: api}}\nspec: {{replicas: 3, selector: "
          f"{{matchLabels: {{app: api}}}}, template: {{metadata: {{labels: {{app: api}}}}, spec: {{{spec}}}}}}}\n")
    pod = owned_pod("api-0", "ReplicaSet", "api").replace(CONTAINERS, spec)
    scenario = load(tmp_path, nodes(1), rs, pod)
    ignored = ("resources.requests.foo: resource 'foo' is not one kube-scheduler accounts for (not cpu, memory, "
               "ephemeral-storage, pods, extended or hugepages); it is ignored, as kube-scheduler ignores it")
    source = str(tmp_path / "scenario.yaml")
    assert scenario.warnings == [f"{source}: Pod/api-0: spec.containers[0].{ignored}",
                                 f"{source}: ReplicaSet/api: spec.template.spec.containers[0].{ignored}"]
    assert len(names(scenario)) == 2
    assert {p.containers[0].requests["foo"] for p in scenario.pods} == {10**9}  # 1, in nanos


def test_replica_set_replaces_a_failed_pod(tmp_path):
    rs = workload("ReplicaSet", "api", "replicas: 3, selector: {matchLabels: {app: api}}")
    pods = [owned_pod("api-a", "ReplicaSet", "api"), owned_pod("api-b", "ReplicaSet", "api"),
            owned_pod("api-c", "ReplicaSet", "api", phase="Failed")]
    scenario = load(tmp_path, nodes(), rs, *pods)
    assert len(names(scenario)) == 1
    assert "api-c" not in [p.name for p in scenario.pending_pods]  # terminal: not queued


def test_ownership_by_uid_wins_over_name(tmp_path):
    rs = workload("ReplicaSet", "api", "replicas: 2, selector: {matchLabels: {app: api}}", meta=", uid: u-1")
    other = owned_pod("api-a", "ReplicaSet", "api").replace("controller: true", "controller: true, uid: u-2")
    mine = owned_pod("api-b", "ReplicaSet", "api").replace("controller: true", "controller: true, uid: u-1")
    assert len(names(load(tmp_path, nodes(), rs, other, mine))) == 1


def test_deployment_with_its_replica_set_adds_no_new_one(tmp_path):
    deploy = workload("Deployment", "web", "replicas: 2, selector: {matchLabels: {app: web}}")
    rs = workload("ReplicaSet", "web-abc", "replicas: 2, selector: {matchLabels: {app: web-abc}}",
                  meta=", ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web}]")
    scenario = load(tmp_path, nodes(), deploy, rs, owned_pod("web-abc-x", "ReplicaSet", "web-abc"))
    assert [w.name for w in scenario.workloads] == ["web", "web-abc"]
    assert len(names(scenario)) == 1 and names(scenario)[0].startswith("web-abc-")


UIDS = st.sampled_from([None, "", "u-1", "u-2", 7])  # absent, empty, two strings, a number (no string)


def _deployment_doc(name: str, uid: object, namespace: str = "default"):
    from kubefit.manifests.documents import Document

    meta = {"name": name, "namespace": namespace, **({} if uid is None else {"uid": uid})}
    return Document({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": {
        "selector": {"matchLabels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "c"}]}}}}, "f.yaml", 1)


@settings(max_examples=150, deadline=None)
@given(created=st.lists(st.tuples(st.sampled_from(["web", "api"]), UIDS), max_size=3),
       given_refs=st.lists(st.lists(st.fixed_dictionaries({}, optional={
           "kind": st.sampled_from(["Deployment", "StatefulSet"]), "name": st.sampled_from(["web", "api"]),
           "uid": UIDS}), max_size=2), max_size=2),
       owner=st.tuples(st.sampled_from(["web", "api", "db"]), UIDS))
def test_replica_sets_answer_as_owned_by_reading_each(created, given_refs, owner):
    """`ReplicaSets.owned_by` (the created ones by their owner's uid and name) is `any(owned_by(rs.body, owner))`
    over every ReplicaSet of the namespace, read one by one as before: owners with and without a uid, a uid that
    is no string, ReplicaSets of the files with references of any kind, uid or none."""
    from kubefit.manifests.documents import Document
    from kubefit.manifests.workloads import ReplicaSets, _deployment_replica_set, owned_by

    sets, every = ReplicaSets(), []
    for refs in given_refs:
        rs = Document({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                       "metadata": {"name": "rs", "ownerReferences": refs}}, "f.yaml", 1)
        sets.add(rs)
        every.append(rs)
    for name, uid in created:
        deployment = _deployment_doc(name, uid)
        rs = _deployment_replica_set(deployment, {})
        sets.add(rs, created_for=deployment)
        every.append(rs)
    doc = _deployment_doc(*owner)
    assert sets.owned_by(doc) == any(owned_by(rs.body, doc) for rs in every)


def test_paused_deployment_creates_nothing(tmp_path):
    deploy = workload("Deployment", "web", "replicas: 2, paused: true, selector: {matchLabels: {app: web}}")
    assert names(load(tmp_path, nodes(), deploy)) == []


def test_stateful_set_fills_missing_ordinals(tmp_path):
    sts = workload("StatefulSet", "db", "replicas: 3, selector: {matchLabels: {app: db}}")
    scenario = load(tmp_path, nodes(), sts, owned_pod("db-1", "StatefulSet", "db"))
    assert names(scenario) == ["db-0", "db-2"]
    assert scenario.pods[0].raw["metadata"]["labels"]["apps.kubernetes.io/pod-index"] == "0"
    # the labels selectors match are the manifest's: the controller's identity labels too (initIdentity,
    # stateful_set_utils.go), beside the template's
    assert [p.labels for p in scenario.pods if p.created_by] == [
        {"app": "db", "apps.kubernetes.io/pod-index": str(i), "statefulset.kubernetes.io/pod-name": f"db-{i}"}
        for i in (0, 2)]


def test_stateful_set_ordinals_start(tmp_path):
    sts = workload("StatefulSet", "db", "replicas: 2, ordinals: {start: 5}, selector: {matchLabels: {app: db}}")
    assert names(load(tmp_path, nodes(), sts)) == ["db-5", "db-6"]


@pytest.mark.parametrize(("spec", "succeeded", "active", "expected"), [
    ("parallelism: 3, completions: 5", 0, 0, 3),
    ("parallelism: 3, completions: 5", 3, 0, 2),  # min(3, 5 - 3)
    ("parallelism: 3, completions: 5", 1, 2, 1),  # min(3, 4) - 2 active
    ("parallelism: 2", 0, 0, 2),  # work queue: parallelism pods
    ("parallelism: 2", 1, 0, 0),  # work queue done once one succeeded
    ("completions: 4", 0, 0, 1),  # parallelism defaults to 1
    ("parallelism: 4, completions: 4, suspend: true", 0, 0, 0),
], ids=["fresh", "some-succeeded", "some-active", "work-queue", "work-queue-done", "default-parallelism",
        "suspended"])
def test_job_pods(tmp_path, spec, succeeded, active, expected):
    job = workload("Job", "batch", spec, api="batch/v1")
    pods = [owned_pod(f"batch-s{i}", "Job", "batch", phase="Succeeded") for i in range(succeeded)]
    pods += [owned_pod(f"batch-a{i}", "Job", "batch") for i in range(active)]
    scenario = load(tmp_path, nodes(), job, *pods)
    created = [p for p in scenario.pods if p.created_by]
    assert len(created) == expected
    assert all(p.raw["metadata"]["labels"]["job-name"] == "batch" for p in created)


# --------------------------------------------------------------------------- DaemonSets

def test_daemon_set_pods_are_pinned_by_node_affinity(tmp_path):
    ds = workload("DaemonSet", "agent", "selector: {matchLabels: {app: agent}}")
    scenario = load(tmp_path, nodes(3), ds)
    pods = [p for p in scenario.pods if p.created_by]
    pinned = [p.affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
              for p in pods]
    assert pinned == [[{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [f"n{i}"]}]}]
                      for i in (1, 2, 3)]
    assert any(t.key == "node.kubernetes.io/unschedulable" for t in pods[0].tolerations)


def test_daemon_set_skips_nodes_it_already_runs_on_and_unselected_ones(tmp_path):
    ds = workload("DaemonSet", "agent", "selector: {matchLabels: {app: agent}}").replace(
        f"spec: {{{CONTAINERS}", f"spec: {{nodeSelector: {{disk: ssd}}, {CONTAINERS}")
    scenario = load(tmp_path, nodes(4), ds, owned_pod("agent-x", "DaemonSet", "agent", node="n1"))
    pods = [p for p in scenario.pods if p.created_by]
    assert [p.affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
            ["matchFields"][0]["values"] for p in pods] == [["n3"]]


def test_daemon_set_pods_are_what_decoding_their_own_manifests_gives(tmp_path):
    """The pods after the first are copies of it with their name, affinity and manifest (`DaemonSetPods.pod`):
    each must equal the pod `decode_pod` makes of its own manifest, field for field (an independent decoding
    per pod, as before the copies), and have a containers tuple of its own (kube-scheduler's replica keys go by
    its identity, then compare the whole spec: shared by pods differing in affinity, they turned quadratic)."""
    from dataclasses import replace

    from kubefit.manifests.documents import Document
    from kubefit.manifests.load import decode_pod

    template_affinity = ("affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                         "{nodeSelectorTerms: [{matchExpressions: [{key: disk, operator: Exists}]}]}, "
                         "preferredDuringSchedulingIgnoredDuringExecution: [{weight: 3, preference: "
                         "{matchExpressions: [{key: disk, operator: In, values: [ssd]}]}}]}}, "
                         "tolerations: [{key: dedicated, operator: Exists}], ")
    ds = workload("DaemonSet", "agent", "selector: {matchLabels: {app: agent}}").replace(
        f"spec: {{{CONTAINERS}", f"spec: {{{template_affinity}{CONTAINERS}")
    path = tmp_path / "s.yaml"
    path.write_text("---\n".join([nodes(4), ds]))
    pods = [p for p in load_scenario([path], admission=False).pods if p.created_by]
    assert len(pods) == 4
    for pod in pods:
        decoded = decode_pod(Document(pod.raw, pod.source, 1), [])
        assert replace(decoded, created_by=pod.created_by) == pod, pod.name
    assert [p.affinity["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]["weight"]
            for p in pods] == [3] * 4
    assert len({id(p.containers) for p in pods}) == 4
    assert len({id(p.affinity) for p in pods}) == 4


def test_daemon_set_pods_land_on_cordoned_nodes(tmp_path, capsys):
    """The controller's unschedulable toleration lets kube-scheduler place them on cordoned nodes."""
    path = tmp_path / "s.yaml"
    path.write_text("---\n".join([nodes(2, cordoned="true"),
                                  workload("DaemonSet", "agent", "selector: {matchLabels: {app: agent}}")]))
    rc, data, err = simulate_json(capsys, "-f", str(path))
    assert rc == 0, err
    assert sorted(s["node"] for s in data["steps"]) == ["n1", "n2"]


# --------------------------------------------------------------------------- bad templates, names, odd pods

@pytest.mark.parametrize(("spec", "fragments"), [
    ("replicas: 2, selector: {matchLabels: {app: other}}",
     ['spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match template `labels`']),
    ("replicas: -1, selector: {matchLabels: {app: web}}", ["spec.replicas", "non-negative"]),
    ("replicas: 2, replica: 3, selector: {matchLabels: {app: web}}", ["spec.replica", "unknown field"]),
    ("replicas: 2", ["[spec.selector: Required value, spec.template.metadata.labels: Invalid value: "]),
    ("replicas: 9223372036854775807, selector: {matchLabels: {app: web}}",
     ["spec.replicas", "at most 2147483647", "int32"]),
    ("replicas: 2, selector: {matchLabels: app}", ["spec.selector.matchLabels", "must be a mapping"]),
    ("replicas: 2, selector: {matchLabels: {app: web}, matchLabel: {app: web}}",
     ["spec.selector.matchLabel", "unknown field"]),
    ("replicas: 2, selector: {matchExpressions: [{key: app, operator: In, values: [web], value: x}]}",
     ["spec.selector.matchExpressions[0].value", "unknown field"]),
], ids=["selector-mismatch", "negative-replicas", "unknown-field", "no-selector", "beyond-int32",
        "match-labels-not-a-map", "selector-unknown-field", "requirement-unknown-field"])
def test_bad_workload_is_one_clear_error(tmp_path, capsys, spec, fragments):
    path = tmp_path / "s.yaml"
    path.write_text("---\n".join([nodes(), workload("Deployment", "web", spec)]))
    assert main(["simulate", "-f", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and "Traceback" not in err
    assert all(f in err for f in (str(path), "Deployment/web", *fragments)), err


@pytest.mark.parametrize("field", ["kubefitTypo", "metadata.labelz"])
def test_unknown_object_or_metadata_field_of_a_workload_is_refused(tmp_path, capsys, field):
    """As for Pods and Nodes: a workload's unknown top-level or metadata field is an error, never dropped."""
    body = workload("Deployment", "web", "replicas: 2, selector: {matchLabels: {app: web}}")
    body = (body + "kubefitTypo: 1\n" if field == "kubefitTypo"
            else body.replace("metadata: {name: web}", "metadata: {name: web, labelz: {a: b}}"))
    path = tmp_path / "s.yaml"
    path.write_text("---\n".join([nodes(), body]))
    assert main(["simulate", "-f", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and f"Deployment/web: {field}: unknown field" in err, err


@pytest.mark.parametrize(("kind", "spec", "field"), [
    ("Deployment", "replicas: 2147483647, selector: {matchLabels: {app: web}}", "spec.replicas"),
    ("StatefulSet", "replicas: 2147483647, serviceName: web, selector: {matchLabels: {app: web}}", "spec.replicas"),
    ("Job", "parallelism: 2147483647, completions: 2147483647", "spec.parallelism"),
], ids=["deployment", "statefulset", "job"])
def test_workload_pods_are_bounded(tmp_path, capsys, kind, spec, field):
    """An int32 `replicas` would exhaust memory: past KUBEFIT_MAX_WORKLOAD_PODS (200,000) it is one clear
    error, at once."""
    api = "batch/v1" if kind == "Job" else "apps/v1"
    path = tmp_path / "s.yaml"
    path.write_text("---\n".join([nodes(), workload(kind, "web", spec, api=api)]))
    assert main(["simulate", "-f", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("error:") == 1
    assert f"{kind}/web" in err and field in err and "past the 200000 pods" in err, err


def test_workload_pod_bound_counts_every_workload(tmp_path, monkeypatch, capsys):
    """The bound is the scenario's: two ReplicaSets of 3 pass a bound of 6 and fail one of 5 (at the second)."""
    sets = [workload("ReplicaSet", name, f"replicas: 3, selector: {{matchLabels: {{app: {name}}}}}")
            for name in ("a", "b")]
    path = tmp_path / "s.yaml"
    path.write_text("---\n".join([nodes(), *sets]))
    monkeypatch.setenv("KUBEFIT_MAX_WORKLOAD_PODS", "6")
    assert len(load_scenario([path]).pending_pods) == 6
    monkeypatch.setenv("KUBEFIT_MAX_WORKLOAD_PODS", "5")
    assert main(["simulate", "-f", str(path)]) == 2
    err = capsys.readouterr().err
    assert "ReplicaSet/b: spec.replicas: would create 3 pods, past the 5 pods" in err, err


def test_bad_template_is_named_at_the_workload(tmp_path, capsys):
    deploy = workload("Deployment", "web", "replicas: 2, selector: {matchLabels: {app: web}}").replace("500m", "5x")
    path = tmp_path / "s.yaml"
    path.write_text("---\n".join([nodes(), deploy]))
    assert main(["simulate", "-f", str(path)]) == 2
    err = capsys.readouterr().err
    assert "Deployment/web: spec.template.spec.containers[0].resources.requests.cpu" in err


def test_generate_name(tmp_path):
    pod = f"apiVersion: v1\nkind: Pod\nmetadata: {{generateName: job-}}\nspec: {{{CONTAINERS}}}\n"
    first = load(tmp_path, nodes(), pod, pod)
    got = [p.name for p in first.pods]
    assert all(re.fullmatch(f"job-{SUFFIX}", n) for n in got) and got[0] != got[1]
    assert got == [p.name for p in load(tmp_path, nodes(), pod, pod).pods]


def test_unserved_scheduler_name_stays_pending(tmp_path, capsys):
    pod = (f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\n"
           f"spec: {{schedulerName: my-scheduler, {CONTAINERS}}}\n")
    path = tmp_path / "s.yaml"
    path.write_text("---\n".join([nodes(), pod]))
    rc, data, _err = simulate_json(capsys, "-f", str(path))
    assert rc == 0
    assert data["steps"] == [{"pod": "p", "node": None, "message": "no profile serves schedulerName 'my-scheduler'; "
                                                                   "kube-scheduler leaves the pod pending"}]


def test_terminal_pods_hold_nothing_and_are_not_queued(tmp_path, capsys):
    done = owned_pod("old", "Job", "x", phase="Succeeded", node="n1")
    pending_done = (f"apiVersion: v1\nkind: Pod\nmetadata: {{name: gone}}\n"
                    f"spec: {{{CONTAINERS}}}\nstatus: {{phase: Failed}}\n")
    path = tmp_path / "s.yaml"
    path.write_text("---\n".join([nodes(1), done, pending_done]))
    rc, data, _err = simulate_json(capsys, "-f", str(path))
    assert rc == 0
    assert data["steps"] == [] and data["final"]["n1"]["pods"] == 0


# --------------------------------------------------------------------------- priority classes

PRIORITY_CLASS = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: {name}}}\nvalue: {value}\n{extra}"


def test_priority_class_orders_the_queue(tmp_path):
    """A pod naming a class without spec.priority takes its value (the API server's Priority admission);
    the global default (the lowest if several) goes to pods naming none; spec.priority, when given, wins."""
    high = PRIORITY_CLASS.format(name="high", value=1000, extra="")
    low_default = PRIORITY_CLASS.format(name="low", value=10, extra="globalDefault: true\n")
    other_default = PRIORITY_CLASS.format(name="other", value=20, extra="globalDefault: true\n")
    plain = f"apiVersion: v1\nkind: Pod\nmetadata: {{name: plain}}\nspec: {{{CONTAINERS}}}\n"
    given = f"apiVersion: v1\nkind: Pod\nmetadata: {{name: given}}\nspec: {{priority: 5, {CONTAINERS}}}\n"
    deploy = workload("Deployment", "web", "replicas: 1, selector: {matchLabels: {app: web}}").replace(
        f"spec: {{{CONTAINERS}", f"spec: {{priorityClassName: high, {CONTAINERS}")
    critical = plain.replace("name: plain", "name: critical").replace("spec: {", "spec: {priorityClassName: "
                                                                      "system-node-critical, ")
    scenario = load(tmp_path, nodes(), high, low_default, other_default, plain, given, deploy, critical)
    priorities = {p.name.split("-")[0]: p.priority for p in scenario.pods}
    assert priorities == {"plain": 10, "given": 5, "web": 1000, "critical": 2000001000}
    assert [p.name.split("-")[0] for p in scenario.pending_pods] == ["critical", "web", "plain", "given"]


def test_unknown_priority_class_is_refused(tmp_path, capsys):
    """A Pod naming a PriorityClass that does not exist is refused by the Priority admission (`admitPod`,
    plugin/pkg/admission/priority/admission.go), with the API server's message; a workload's are in
    tests/test_real_installs.py (the workload is stored, its controller's creates fail)."""
    pod = (f"apiVersion: v1\nkind: Pod\nmetadata: {{name: web}}\nspec: {{priorityClassName: urgent, "
           f"{CONTAINERS}}}\n")
    path = tmp_path / "s.yaml"
    path.write_text("---\n".join([nodes(), pod]))
    assert main(["simulate", "-f", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("error:") == 1
    assert all(f in err for f in (str(path), "Pod/web", "spec.priorityClassName",
                                  'pods "web" is forbidden: no PriorityClass with name urgent was found')), err


def test_indexed_job_names_free_indexes(tmp_path):
    job = workload("Job", "train", "parallelism: 2, completions: 4, completionMode: Indexed", api="batch/v1")
    done = owned_pod("train-0-abcde", "Job", "train", phase="Succeeded").replace(
        "labels: {app: train}", "labels: {app: train, batch.kubernetes.io/job-completion-index: '0'}")
    scenario = load(tmp_path, nodes(), job, done)
    created = [p for p in scenario.pods if p.created_by]
    assert [re.sub(f"-{SUFFIX}$", "", p.name) for p in created] == ["train-1", "train-2"]
    assert [p.raw["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] for p in created] == ["1", "2"]
    assert [p.labels.get("batch.kubernetes.io/job-completion-index") for p in created] == ["1", "2"]


# Kueue's site/static/examples/jobs/sample-job.yaml (kubernetes-sigs/kueue), with the `spec.managedBy` MultiKueue's
# defaulting webhook writes on the management cluster (site/content/en/docs/concepts/multikueue.md).
KUEUE_SAMPLE_JOB = """apiVersion: batch/v1
kind: Job
metadata:
  generateName: sample-job-
  namespace: default
  labels:
    kueue.x-k8s.io/queue-name: user-queue
spec:
  parallelism: 3
  completions: 3
{managed_by}  template:
    spec:
      containers:
      - name: dummy-job
        image: registry.k8s.io/e2e-test-images/agnhost:2.53
        command: [ "/bin/sh" ]
        args: [ "-c", "sleep 60" ]
        resources:
          requests:
            cpu: "1"
            memory: "200Mi"
      restartPolicy: Never
"""


@pytest.mark.parametrize(("managed_by", "pods"), [
    ("", 3),  # the Job controller's own: min(parallelism 3, completions 3) pods
    ("  managedBy: kubernetes.io/job-controller\n", 3),  # batch.JobControllerName: still the Job controller's
    ("  managedBy: kueue.x-k8s.io/multikueue\n", 0),  # managedByExternalController: "Skip syncing the job"
])
def test_a_job_managed_by_another_controller_gets_no_pod(tmp_path, managed_by, pods):
    """pkg/controller/job syncJob returns at once for a Job whose spec.managedBy names another controller
    (JobManagedBy: beta and on in v1.34, GA from v1.35): MultiKueue's Jobs run in a worker cluster, and the
    management cluster's kube-scheduler never sees their pods."""
    path = tmp_path / "job.yaml"
    path.write_text(nodes() + "---\n" + KUEUE_SAMPLE_JOB.format(managed_by=managed_by))
    scenario = load_scenario([path])
    assert len(scenario.pods) == pods
    said = [w for w in scenario.warnings if "spec.managedBy is 'kueue.x-k8s.io/multikueue'" in w]
    assert len(said) == (pods == 0)


@pytest.mark.parametrize(("value", "message"), [
    ("multikueue", 'spec.managedBy: Invalid value: "multikueue": must be a domain-prefixed path (such as '
                   '"acme.io/foo")'),
    ("Example.com/x", 'spec.managedBy: Invalid value: "Example.com": a lowercase RFC 1123 subdomain must consist'),
    ("example.com/a b", 'spec.managedBy: Invalid value: "a b": Invalid path (regex used for validation is'),
    ("example.com/" + "x" * 60, "spec.managedBy: Too long: may not be more than 63 bytes"),
])
def test_a_job_managed_by_an_invalid_name_is_refused_with_the_api_servers_words(tmp_path, value, message):
    """validateJobSpec: IsDomainPrefixedPath and at most 63 characters (pkg/apis/batch/validation, its test table's
    "spec.managedBy: Too long" case)."""
    path = tmp_path / "job.yaml"
    path.write_text(nodes() + "---\n" + KUEUE_SAMPLE_JOB.format(managed_by=f"  managedBy: {value!r}\n"))
    with pytest.raises(InputError) as refused:
        load_scenario([path])
    assert message in str(refused.value)
