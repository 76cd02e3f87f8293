"""Workload-aware scheduling input per Kubernetes version: what each version's API server serves and refuses
(`podgroups.prepare_groups`), the objects' strict decoding and validation messages (`manifests/podgroups.py`), the
feature gates' dependencies, and the bad inputs of issue 42 (a missing PodGroup, minCount above the pods, a
PodGroup of another namespace, pods of one group on two schedulers or priorities). Expectations are derived by hand
from the sources named in each test, not from kubefit's output.
"""

from __future__ import annotations

import json

import pytest
import yaml

from tests_support import run_json

GATES_36 = "GenericWorkload=true,GangScheduling=true"


def _node(name: str, cpu: str = "4") -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


def _pod(name: str, group: str | None = None, *, cpu: str = "1", ns: str = "default", scheduler: str | None = None,
         priority: int | None = None, ref: dict | None = None) -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]}
    if group is not None:
        spec["schedulingGroup"] = {"podGroupName": group}
    if ref is not None:
        spec["workloadRef"] = ref
    if scheduler is not None:
        spec["schedulerName"] = scheduler
    if priority is not None:
        spec["priority"] = priority
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns}, "spec": spec}


def _group(name: str, min_count: int | None = 2, *, version: str = "scheduling.k8s.io/v1alpha2", ns: str = "default",
           **spec) -> dict:
    policy = {"basic": {}} if min_count is None else {"gang": {"minCount": min_count}}
    return {"apiVersion": version, "kind": "PodGroup", "metadata": {"name": name, "namespace": ns},
            "spec": {"schedulingPolicy": policy, **spec}}


def _run(tmp_path, capsys, docs, *args):
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return run_json(capsys, "simulate", "-f", str(path), "--tie-break", "first", *args)


def _pods(out: dict) -> dict:
    return {s["pod"]: s for s in out["steps"] if not s.get("retried")}


# --------------------------------------------------------------------------- served API versions, per version

@pytest.mark.parametrize(("version", "api", "kind", "words"), [
    # v1.37 serves Workload and PodGroup as v1beta1 (kubernetes#140184: "Remove all v1alpha2 objects ... before
    # upgrading"), v1.36 as v1alpha2 only (k8s.io/api v0.36.3 has no scheduling/v1alpha1), v1.35 has no PodGroup
    ("1.37", "scheduling.k8s.io/v1alpha2", "PodGroup", "Kubernetes 1.37 serves PodGroup as scheduling.k8s.io/v1beta1"),
    ("1.36", "scheduling.k8s.io/v1alpha1", "Workload", "Kubernetes 1.36 serves Workload as scheduling.k8s.io/v1alpha2"),
    ("1.35", "scheduling.k8s.io/v1alpha2", "PodGroup", "Kubernetes 1.35 has no PodGroup"),
])
def test_api_version_not_served(tmp_path, capsys, version, api, kind, words):
    obj = _group("pg", version=api) if kind == "PodGroup" else {
        "apiVersion": api, "kind": "Workload", "metadata": {"name": "wl"},
        "spec": {"podGroups": [{"name": "main", "policy": {"gang": {"minCount": 1}}}]}}
    rc, _out, err = _run(tmp_path, capsys, [obj, _node("n1")], "--kube-version", version,
                         "--feature-gates", "GenericWorkload=true")
    assert rc == 2
    assert f'no matches for kind "{kind}" in version "{api}"' in err and words in err
    assert f"{kind}/" in err and "Traceback" not in err


@pytest.mark.parametrize(("version", "field", "pod"), [
    ("1.35", "schedulingGroup", _pod("p", "pg")),  # core/v1 of v1.35.4 has workloadRef, no schedulingGroup
    ("1.36", "workloadRef", _pod("p", ref={"name": "wl", "podGroup": "main"})),  # tombstoned in v1.36 core/v1
])
def test_pod_reference_of_the_other_version_is_an_unknown_field(tmp_path, capsys, version, field, pod):
    rc, _out, err = _run(tmp_path, capsys, [_node("n1"), pod], "--kube-version", version)
    assert rc == 2
    assert f"spec.{field}" in err and f"unknown field '{field}'" in err


def test_gates_off_objects_not_created_and_field_dropped(tmp_path, capsys):
    """GenericWorkload off (its default in v1.36): the API server serves no PodGroup (not created) and drops the
    pods' spec.schedulingGroup (a disabled field): the pods are scheduled one by one, each on its own."""
    docs = [_group("pg", 3), _node("n1", "2"), _pod("a", "pg"), _pod("b", "pg"), _pod("c", "pg")]
    rc, out, _err = _run(tmp_path, capsys, docs, "--kube-version", "1.36")
    assert rc == 0
    assert [s["node"] for s in out["steps"]] == ["n1", "n1", None]  # two fit: no gang holds them back
    assert "podGroups" not in out and "cycle" not in out["steps"][0]
    assert any("PodGroup/pg: not served by kube-apiserver v1.36.3 with the GenericWorkload feature gate off" in w
               for w in out["warnings"])
    assert any("spec.schedulingGroup dropped from 3 pod(s)" in w for w in out["warnings"])


@pytest.mark.parametrize(("gates", "message"), [
    # defaultKubernetesFeatureGateDependencies of v1.36.3 kube_features.go; featureGate.Set's message
    ("GangScheduling=true", "GangScheduling is enabled, but depends on features that are disabled: [GenericWorkload]"),
    ("GenericWorkload=true,WorkloadAwarePreemption=true",
     "WorkloadAwarePreemption is enabled, but depends on features that are disabled: [GangScheduling]"),
    ("TopologyAwareWorkloadScheduling=true",
     "TopologyAwareWorkloadScheduling is enabled, but depends on features that are disabled: [GenericWorkload]"),
])
def test_gate_dependencies(tmp_path, capsys, gates, message):
    rc, _out, err = _run(tmp_path, capsys, [_node("n1")], "--kube-version", "1.36", "--feature-gates", gates)
    assert rc == 2 and message in err


def test_gates_removed_in_1_37(tmp_path, capsys):
    """kubernetes#139520 removed GangScheduling and WorkloadAwarePreemption in v1.37: unknown there."""
    rc, _out, err = _run(tmp_path, capsys, [_node("n1")], "--kube-version", "1.37", "--feature-gates",
                         "GangScheduling=true")
    assert rc == 2 and "unrecognized feature gate: GangScheduling" in err


# --------------------------------------------------------------------------- strict decoding, validation

@pytest.mark.parametrize(("spec", "field", "words"), [
    ({"schedulingPolicy": {"gang": {"minCount": 2}, "basic": {}}}, "spec.schedulingPolicy",
     "exactly one of `basic`, `gang` is required, but multiple fields are set"),
    ({"schedulingPolicy": {}}, "spec.schedulingPolicy", "must specify one of: `basic`, `gang`"),
    ({"schedulingPolicy": {"gang": {}}}, "spec.schedulingPolicy.gang.minCount", "Required value"),
    ({"schedulingPolicy": {"gang": {"minCount": -1}}}, "spec.schedulingPolicy.gang.minCount",
     "Invalid value: -1: must be greater than zero"),
    ({"schedulingPolicy": {"gang": {"minCount": 2, "maxCount": 3}}}, "spec.schedulingPolicy.gang.maxCount",
     "unknown field 'maxCount'"),
    ({"schedulingPolicy": {"basic": {}}, "disruptionMode": "Node"}, "spec.disruptionMode",
     'Unsupported value: "Node": supported values: "Pod", "PodGroup"'),
    ({"schedulingPolicy": {"basic": {}}, "schedulingConstraints": {"topology": [{"key": "a"}, {"key": "b"}]}},
     "spec.schedulingConstraints.topology", "Too many: 2: must have at most 1 items"),
    ({"schedulingPolicy": {"basic": {}}, "podGroupTemplateRef": {"workload": {"workloadName": "wl"}}},
     "spec.podGroupTemplateRef.workload.podGroupTemplateName", "Required value"),
])
def test_pod_group_validation(tmp_path, capsys, spec, field, words):
    """`ValidatePodGroup` (pkg/apis/scheduling/validation) and the v1alpha2 types' declarative tags: the field path
    and the API server's words; exit 2, never a traceback."""
    group = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": "pg"},
             "spec": spec}
    rc, _out, err = _run(tmp_path, capsys, [group, _node("n1")], "--kube-version", "1.36", "--feature-gates",
                         "GenericWorkload=true,WorkloadAwarePreemption=true,GangScheduling=true,"
                         "TopologyAwareWorkloadScheduling=true")
    assert rc == 2, err
    assert field in err and words in err and "PodGroup/pg" in err and "Traceback" not in err


def test_volcano_pod_group_is_a_custom_resource(tmp_path, capsys):
    """Volcano's and coscheduling's PodGroups are their own CRDs, not `scheduling.k8s.io`'s: read as Volcano's
    objects (named in a warning), never as the in-tree PodGroup; the pods are scheduled as before."""
    volcano = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": "pg"},
               "spec": {"minMember": 2}}
    rc, out, _err = _run(tmp_path, capsys, [volcano, _node("n1"), _pod("a")], "--kube-version", "1.36")
    assert rc == 0 and out["scheduled"] == 1
    assert any("PodGroup/pg (scheduling.volcano.sh/v1beta1): Volcano's objects, not kube-scheduler's" in w
               for w in out["warnings"])


# --------------------------------------------------------------------------- the issue's bad inputs

def test_pod_naming_a_missing_pod_group_waits(tmp_path, capsys):
    """GangScheduling's PreEnqueue (v1.36.3 gangscheduling.go): no PodGroup → UnschedulableAndUnresolvable
    `waiting for pods's pod group "x" to appear in scheduling queue`; the pod never gets a cycle."""
    rc, out, _err = _run(tmp_path, capsys, [_node("n1"), _pod("a", "nope")], "--kube-version", "1.36",
                         "--feature-gates", GATES_36)
    assert rc == 0
    step = _pods(out)["a"]
    assert step["node"] is None and step["preEnqueue"] == "GangScheduling"
    assert step["message"] == "waiting for pods's pod group \"nope\" to appear in scheduling queue"


def test_pod_group_of_another_namespace_is_not_found(tmp_path, capsys):
    """A pod names a PodGroup of its own namespace (the lister's PodGroups(namespace).Get)."""
    docs = [_group("pg", 1, ns="other"), _node("n1"), _pod("a", "pg")]
    rc, out, _err = _run(tmp_path, capsys, docs, "--kube-version", "1.36", "--feature-gates", GATES_36)
    assert rc == 0 and _pods(out)["a"]["message"].startswith("waiting for pods's pod group \"pg\"")


def test_min_count_above_the_pods_is_never_queued(tmp_path, capsys):
    """Fewer pods than minCount exist: PreEnqueue keeps them all out (`waiting for minCount pods from a gang to
    appear in scheduling queue`), the group's line says how many exist."""
    docs = [_group("pg", 5), _node("n1"), _pod("a", "pg"), _pod("b", "pg")]
    rc, out, _err = _run(tmp_path, capsys, docs, "--kube-version", "1.36", "--feature-gates", GATES_36)
    assert rc == 0 and out["scheduled"] == 0 and out["unschedulable"] == 2
    group = out["podGroups"][0]
    assert group["gatedBy"] == "GangScheduling" and "condition" not in group
    assert group["why"] == ("gang default/pg: 2 of minCount 5 pods exist: never queued (waiting for minCount pods "
                            "from a gang to appear in scheduling queue)")


def test_pods_of_one_group_on_two_schedulers(tmp_path, capsys):
    """`frameworkForPodGroup`: every pod of the group fails with the error naming both scheduler names (`got: %q and
    %q`, the differing pod's name first): b completes minCount 2, so the cycle takes b ("other") then a."""
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
              "profiles": [{"schedulerName": "default-scheduler"}, {"schedulerName": "other"}]}
    docs = [config, _group("pg", 2), _node("n1"), _pod("a", "pg"), _pod("b", "pg", scheduler="other")]
    rc, out, _err = _run(tmp_path, capsys, docs, "--kube-version", "1.36", "--feature-gates", GATES_36)
    assert rc == 0 and out["scheduled"] == 0
    for step in _pods(out).values():
        assert step["reason"] == "SchedulerError"
        assert step["message"] == ('all pods in a single pod group should have the same .spec.schedulerName set, '
                                   'got: "default-scheduler" and "other"')


def test_pods_of_one_group_with_different_priorities(tmp_path, capsys):
    """v1.36 takes a group's pods by priority in its cycle (`podGroupInfoForPod`); kubefit says they differ."""
    docs = [_group("pg", 2), _node("n1", "1"), _pod("low", "pg", priority=1), _pod("high", "pg", priority=10)]
    rc, out, _err = _run(tmp_path, capsys, docs, "--kube-version", "1.36", "--feature-gates", GATES_36,
                         "--no-admission")
    assert rc == 0
    assert any("pod group default/pg: its pods have different priorities (1, 10)" in w for w in out["warnings"])
    assert _pods(out)["high"]["message"].startswith("pod group is unschedulable, waiting for minCount")  # first in


def test_basic_group_binds_what_fits_in_one_cycle(tmp_path, capsys):
    """A `basic` group is feasible from its first pod (no Permit wait): what fits binds in one cycle."""
    docs = [_group("pg", None), _node("n1", "2"), *[_pod(f"p{i}", "pg") for i in range(3)]]
    rc, out, _err = _run(tmp_path, capsys, docs, "--kube-version", "1.36", "--feature-gates", GATES_36)
    assert rc == 0 and out["scheduled"] == 2
    assert {s["cycle"] for s in out["steps"] if s["node"]} == {1}
    assert out["podGroups"][0]["condition"]["status"] == "True"


def test_json_group_record(tmp_path, capsys):
    """`-o json`: per group its policy, minCount, pods, bound, pending, nodes, cycles, condition and why."""
    docs = [_group("pg", 3), _node("n1", "2"), *[_pod(f"p{i}", "pg") for i in range(3)]]
    rc, out, _err = _run(tmp_path, capsys, docs, "--kube-version", "1.36", "--feature-gates", GATES_36)
    assert rc == 0
    assert out["podGroups"] == [{
        "namespace": "default", "name": "pg", "policy": "gang", "minCount": 3, "pods": 3, "bound": 0, "pending": 3,
        "nodes": [], "cycles": 1,
        "condition": {"type": "PodGroupScheduled", "status": "False", "reason": "Unschedulable",
                      "message": "pod group is unschedulable"},
        "why": "gang default/pg: 2 of minCount 3 fit: 1 nodes Insufficient cpu"}]
    assert json.dumps(out)  # (serializable)


@pytest.mark.parametrize(("doc", "version", "field", "words"), [
    # v1.36's `podGroupTemplateRef` is a union of one member (`+k8s:union`, ValidatePodGroup's test "empty
    # podGroupTemplateRef": Invalid, value "", origin union; apimachinery `validate.Union`'s words)
    ({"kind": "PodGroup", "spec": {"schedulingPolicy": {"basic": {}}, "podGroupTemplateRef": {}}}, "1.36",
     "spec.podGroupTemplateRef", 'Invalid value: "": must specify one of: `workload`'),
    # v1.37's v1beta1 disruptionMode union (`single`, `all`): several set name them, unquoted, in braces
    ({"kind": "PodGroup", "spec": {"schedulingPolicy": {"basic": {}}, "disruptionMode": {"single": {}, "all": {}}}},
     "1.37", "spec.disruptionMode", 'Invalid value: "{single, all}": must specify exactly one of: `single`, `all`'),
    ({"kind": "PodGroup", "spec": {"schedulingPolicy": {"basic": {}}, "disruptionMode": {}}},
     "1.37", "spec.disruptionMode", 'Invalid value: "": must specify one of: `single`, `all`'),
    # v1.37's Workload: exactly one of its two lists (the 1.37 validation test "empty compositePodGroupTemplates")
    ({"kind": "Workload", "spec": {}}, "1.37", "spec",
     'Invalid value: "": must specify one of: `podGroupTemplates`, `compositePodGroupTemplates`'),
    ({"kind": "Workload", "spec": {"podGroupTemplates": [{"name": "a", "schedulingPolicy": {"basic": {}}}],
                                   "compositePodGroupTemplates": [{"name": "c", "schedulingPolicy": {"basic": {}}}]}},
     "1.37", "spec", 'Invalid value: "{podGroupTemplates, compositePodGroupTemplates}": must specify exactly one of: '
                     '`podGroupTemplates`, `compositePodGroupTemplates`'),
])
def test_union_messages(tmp_path, capsys, doc, version, field, words):
    """The declarative unions' words (apimachinery `pkg/api/validate/union.go`: `must specify one of: ...` for none,
    `{a, b}` and `must specify exactly one of: ...` for several), with the file and object; exit 2."""
    api = "scheduling.k8s.io/v1alpha2" if version == "1.36" else "scheduling.k8s.io/v1beta1"
    body = {"apiVersion": api, "metadata": {"name": "x"}, **doc}
    gates = GATES_36 if version == "1.36" else "GenericWorkload=true"
    rc, _out, err = _run(tmp_path, capsys, [body, _node("n1")], "--kube-version", version, "--feature-gates", gates)
    assert rc == 2, err
    assert f"{field}: {words}" in err and f"{doc['kind']}/x" in err and "Traceback" not in err


def test_the_job_controllers_workload_is_said_not_made(tmp_path, capsys):
    """WorkloadWithJob (v1.36+, alpha): the Job controller would make a Workload and a PodGroup for the Job; kubefit
    does not, and says so once; with the gate off nothing is said."""
    import yaml

    from tests_support import run_json

    docs = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
             "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}},
            {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train"},
             "spec": {"parallelism": 2, "template": {"spec": {"restartPolicy": "Never", "containers": [
                 {"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}}}]
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    said = "the Job controller makes a Workload and a PodGroup"
    _, on, _ = run_json(capsys, "simulate", "-f", str(path), "--kube-version", "1.36", "--feature-gates",
                        "GenericWorkload=true,WorkloadWithJob=true")
    _, off, _ = run_json(capsys, "simulate", "-f", str(path), "--kube-version", "1.36")
    assert sum(said in w for w in on["warnings"]) == 1 and not any(said in w for w in off["warnings"])
