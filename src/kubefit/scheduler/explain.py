"""Per-resource breakdown of the resource scores, the way the "Resource Bin Packing" docs work an example."""

from __future__ import annotations

from typing import Any

import numpy as np

from kubefit.api.core import Pod
from kubefit.scheduler.framework import Framework, new_context
from kubefit.scheduler.plugins.balanced import NodeResourcesBalancedAllocation, balanced_scores
from kubefit.scheduler.plugins.fit import NodeResourcesFit
from kubefit.scheduler.plugins.legacy import LegacyNodeResourcesFit
from kubefit.scheduler.plugins.strategies import MAX_UTILIZATION
from kubefit.scheduler.state import ClusterState


def _utilization(a: int, q: int, legacy: bool) -> int:
    if legacy:  # v1.16: 100 − ((cap−req)·100)/cap, which rounds the utilisation up
        return MAX_UTILIZATION if a == 0 or q > a else MAX_UTILIZATION - ((a - q) * MAX_UTILIZATION) // a
    return MAX_UTILIZATION if q > a else (q * MAX_UTILIZATION) // a


def _fit_node(plugin: NodeResourcesFit, scores, alloc, req, m: int, p_req: dict[str, int]) -> dict[str, Any]:
    node_score, res_score, counted = scores
    args = plugin.args
    legacy = isinstance(plugin, LegacyNodeResourcesFit)
    resources = plugin.explained_resources() if legacy else [(r.name, r.weight) for r in args.resources]
    rows, num, den = [], 0, 0
    for k, (name, weight) in enumerate(resources):
        a, q = int(alloc[m, k]), int(req[m, k])
        entry = {"resource": name, "weight": weight, "allocatable": a,
                 "requestedBefore": q - int(p_req.get(name, 0)) if a else 0, "requested": q,
                 "counted": bool(counted[m, k])}
        if a or legacy:
            entry["utilization"] = _utilization(a, q, legacy)
            entry["score"] = int(res_score[m, k])
        if counted[m, k]:
            num += int(res_score[m, k]) * weight
            den += weight
        rows.append(entry)
    if legacy and not plugin.scorer.rounded:
        formula = f"({' + '.join(str(int(s)) for s in res_score[m])}) / 2 → {int(node_score[m])} (0..10 scale)"
    elif plugin.scorer.rounded:  # RequestedToCapacityRatio
        formula = f"round({num}/{den}) = {int(node_score[m])}" if den else "no resource scored above 0 → 0"
    else:
        formula = f"{num}/{den} → {int(node_score[m])} (truncated)" if den else "no resource kept → 0"
    return {"resources": rows, "numerator": num, "weightSum": den, "formula": formula, "score": int(node_score[m])}


def _balanced_node(plugin: NodeResourcesBalancedAllocation, score, alloc, req, m: int,
                   pod: dict[str, int]) -> dict[str, Any]:
    """One node's BalancedAllocation arithmetic; from v1.36 (kubernetes#135573) the balance with and without
    the pod, and the score built from both."""
    rows = []
    for k, r in enumerate(plugin.args.resources):
        a, q = int(alloc[m, k]), int(req[m, k])
        if a:
            rows.append({"resource": r.name, "allocatable": a, "requested": q, "fraction": min(q / a, 1.0)})
    if not plugin.with_and_without:
        return {"resources": rows, "score": int(score[m]), "formula": "int((1 − std(fractions)) · 100)"}
    before = np.where(alloc[m:m + 1] != 0, req[m:m + 1] - np.array([[pod.get(r.name, 0) for r in plugin.args.resources]],
                                                                       dtype=np.int64), 0)
    with_pod = int(balanced_scores(req[m:m + 1], alloc[m:m + 1])[0])
    without = int(balanced_scores(before, alloc[m:m + 1])[0])
    for row, k in zip(rows, [k for k in range(len(plugin.args.resources)) if alloc[m, k]], strict=True):
        row["requestedBefore"] = int(before[0, k])
        row["fractionBefore"] = min(int(before[0, k]) / int(alloc[m, k]), 1.0)
    return {"resources": rows, "scoreWithPod": with_pod, "scoreWithoutPod": without, "score": int(score[m]),
            "formula": f"50 + (50 + {with_pod} − {without}) / 2 = {int(score[m])} (each int((1 − std(fractions)) · 100))"}


def explain(fw: Framework, state: ClusterState, pod: Pod, feasible: np.ndarray) -> dict[str, dict[str, Any]]:
    """{node: {plugin: breakdown}} for NodeResourcesFit and NodeResourcesBalancedAllocation on feasible nodes."""
    ctx = new_context(state, pod)
    out: dict[str, dict[str, Any]] = {state.nodes[int(n)].name: {} for n in feasible}
    for name, plugin, _weight in fw.scorers:
        if isinstance(plugin, NodeResourcesFit):
            scores, alloc, req = plugin.score_detail(state, ctx, feasible)
            for m, n in enumerate(feasible):
                out[state.nodes[int(n)].name][name] = _fit_node(plugin, scores, alloc, req, m,
                                                                ctx.demand.score_requests)
        elif type(plugin) is NodeResourcesBalancedAllocation and not plugin.pre_score(state, ctx):
            score, alloc, req = plugin.score_detail(state, ctx, feasible)
            for m, n in enumerate(feasible):
                out[state.nodes[int(n)].name][name] = _balanced_node(plugin, score, alloc, req, m,
                                                                     ctx.demand.requests)
    return out
