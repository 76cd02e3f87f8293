"""A golden kube-scheduler case as a kubefit scenario (golden/README.md, "As a kubefit scenario").

`case_config(case)` is the v1 KubeSchedulerConfiguration: one profile whose `plugins.multiPoint`
disables `*` and enables exactly the plugins of `pluginWeights` (with their weights) plus PrioritySort
and DefaultBinder, in the default profile's order, and whose `pluginConfig` holds `fitArgs`,
`balancedArgs` and each `pluginArgs` entry (in that order, only those given).
`case_scenario_docs(case)` adds the extra cluster objects of a `"profile": "default"` case (golden
README, "Extension: profile default"), the nodes, the bound pods and the pending pod(s).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from kubefit.scheduler.config import DEFAULT_MULTIPOINT, V1

DEFAULT_ORDER = tuple(name for name, _ in DEFAULT_MULTIPOINT)
DEFAULT_WEIGHTS = {"NodeResourcesFit": 1, "NodeResourcesBalancedAllocation": 1}  # absent pluginWeights


def case_plugin_weights(case: dict[str, Any]) -> dict[str, Any]:
    """The case's enabled plugins → weight (an absent map means both resource plugins, weight 1)."""
    weights = case.get("pluginWeights")
    return dict(DEFAULT_WEIGHTS if weights is None else weights)


# The extra objects of a `"profile": "default"` case, in the order they go into the scenario file.
EXTRA_OBJECT_FIELDS = ("namespaces", "services", "replicaSets", "statefulSets", "replicationControllers", "pvcs",
                       "pvs", "storageClasses", "csiNodes", "csiDrivers", "pdbs", "deviceClasses", "resourceSlices",
                       "resourceClaims")


def default_profile_config(case: dict[str, Any]) -> dict[str, Any]:
    """`"profile": "default"`: the default profile unchanged, every node scored, `pluginArgs` as pluginConfig."""
    profile: dict[str, Any] = {"schedulerName": "default-scheduler"}
    plugin_config = [{"name": name, "args": copy.deepcopy(args)} for name, args in (case.get("pluginArgs") or {}).items()]
    if plugin_config:
        profile["pluginConfig"] = plugin_config
    return {"apiVersion": V1, "kind": "KubeSchedulerConfiguration", "percentageOfNodesToScore": 100,
            "profiles": [profile]}


def case_config(case: dict[str, Any]) -> dict[str, Any]:
    """The v1 KubeSchedulerConfiguration body of a golden case."""
    if case.get("profile") == "default":
        return default_profile_config(case)
    weights = case_plugin_weights(case)
    unknown = set(weights) - set(DEFAULT_ORDER)
    if unknown:
        raise ValueError(f"{case.get('id')}: plugins outside the default profile: {sorted(unknown)}")
    enabled: list[dict[str, Any]] = [{"name": "PrioritySort"}]
    for name in DEFAULT_ORDER:
        if name in weights:
            entry: dict[str, Any] = {"name": name}
            if weights[name] is not None:
                entry["weight"] = weights[name]
            enabled.append(entry)
    enabled.append({"name": "DefaultBinder"})
    plugin_config = []
    if case.get("fitArgs") is not None:
        plugin_config.append({"name": "NodeResourcesFit", "args": copy.deepcopy(case["fitArgs"])})
    if case.get("balancedArgs") is not None:
        plugin_config.append({"name": "NodeResourcesBalancedAllocation", "args": copy.deepcopy(case["balancedArgs"])})
    for name, args in (case.get("pluginArgs") or {}).items():
        plugin_config.append({"name": name, "args": copy.deepcopy(args)})
    profile: dict[str, Any] = {
        "schedulerName": "default-scheduler",
        "plugins": {"multiPoint": {"enabled": enabled, "disabled": [{"name": "*"}]}},
    }
    if plugin_config:
        profile["pluginConfig"] = plugin_config
    return {"apiVersion": V1, "kind": "KubeSchedulerConfiguration", "profiles": [profile]}


def case_pending_pods(case: dict[str, Any]) -> list[dict[str, Any]]:
    """The pod being scheduled (single-pod case) or the queue (sequence case), in order.

    A queued pod that already names a node (the NodeName plugin's cases) is marked with the
    `kubefit.io/queued` annotation, kubefit's way to say "schedule it anyway" in a scenario.
    """
    if case.get("mode") == "sequence":
        pods = copy.deepcopy(list(case.get("queue") or []))
    else:
        pods = [copy.deepcopy(case["pod"])] if case.get("pod") is not None else []
    for pod in pods:
        if (pod.get("spec") or {}).get("nodeName"):
            pod.setdefault("metadata", {}).setdefault("annotations", {})["kubefit.io/queued"] = "true"
    return pods


def case_scenario_docs(case: dict[str, Any]) -> list[dict[str, Any]]:
    """Configuration, nodes, bound pods, pending pod(s): the documents of the case's scenario file."""
    extra = [obj for key in EXTRA_OBJECT_FIELDS for obj in copy.deepcopy(case.get(key) or [])]
    return [case_config(case), *extra, *copy.deepcopy(case.get("nodes") or []),
            *copy.deepcopy(case.get("pods") or []), *copy.deepcopy(case_pending_pods(case))]


def run_case(case: dict[str, Any], args: list[str], tmp_path, capsys) -> tuple[int, str, str]:
    """The case as one scenario file (a `kind: List`), through `kubefit VERB -f FILE ARGS…`: (rc, stdout, stderr)."""
    from kubefit.cli import main

    path = tmp_path / f"{case['id']}.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": case_scenario_docs(case)}))
    capsys.readouterr()
    # pods as given (golden/README.md); a sequence's preemption victims "are deleted (removed from the cache and
    # the fake API server)": the harness runs kube-scheduler alone, no controller recreates them
    alone = ["--no-replace-victims"] if args[0] == "simulate" else []
    rc = main([args[0], "-f", str(path), "--no-admission", *alone, *args[1:]])
    out, err = capsys.readouterr()
    return rc, out, err


def nothing(value: Any) -> bool:
    """Absent, null, [] and {}: what the golden files write as null."""
    return value is None or value == [] or value == {}


def same(got: Any, want: Any) -> bool:
    """Equal, where absent / null / empty all mean "nothing" (the golden file writes null)."""
    return got == want or (nothing(got) and nothing(want))


def score_detail(case: dict[str, Any], tmp_path, capsys) -> dict[str, Any] | None:
    """`kubefit score -o json --detail` of a single case: its JSON, or None when the case expects the cycle to
    fail (a plugin error: kube-scheduler's text on stderr, exit 1; checked here)."""
    rc, out, err = run_case(case, ["score", "-o", "json", "--detail"], tmp_path, capsys)
    if case["expect"].get("error"):
        assert rc == 1, out
        assert case["expect"]["error"] in err
        return None
    assert rc == 0, err
    return json.loads(out)


# What `kubefit score -o json --detail` states of a default-profile cycle, in the golden files' vocabulary.
SINGLE_KEYS = ("filter", "filterByPlugin", "preFilterNodeNames", "skippedFilterPlugins", "feasible", "score",
               "scoreRaw", "skippedScorePlugins", "total", "best", "preEnqueue", "message", "postFilter")


def check_single_case(case: dict[str, Any], tmp_path, capsys) -> None:
    """A default-profile single-pod case through `kubefit score --detail`: every key of SINGLE_KEYS as the
    real scheduler gave it (no Filter plugin alone when PreFilter rejected the pod)."""
    expect = case["expect"]
    got = score_detail(case, tmp_path, capsys)
    if got is None:  # the cycle failed as the real one did (checked by score_detail)
        return
    for key in SINGLE_KEYS:
        if key == "filterByPlugin" and expect.get("preFilter"):
            continue  # PreFilter rejected the pod: no Filter plugin ran
        assert same(got.get(key), expect.get(key)), key
