"""Coscheduling's and Volcano's PodGroups (`manifests/schedulergangs.py`) read as their own schedulers' objects, and
`--gangs-as-workloads` (`scheduler/gangtranslation.py`) translating them into the in-tree objects of each version.

The cluster of most cases: 3 nodes of 1 GPU each, a gang of 4 one-GPU pods (minMember 4). Derivations:
- kube-scheduler ignores the CRDs, so pod by pod the first 3 pods take the 3 GPUs and the 4th is pending
  (Insufficient nvidia.com/gpu): 3 bind;
- translated, the gang's minCount is 4 and only 3 of its pods can fit, so the group cycle (v1.36, v1.37) or Permit
  (v1.35) binds none: 0 bind;
- the same with 4 nodes: all 4 fit, minCount met, 4 bind (the translation does not merely break scheduling).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gangs_support import GATES, gpu_node, gpu_pod, pod_group, run, write
from tests_support import run_json

COSCHEDULING = "scheduling.x-k8s.io/v1alpha1"
VOLCANO = "scheduling.volcano.sh/v1beta1"
GATES_BY_VERSION = {"1.35": GATES, "1.36": GATES, "1.37": "GenericWorkload=true"}


def other_group(api: str, name: str = "train", min_member: int | None = 4, **spec) -> dict:
    body = dict(spec)
    if min_member is not None:
        body["minMember"] = min_member
    return {"apiVersion": api, "kind": "PodGroup", "metadata": {"name": name, "namespace": "ml"}, "spec": body}


def member(api: str, name: str, group: str = "train", **kwargs) -> dict:
    """A one-GPU pod joining `group` as its scheduler's pods do: coscheduling's label, Volcano's annotation."""
    pod = gpu_pod(name, **kwargs)
    if api == COSCHEDULING:
        pod["metadata"]["labels"] = {"scheduling.x-k8s.io/pod-group": group}
    else:
        pod["metadata"]["annotations"] = {"scheduling.k8s.io/group-name": group}
    return pod


def scenario(api: str, nodes: int = 3, pods: int = 4, min_member: int | None = 4, **spec) -> list[dict]:
    return [*(gpu_node(f"n{i}", 1) for i in range(nodes)), other_group(api, min_member=min_member, **spec),
            *(member(api, f"w-{i}") for i in range(pods))]


def simulate(tmp_path, capsys, docs, *args) -> dict:
    rc, out, err = run(tmp_path, capsys, "simulate", docs, "--tie-break", "first", *args)
    assert rc == 0, err
    return out


def translated(version: str) -> tuple[str, ...]:
    return "--kube-version", version, "--feature-gates", GATES_BY_VERSION[version], "--gangs-as-workloads"


# --------------------------------------------------------------------------- what they are

@pytest.mark.parametrize("api, scheduler, joined_by", [
    (COSCHEDULING, "coscheduling", "label scheduling.x-k8s.io/pod-group"),
    (VOLCANO, "Volcano", "annotation scheduling.k8s.io/group-name"),
])
@pytest.mark.parametrize("version", ["1.34", "1.36"])
def test_kube_scheduler_ignores_them_pod_by_pod(tmp_path, capsys, api, scheduler, joined_by, version):
    """Without the option, even with the in-tree gates on: 3 of 4 bind (pod by pod), and the warning names the
    other scheduler and how its pods join."""
    gates = ("--feature-gates", GATES) if version == "1.36" else ()
    out = simulate(tmp_path, capsys, scenario(api), "--kube-version", version, *gates)
    assert out["scheduled"] == 3 and out["unschedulable"] == 1
    note = next(w for w in out["warnings"] if "PodGroup/train" in w)
    assert f"({api}): {scheduler}'s objects, not kube-scheduler's" in note
    assert f"of the 4 pending pod(s) joining them ({joined_by}), 0 name a schedulerName no profile serves" in note
    assert "4 are scheduled one by one, not as gangs" in note


def test_their_own_scheduler_name_leaves_them_pending(tmp_path, capsys):
    """`schedulerName: volcano`: Volcano's pods; no profile serves it, so kube-scheduler never takes them."""
    docs = scenario(VOLCANO)
    for doc in docs[4:]:
        doc["spec"]["schedulerName"] = "volcano"
    out = simulate(tmp_path, capsys, docs, "--kube-version", "1.37")
    assert out["scheduled"] == 0
    assert any("4 name a schedulerName no profile serves (Volcano's scheduler's: pending here) and 0 are scheduled "
               "one by one" in w for w in out["warnings"])
    assert any("name a schedulerName no profile has" in w for w in out["warnings"])


def test_only_volcanos_scheduler_annotation_joins(tmp_path, capsys):
    """Volcano's scheduler reads `scheduling.k8s.io/group-name` only (job_info.go getJobID); a pod annotated
    `scheduling.volcano.sh/group-name` alone is no member: translated, the gang of 2 has 1 member, never placed,
    and the other pod is scheduled alone."""
    docs = [gpu_node("n0", 1), gpu_node("n1", 1), other_group(VOLCANO, min_member=2), member(VOLCANO, "a"),
            gpu_pod("b")]
    docs[-1]["metadata"]["annotations"] = {"scheduling.volcano.sh/group-name": "train"}
    out = simulate(tmp_path, capsys, docs, *translated("1.37"))
    nodes = {s["pod"]: s["node"] for s in out["steps"] if not s.get("retried")}
    assert nodes["a"] is None and nodes["b"] is not None


# --------------------------------------------------------------------------- --gangs-as-workloads

@pytest.mark.parametrize("api", [COSCHEDULING, VOLCANO])
@pytest.mark.parametrize("version", ["1.35", "1.36", "1.37"])
def test_translated_gang_of_4_where_3_fit_binds_none(tmp_path, capsys, api, version):
    out = simulate(tmp_path, capsys, scenario(api), *translated(version))
    assert out["scheduled"] == 0
    api_version = {"1.35": "v1alpha1", "1.36": "v1alpha2", "1.37": "v1beta1"}[version]
    kinds = "Workload" if version == "1.35" else "Workload and PodGroup"
    assert (f"--gangs-as-workloads: 1 PodGroup(s) of other gang schedulers translated into Kubernetes {version}'s "
            f"scheduling.k8s.io/{api_version} {kinds} (minMember → gang minCount), joined by 4 pending pod(s)"
            in out["warnings"])


@pytest.mark.parametrize("api", [COSCHEDULING, VOLCANO])
@pytest.mark.parametrize("version", ["1.35", "1.36", "1.37"])
def test_translated_gang_that_fits_binds_whole(tmp_path, capsys, api, version):
    out = simulate(tmp_path, capsys, scenario(api, nodes=4), *translated(version))
    assert out["scheduled"] == 4


@pytest.mark.parametrize("version", ["1.35", "1.36", "1.37"])
def test_bound_members_count_towards_the_quorum(tmp_path, capsys, version):
    """A gang of 4 (minMember 4) whose w-0 and w-1 run on n0 and n1, w-2 and w-3 pending, n2 and n3 free: the bound
    members are translated too, so the group has its 4 pods (quorum met), 2 running and 2 that fit: both bind. Were
    only the pending ones translated, 2 pods could never reach minCount 4 and none would bind."""
    docs = [*(gpu_node(f"n{i}", 1) for i in range(4)), other_group(VOLCANO, min_member=4),
            member(VOLCANO, "w-0", node="n0"), member(VOLCANO, "w-1", node="n1"), member(VOLCANO, "w-2"),
            member(VOLCANO, "w-3")]
    out = simulate(tmp_path, capsys, docs, *translated(version))
    assert out["scheduled"] == 2 and {s["node"] for s in out["steps"]} == {"n2", "n3"}


def test_the_pod_group_takes_its_members_priority(tmp_path, capsys):
    """v1.37's group cycle refuses a group whose pods' priority is not the PodGroup's; the translated PodGroup
    carries its members' priority (1000), as a controller making it for them would, so the gang of 4 on 4 GPUs
    binds. Members that disagree (1000 and 0) get upstream's refusal for every pod."""
    docs = scenario(VOLCANO, nodes=4)
    for doc in docs[5:]:
        doc["spec"]["priority"] = 1000
    out = simulate(tmp_path, capsys, docs, "--no-admission", *translated("1.37"))
    assert out["scheduled"] == 4
    docs[5]["spec"]["priority"] = 0
    out = simulate(tmp_path, capsys, docs, "--no-admission", *translated("1.37"))
    assert out["scheduled"] == 0
    # (the PodGroup has no priority then: 0; the first pod of the cycle has 1000)
    assert {s["message"] for s in out["steps"]} == {"all pods in a single pod group should have the same priority as "
                                                   "the pod group's priority, got 1000 and 0"}


def test_the_gang_cycle_says_why(tmp_path, capsys):
    """v1.36's group cycle: 3 of minCount 4 fit, the 4th finds 3 nodes without a free GPU."""
    out = simulate(tmp_path, capsys, scenario(VOLCANO), *translated("1.36"))
    messages = {s.get("message") for s in out["steps"]}
    assert any("3 nodes" in m and "Insufficient nvidia.com/gpu" in m for m in messages if m)


@pytest.mark.parametrize("min_member", [0, None])
def test_min_member_0_is_the_basic_policy(tmp_path, capsys, min_member):
    """Volcano allows minMember 0 (and absent): no quorum, the `basic` policy, its pods one by one: 3 of 4 bind."""
    out = simulate(tmp_path, capsys, scenario(VOLCANO, min_member=min_member), *translated("1.36"))
    assert out["scheduled"] == 3
    assert [(g["name"], g["policy"], g["bound"]) for g in out["podGroups"]] == [("train", "basic", 3)]
    assert any("PodGroup/train (Volcano): does not translate: minMember 0 (no quorum: the basic policy" in w
               for w in out["warnings"])


def test_what_does_not_translate_is_said(tmp_path, capsys):
    spec = {"queue": "research", "priorityClassName": "high", "minResources": {"nvidia.com/gpu": "4"},
            "minTaskMember": {"worker": 4}, "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
            "subGroupPolicy": [{"name": "w", "subGroupSize": 2}]}
    out = simulate(tmp_path, capsys, scenario(VOLCANO, **spec), *translated("1.37"))
    note = next(w for w in out["warnings"] if "does not translate" in w)
    for field in ("minTaskMember (per-task minimums)", "queue (Volcano's queues and their quotas)",
                  "priorityClassName (the pods keep their own priority, and the PodGroup takes theirs)",
                  "minResources (kube-scheduler checks no "
                  "minimum of resources for a group)", "networkTopology (Volcano's HyperNode tiers)",
                  "subGroupPolicy (Volcano's sub-group gangs)"):
        assert field in note
    cosched = simulate(tmp_path, capsys, scenario(COSCHEDULING, scheduleTimeoutSeconds=60), *translated("1.36"))
    assert any("PodGroup/train (coscheduling): does not translate: scheduleTimeoutSeconds" in w
               for w in cosched["warnings"])
    plain = simulate(tmp_path, capsys, scenario(COSCHEDULING), *translated("1.36"))
    assert not any("does not translate" in w for w in plain["warnings"])


def test_members_of_their_scheduler_are_handed_to_the_profile(tmp_path, capsys):
    docs = scenario(VOLCANO, nodes=4)
    for doc in docs[5:]:
        doc["spec"]["schedulerName"] = "volcano"
    out = simulate(tmp_path, capsys, docs, *translated("1.37"))
    assert out["scheduled"] == 4
    assert any("4 of them named schedulerName 'volcano' (no profile's), scheduled by profile 'default-scheduler' "
               "instead" in w
               for w in out["warnings"])


def test_gates_off_translates_nothing_and_says_so(tmp_path, capsys):
    out = simulate(tmp_path, capsys, scenario(VOLCANO), "--kube-version", "1.37", "--gangs-as-workloads")
    assert out["scheduled"] == 3
    assert ("--gangs-as-workloads: Kubernetes 1.37 schedules no Workload or PodGroup with the GenericWorkload feature "
            "gate off (--feature-gates GenericWorkload=true): the 1 PodGroup(s) are not translated and their 4 pending "
            "pod(s) are scheduled one by one by profile 'default-scheduler'") in out["warnings"]


def test_nothing_to_translate_is_said(tmp_path, capsys):
    out = simulate(tmp_path, capsys, [gpu_node("n0", 1), gpu_pod("a")], *translated("1.37"))
    assert out["scheduled"] == 1 and any("has no coscheduling" in w for w in out["warnings"])


def test_an_in_tree_group_of_the_same_name_is_refused(tmp_path, capsys):
    """The API server would refuse to create the translated PodGroup: AlreadyExists (exit 2)."""
    rc, _out, err = run(tmp_path, capsys, "simulate", [*scenario(VOLCANO), pod_group("train", 2)], *translated("1.36"))
    assert rc == 2 and 'PodGroup.scheduling.k8s.io "train" already exists' in err and "Traceback" not in err


def test_translated_again_for_each_version(tmp_path, capsys):
    """One scenario prepared for v1.35 then v1.37 (as `--compare-versions` and `check` do): each version gets its
    own objects and references, the other's forgotten."""
    from kubefit.k8s.version import resolve
    from kubefit.manifests.scenario import load_scenario
    from kubefit.scheduler.scenario import prepare
    from kubefit.scheduler.simulate import simulate as run_simulation

    loaded = load_scenario([write(tmp_path, scenario(COSCHEDULING, nodes=4))])
    for version, gates in (("1.35", GATES), ("1.37", "GenericWorkload=true"), ("1.35", GATES)):
        prepared = prepare(loaded, version=resolve(version, gates), gangs_as_workloads=True)
        workloads = loaded.objects.of("Workload")
        api = "v1alpha1" if version == "1.35" else "v1beta1"
        assert [w.api_version for w in workloads] == [f"scheduling.k8s.io/{api}"]
        assert len(loaded.objects.of("PodGroup")) == (0 if version == "1.35" else 1)
        result = run_simulation(prepared.state, prepared.config, loaded.pending_pods, tie_break="first", seed=0)
        assert sum(1 for s in result.steps if s.node is not None) == 4


# --------------------------------------------------------------------------- the other verbs

def test_capacity_counts_copies_of_the_translated_gang(tmp_path, capsys):
    """7 one-GPU nodes, a Volcano gang of 3: 2 whole copies fit (6 GPUs), a third would find 1."""
    docs = [*(gpu_node(f"n{i}", 1) for i in range(7)), other_group(VOLCANO, min_member=3),
            *(member(VOLCANO, f"w-{i}") for i in range(3))]
    rc, out, err = run(tmp_path, capsys, "capacity", docs, "--pod", "podgroup/ml/train", *translated("1.36"))
    assert rc == 0, err
    assert out["count"] == 2 and out["podGroup"]["minCount"] == 3


def test_check_gang_placed_on_a_translated_gang(tmp_path, capsys):
    rc, out, err = run(tmp_path, capsys, "check", scenario(COSCHEDULING), *translated("1.36"),
                       "--gang-placed", "ml/train")
    assert rc == 1, err
    assert out["assertions"][0]["message"] == "simulate binds 0 of pod group ml/train's 4 pod(s)"
    rc, out, err = run(tmp_path, capsys, "check", scenario(COSCHEDULING, nodes=4), *translated("1.36"),
                       "--gang-placed", "ml/train")
    assert rc == 0, err


def test_plan_adds_the_node_the_gang_needs(tmp_path, capsys):
    template = tmp_path / "gpu.yaml"
    template.write_text(yaml.safe_dump(gpu_node("gpu", 1)))
    rc, out, err = run(tmp_path, capsys, "plan", scenario(VOLCANO), "--node-template", str(template),
                       *translated("1.37"))
    assert rc == 0, err
    # 3 GPUs for a gang of 4: one more 1-GPU node and the whole gang binds
    assert out["nodesAdded"] == ["gpu-1"] and out["scheduled"] == 4
    assert any("--gangs-as-workloads" in w for w in out["warnings"])


def test_consolidate_reads_a_translated_gang(tmp_path, capsys):
    """A gang of 2 bound on n0 and n1 (1 GPU each), n2 empty: the bound members are translated too (0 pending), the
    empty node goes."""
    docs = [*(gpu_node(f"n{i}", 1) for i in range(3)), other_group(VOLCANO, min_member=2),
            member(VOLCANO, "w-0", node="n0"), member(VOLCANO, "w-1", node="n1")]
    rc, out, err = run(tmp_path, capsys, "consolidate", docs, *translated("1.37"))
    assert rc == 0, err
    assert out["removable"] == ["n2"]
    assert any("joined by 0 pending pod(s)" in w for w in out["warnings"])


def test_tune_judges_every_trial_with_the_translated_gang(tmp_path, capsys):
    """tune's objective (pending pods) on the 3-GPU cluster and the gang of 4: pod by pod every configuration binds 3
    and leaves 1 pending; translated, no configuration can place the whole gang, so all 4 stay pending in every
    trial (the configuration changes scores, not the 3 GPUs)."""
    args = ("--trials", "4", "--tie-break", "first", "--workers", "1", *translated("1.37")[:-1])
    rc, out, err = run(tmp_path, capsys, "tune", scenario(VOLCANO), *args)
    assert rc == 0, err
    assert set(out["baselines"].values()) == {1}
    rc, out, err = run(tmp_path, capsys, "tune", scenario(VOLCANO), *args, "--gangs-as-workloads")
    assert rc == 0, err
    assert set(out["baselines"].values()) == {4} and out["best"]["value"] == 4
    assert out["inputs"]["options"]["gangsAsWorkloads"] is True
    assert any("--gangs-as-workloads" in w for w in out["warnings"])


def test_rightsize_translates_today_and_the_right_sized_cluster(tmp_path, capsys):
    """rightsize (the example's VPAs, which control none of these pods): today, pod by pod, the 3 GPUs take 3 members
    and w-3 is pending; translated, the gang of 4 finds 3 GPUs and all 4 are pending today and after (their requests
    unchanged), so no GPU node holds a pod and consolidation keeps only what its lower bound needs."""
    vpa = str(Path(__file__).resolve().parents[2] / "examples" / "rightsize" / "vpa.yaml")
    args = ("-f", vpa, "--requests-from", "vpa", "--tie-break", "first", *translated("1.37")[:-1])
    rc, out, err = run(tmp_path, capsys, "rightsize", scenario(VOLCANO), *args)
    assert rc == 0, err
    assert out["today"]["pending"] == ["ml/w-3"] and out["nodesAfter"] == 3
    rc, out, err = run(tmp_path, capsys, "rightsize", scenario(VOLCANO), *args, "--gangs-as-workloads")
    assert rc == 0, err
    assert out["today"]["pending"] == [f"ml/w-{i}" for i in range(4)]
    assert out["after"]["pending"] == out["today"]["pending"]
    assert out["inputs"]["options"]["gangsAsWorkloads"] is True


# --------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("doc, field, words", [
    (other_group(COSCHEDULING, minMembers=3), "spec.minMembers", "unknown field 'minMembers'"),
    (other_group(COSCHEDULING, min_member=0), "spec.minMember",
     "Invalid value: 0: spec.minMember in body should be greater than or equal to 1"),
    (other_group(VOLCANO, min_member=-1), "spec.minMember",
     "Invalid value: -1: spec.minMember in body should be greater than or equal to 0"),
    (other_group(VOLCANO, min_member="4"), "spec.minMember", "must be an integer"),
    (other_group(VOLCANO, queue="Research"), "spec.queue",
     'Invalid value: "Research": spec.queue in body should match'),
    (other_group(VOLCANO, networkTopology={"mode": "strict"}), "spec.networkTopology.mode",
     'Unsupported value: "strict": supported values: "hard", "soft"'),
    (other_group(VOLCANO, subGroupPolicy=[{"subGroupSize": 0}]), "spec.subGroupPolicy[0].subGroupSize",
     "should be greater than or equal to 1"),
    (other_group(VOLCANO, subGroupPolicy=[{"size": 2}]), "spec.subGroupPolicy[0].size", "unknown field 'size'"),
    (other_group(COSCHEDULING, minResources={"cpu": "lots"}), "spec.minResources.cpu", "quantities must match"),
    ({**other_group(VOLCANO), "status": {"phase": "Gone"}}, "status.phase", 'Unsupported value: "Gone"'),
    ({**other_group(VOLCANO), "apiVersion": "scheduling.volcano.sh/v1alpha1"}, "apiVersion",
     'no matches for kind "PodGroup" in version "scheduling.volcano.sh/v1alpha1"'),
], ids=lambda v: v if isinstance(v, str) and v.startswith(("spec", "status", "api")) else "")
def test_bad_input_is_refused_with_the_field(tmp_path, capsys, doc, field, words):
    rc, _out, err = run(tmp_path, capsys, "simulate", [gpu_node("n0", 1), doc])
    assert rc == 2, err
    assert "s.yaml" in err and "PodGroup/train" in err and field in err and words in err and "Traceback" not in err


def test_a_bad_scheduler_gang_fails_every_verb_alike(tmp_path, capsys):
    rc, _out, err = run_json(capsys, "score", "-f", write(tmp_path, [gpu_node("n0", 1), gpu_pod("a"),
                                                                       other_group(COSCHEDULING, min_member=0)]))
    assert rc == 2 and "spec.minMember" in err


def test_compare_feature_gates_shows_what_gangs_change(tmp_path, capsys):
    """`--compare-feature-gates GenericWorkload=true` with the translation: off, the 4 members go one by one (3
    bind, one GPU each); on, the gang of 4 finds 3 GPUs and binds none."""
    rc, out, err = run(tmp_path, capsys, "simulate", scenario(VOLCANO), "--kube-version", "1.37",
                       "--gangs-as-workloads", "--compare-feature-gates", "GenericWorkload=true")
    assert rc == 0, err
    assert [c["scheduled"] for c in out["configurations"]] == [3, 0]
    runs = out["groupDifferences"][0]["runs"]
    assert [(r["bound"], r["asGroup"]) for r in runs.values()] == [(3, False), (0, True)]


def test_the_json_inputs_say_the_option(tmp_path, capsys):
    out = simulate(tmp_path, capsys, scenario(VOLCANO), *translated("1.37"))
    assert out["inputs"]["options"]["gangsAsWorkloads"] is True
    out = simulate(tmp_path, capsys, scenario(VOLCANO), "--kube-version", "1.37")
    assert "gangsAsWorkloads" not in out["inputs"]["options"]


@pytest.mark.parametrize("api", [COSCHEDULING, VOLCANO])
def test_a_json_list_snapshot_joins_alike(tmp_path, capsys, monkeypatch, api):
    """A snapshot's JSON List read by the stream (`KUBEFIT_STREAM=always`, its fast pod decoder): members found by
    their label or annotation all the same, the gang of 4 on 3 GPUs binding none."""
    import json

    monkeypatch.setenv("KUBEFIT_STREAM", "always")

    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": scenario(api)}))
    rc, out, err = run_json(capsys, "simulate", "-f", str(path), *translated("1.37"))
    assert rc == 0, err
    assert out["scheduled"] == 0 and "joined by 4 pending pod(s)" in out["warnings"][0]
