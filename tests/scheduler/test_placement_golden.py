"""Every single-pod case of golden/kube-scheduler/placement-cases.jsonl through the framework.

The case's configuration goes through `load_configuration` (as a scenario would), the cycle through
`run_filters` / `run_scores`; every per-plugin output of the real scheduler is compared: node statuses
with the failing plugin, each Filter plugin alone, PreFilter node names and skips, raw and normalised
scores over the feasible nodes and over all nodes, totals, best nodes and cycle errors.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from golden_scenario import case_config
from kubefit.k8s.requests import pod_demand
from kubefit.manifests.documents import Document
from kubefit.manifests.load import decode_node, decode_pod
from kubefit.scheduler.config import load_configuration
from kubefit.scheduler.framework import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    CycleResult,
    Framework,
    SchedulingCycleError,
    new_context,
    run_filters,
    run_scores,
    schedule_one,
)
from kubefit.scheduler.plugins.base import CODE_NAMES, SUCCESS, FilterOutcome, StatusError
from kubefit.scheduler.state import compile_state
from tests_support import golden_cases

ALL = golden_cases("kube-scheduler/placement-cases.jsonl")
CASES = [c for c in ALL if c.get("mode") != "sequence" and not c["expect"].get("validation")]


def _status(code: int, reasons: list[str], plugin: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"code": CODE_NAMES[code], "reasons": reasons}
    if plugin:
        out["plugin"] = plugin
    return out


def _by_plugin(name: str, outcome: FilterOutcome, names: list[str]) -> dict[str, Any]:
    return {n: _status(int(outcome.codes[i]), outcome.reasons(i), name if outcome.codes[i] != SUCCESS else None)
            for i, n in enumerate(names)}


def _all_node_scores(fw: Framework, state, pod) -> tuple[dict, dict] | None:
    """Each non-skipped score plugin over every node (raw, normalised); None if the cycle would error."""
    ctx = new_context(state, pod)
    every = np.arange(len(state), dtype=np.int64)
    names = state.node_names
    raw_all, norm_all = {}, {}
    for name, plugin, _ in fw.scorers:
        try:
            if plugin.pre_score(state, ctx):
                continue
        except StatusError:
            return None
        raw = plugin.score(state, ctx, every)
        norm = plugin.normalize(raw)
        if ((norm < MIN_NODE_SCORE) | (norm > MAX_NODE_SCORE)).any():
            return None
        raw_all[name] = dict(zip(names, raw.tolist(), strict=True))
        norm_all[name] = dict(zip(names, norm.tolist(), strict=True))
    return raw_all, norm_all


def _run(case: dict[str, Any]) -> dict[str, Any]:
    """The case's cycle, rendered in the golden file's vocabulary."""
    warnings: list[str] = []
    nodes = [decode_node(Document(x, "case", i), warnings) for i, x in enumerate(case["nodes"])]
    bound = [decode_pod(Document(x, "case", i), warnings) for i, x in enumerate(case["pods"])]
    pod = decode_pod(Document(case["pod"], "case", 0), warnings)
    config = load_configuration(Document(case_config(case), "config", 0))
    fw = Framework.build(config.profiles[0])
    state = compile_state(nodes, bound)  # the incoming pod is pending even with spec.nodeName set
    ctx = new_context(state, pod)
    n = len(nodes)
    names = state.node_names
    result = CycleResult(pod, n, np.zeros(n, dtype=np.int8), [None] * n, {}, np.zeros(0, dtype=np.int64))
    result.feasible = run_filters(fw, state, ctx, result, np.arange(n, dtype=np.int64))
    error = None
    if len(result.feasible):
        try:
            run_scores(fw, state, ctx, result, result.feasible)
        except SchedulingCycleError as err:
            error = str(err)
    feasible = [names[i] for i in result.feasible]

    def over_feasible(arrays: dict[str, np.ndarray]) -> dict[str, dict[str, int]] | None:
        if error or not arrays:
            return None
        return {p: dict(zip(feasible, v.tolist(), strict=True)) for p, v in arrays.items()}

    all_nodes = None if result.pre_filter_message else _all_node_scores(fw, state, pod)
    return {
        "filter": {names[i]: _status(int(result.codes[i]), result.reasons.get(i, []), result.failed_plugin[i])
                   for i in range(n)},
        "filterByPlugin": None if result.pre_filter_message else
        {p: _by_plugin(p, o, names) for p, o in result.filter_by_plugin.items()},
        "preFilterNodeNames": result.pre_filter_node_names,
        "skippedFilterPlugins": result.skipped_filter_plugins or None,
        "feasible": feasible,
        "score": over_feasible(result.scores),
        "scoreRaw": over_feasible(result.raw_scores),
        "skippedScorePlugins": None if error else (result.skipped_score_plugins or None),
        "total": {} if error else dict(zip(feasible, result.total.tolist(), strict=True)),
        "best": [] if error else [names[i] for i in result.best],
        "error": error,
        "scoreRawAllNodes": all_nodes[0] if all_nodes else None,
        "scoreAllNodes": all_nodes[1] if all_nodes else None,
    }


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_placement_case(case):
    expect = case["expect"]
    got = _run(case)
    for key, value in got.items():
        want = expect.get(key)  # absent / null / empty are the same "nothing"
        assert value == want or (not value and not want), key


def test_every_single_pod_case_is_run():
    """300 single-pod cases, of which only the 2 whose args the config loader refuses are left out here."""
    singles = [c for c in ALL if c.get("mode") != "sequence"]
    assert len(singles) == 300 and len(CASES) == 298


@pytest.mark.parametrize("case", [c for c in ALL if c["expect"].get("validation")],
                         ids=lambda c: c["id"])
def test_invalid_added_affinity_is_refused(case):
    """Bad `addedAffinity` args: the config loader refuses them with the exact messages."""
    from kubefit.errors import ConfigError

    with pytest.raises(ConfigError) as err:
        load_configuration(Document(case_config(case), "config", 0))
    for message in case["expect"]["validationDetail"]["config"]:
        assert message in str(err.value)


SEQUENCES = [c for c in ALL if c.get("mode") == "sequence"]


def _step(result, names: list[str]) -> dict[str, Any]:
    """One queued pod's outcome in the golden step vocabulary (bound to the first best node)."""
    feasible = result.feasible.tolist()
    best = [names[i] for i in result.best] if feasible else []
    out: dict[str, Any] = {"node": best[0] if best else None, "feasible": len(feasible)}
    if len(best) > 1:
        out["ties"] = best
    if feasible:
        out["total"] = {names[i]: int(t) for i, t in zip(feasible, result.total.tolist(), strict=True)}
    else:
        out["reasons"] = {names[i]: _status(int(result.codes[i]), result.reasons.get(i, []), result.failed_plugin[i])
                          for i in range(len(names))}
        out["message"] = result.fit_error()
    return out


@pytest.mark.parametrize("case", SEQUENCES, ids=[c["id"] for c in SEQUENCES])
def test_placement_sequence_through_the_framework(case):
    """Each queued pod filtered and scored on every node, bound to the first best node before the next."""
    warnings: list[str] = []
    nodes = [decode_node(Document(x, "case", i), warnings) for i, x in enumerate(case["nodes"])]
    bound = [decode_pod(Document(x, "case", i), warnings) for i, x in enumerate(case["pods"])]
    queue = [decode_pod(Document(x, "case", i), warnings) for i, x in enumerate(case["queue"])]
    fw = Framework.build(load_configuration(Document(case_config(case), "config", 0)).profiles[0])
    state = compile_state(nodes, bound)
    names = state.node_names
    placement: dict[str, int] = {}
    for pod, want in zip(queue, case["expect"]["steps"], strict=True):
        got = _step(schedule_one(fw, state, pod), names)
        assert {"pod": pod.name, **got} == {k: v for k, v in want.items()}, pod.name
        if got["node"] is not None:
            state.bind(names.index(got["node"]), pod_demand(pod))
            placement[got["node"]] = placement.get(got["node"], 0) + 1
    assert placement == case["expect"]["placement"]
    assert sum(placement.values()) == case["expect"]["scheduled"]
