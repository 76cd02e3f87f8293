"""Every case of `golden/kube-scheduler-gang-v1.36/` (the real kube-scheduler v1.36.3 scheduling loop, pod groups
with GangScheduling, WorkloadAwarePreemption and TopologyAwareWorkloadScheduling, gates on and off) through
`kubefit simulate --kube-version 1.36` with the case's gates.

The case as a scenario (golden/kube-scheduler-gang-v1.36/README.md): a KubeSchedulerConfiguration of the default
profile with `percentageOfNodesToScore: 100`, then the PriorityClasses, Workloads, PodGroups, nodes, bound pods and
the queue (in creation order); `--feature-gates` the case's gates plus `SchedulerAsyncPreemption=false`;
`--no-admission` (pods as given: they carry their priority) and `--no-replace-victims` (no controller recreates a
victim). Ties go to the first node (`--tie-break first`): the reference runs kept only cases whose 8 runs agreed, and
each of them agrees with that rule.

Compared: each pod's outcome (node, or the PodScheduled reason and message, or `gatedBy` for a pod GangScheduling's
PreEnqueue kept out of the queue), the pods bound in each scheduling cycle, the victims, and each PodGroup's
PodGroupScheduled condition, bound pods and nodes. Pods of one group with identical spec and labels are
interchangeable (upstream hands them their nodes in Go map order): they are compared as a class, the multiset of
their outcomes, as the golden README says.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from kubefit.cli import main
from tests_support import golden_cases

CASES = golden_cases("kube-scheduler-gang-v1.36/cases.jsonl")


def _scenario(case: dict) -> dict:
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
              "percentageOfNodesToScore": 100, "profiles": [{"schedulerName": "default-scheduler"}]}
    items = [config, *(case.get("priorityClasses") or []), *(case.get("workloads") or []),
             *(case.get("podGroups") or []), *case["nodes"], *(case.get("pods") or []), *case["queue"]]
    return {"apiVersion": "v1", "kind": "List", "items": items}


def _gates(case: dict) -> str:
    gates = {**(case.get("featureGates") or {}), "SchedulerAsyncPreemption": False}
    return ",".join(f"{name}={str(value).lower()}" for name, value in gates.items())


def run_case(case: dict, tmp_path, capsys) -> dict:
    path = tmp_path / f"{case['id']}.json"
    path.write_text(json.dumps(_scenario(case)))
    capsys.readouterr()
    rc = main(["simulate", "-f", str(path), "--kube-version", "1.36", "--feature-gates", _gates(case),
               "--no-admission", "--no-replace-victims", "--tie-break", "first", "-o", "json"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return json.loads(out)


def _class_of(case: dict) -> dict[str, str]:
    """Pod name → its class: the pod's JSON without its name and uid (interchangeable pods share one)."""
    classes = {}
    for pod in case["queue"]:
        body = json.loads(json.dumps(pod))
        body["metadata"].pop("name", None)
        body["metadata"].pop("uid", None)
        classes[pod["metadata"]["name"]] = json.dumps(body, sort_keys=True)
    return classes


def _outcomes(result: dict) -> dict[str, dict]:
    """Each queued pod's final outcome in the golden vocabulary."""
    out: dict[str, dict] = {}
    for step in result["steps"]:
        if step.get("retried"):
            continue
        got: dict = {"node": step["node"]}
        if step["node"] is None:
            if step.get("preEnqueue") == "GangScheduling":
                got["gatedBy"] = "GangScheduling"
            else:
                got["reason"] = step.get("reason", "Unschedulable")
                got["message"] = step.get("message")
        out[step["pod"]] = got
    return out


def _expected(case: dict) -> dict[str, dict]:
    out = {}
    for name, want in case["expect"]["pods"].items():
        out[name] = {k: v for k, v in want.items() if k in ("node", "reason", "message", "gatedBy")}
    return out


def _by_class(outcomes: dict[str, dict], classes: dict[str, str]) -> Counter:
    return Counter((classes[name], json.dumps(o, sort_keys=True)) for name, o in outcomes.items())


def _bindings(result: dict, classes: dict[str, str]) -> list[Counter]:
    """The pods bound per scheduling cycle, in order (a pod group's cycle binds its pods together)."""
    cycles: list[tuple[object, list[str]]] = []
    for i, step in enumerate(result["steps"]):
        if step["node"] is None or step.get("retried"):
            continue
        key = ("group", step["cycle"]) if "cycle" in step else ("pod", i)
        if cycles and cycles[-1][0] == key:
            cycles[-1][1].append(step["pod"])
        else:
            cycles.append((key, [step["pod"]]))
    return [Counter(classes.get(p, p) for p in pods) for _key, pods in cycles]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case(case, tmp_path, capsys):
    expect = case["expect"]
    result = run_case(case, tmp_path, capsys)
    classes = _class_of(case)
    got = _outcomes(result)
    assert set(got) == set(expect["pods"])
    assert _by_class(got, classes) == _by_class(_expected(case), classes)
    assert _bindings(result, classes) == [Counter(classes.get(p, p) for p in cycle) for cycle in expect["bindings"]]
    victims = sorted(v.split("/", 1)[1] for step in result["steps"] for v in step.get("victims", ()))
    assert victims == expect["victims"]
    assert result["scheduled"] == expect["scheduled"]
    assert result["unschedulable"] == expect["pending"]
    groups = {g["name"]: g for g in result.get("podGroups", [])}
    for name, want in (expect.get("podGroups") or {}).items():
        group = groups[name]
        condition = group.get("condition")
        assert (condition or {}).get("status") == want.get("scheduled"), name
        if "scheduled" in want:
            assert condition["reason"] == want["reason"]
            assert condition.get("message", "") == want.get("message", "")
        assert group["bound"] == want["boundPods"]
        assert group["nodes"] == want["nodes"]
    if not expect.get("podGroups"):
        assert not result.get("podGroups")
