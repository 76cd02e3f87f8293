"""Hypothesis properties: scores in 0..100, vectorised == per-node reference, never feasible when short."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kubefit.api.core import Container, Node, Pod
from kubefit.k8s.quantity import NANO
from kubefit.k8s.requests import pod_demand
from kubefit.scheduler.config import (
    BalancedAllocationArgs,
    NodeResourcesFitArgs,
    Profile,
    ResourceWeight,
    ScorePlugin,
    ShapePoint,
)
from kubefit.scheduler.framework import Framework, schedule_one
from kubefit.scheduler.state import compile_state

from . import reference

RESOURCES = ["cpu", "memory", "ephemeral-storage", "example.com/gpu"]


def _rl(d: dict[str, int]) -> dict[str, int]:
    """scheduler units → nano-units (cpu given in millicores)."""
    return {k: v * (10**6 if k == "cpu" else NANO) for k, v in d.items()}


amounts = st.integers(min_value=0, max_value=64)
node_st = st.fixed_dictionaries({"cpu": st.integers(0, 16000), "memory": st.integers(0, 64),
                                 "pods": st.integers(0, 6)},
                                optional={"ephemeral-storage": st.integers(0, 100), "example.com/gpu": st.integers(0, 8)})
req_st = st.dictionaries(st.sampled_from(RESOURCES), amounts, max_size=4)
strategy_st = st.sampled_from(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"])
weights_st = st.lists(st.tuples(st.sampled_from(RESOURCES), st.integers(1, 100)), min_size=1, max_size=4)
shape_st = st.lists(st.tuples(st.integers(0, 100), st.integers(0, 10)), min_size=1, max_size=4,
                    unique_by=lambda t: t[0]).map(sorted)


def _pod(name: str, reqs: dict[str, int], node: str = "") -> Pod:
    return Pod(name=name, node_name=node, containers=(Container("c", _rl(reqs)),))


@settings(max_examples=150, deadline=None)
@given(nodes=st.lists(node_st, min_size=1, max_size=6), bound=st.lists(st.tuples(st.integers(0, 5), req_st), max_size=8),
       incoming=req_st, strategy=strategy_st, weights=weights_st, shape=shape_st)
def test_vectorised_equals_per_node_reference(nodes, bound, incoming, strategy, weights, shape):
    node_objs = [Node(name=f"n{i}", allocatable=_rl(n)) for i, n in enumerate(nodes)]
    pods = [_pod(f"b{j}", r, f"n{i % len(nodes)}") for j, (i, r) in enumerate(bound)]
    pod = _pod("incoming", incoming)
    fit_args = NodeResourcesFitArgs(strategy, tuple(ResourceWeight(n, w) for n, w in weights),
                                    tuple(ShapePoint(u, s) for u, s in shape) if strategy == "RequestedToCapacityRatio" else None)
    profile = Profile(filter_plugins=("NodeResourcesFit",),
                      score_plugins=(ScorePlugin("NodeResourcesFit", 1), ScorePlugin("NodeResourcesBalancedAllocation", 1)),
                      plugin_args={"NodeResourcesFit": fit_args, "NodeResourcesBalancedAllocation": BalancedAllocationArgs()})
    state = compile_state(node_objs, [*pods, pod])
    result = schedule_one(Framework.build(profile), state, pod)
    demand = pod_demand(pod)
    feasible = []
    for i in range(len(node_objs)):
        alloc = dict(zip(state.resources, state.allocatable[i].tolist(), strict=True))
        req = dict(zip(state.resources, state.requested[i].tolist(), strict=True))
        reasons = reference.fits(alloc, req, req["pods"], demand.requests)
        assert result.reasons.get(i, []) == reasons
        if not reasons:
            feasible.append(i)
            # a pod is never feasible where a requested resource exceeds what is free
            for name, amount in demand.requests.items():
                if name in alloc and name != "pods" and amount > 0:
                    assert amount <= alloc[name] - req[name]
    assert result.feasible.tolist() == feasible
    for pos, i in enumerate(feasible):
        alloc = dict(zip(state.resources, state.allocatable[i].tolist(), strict=True))
        req = dict(zip(state.resources, state.requested[i].tolist(), strict=True))
        nonzero = {"cpu": int(state.nonzero_requested[i, 0]), "memory": int(state.nonzero_requested[i, 1])}
        fit = result.scores["NodeResourcesFit"][pos]
        assert 0 <= fit <= 100
        assert fit == reference.fit_score(strategy, weights, shape, demand.score_requests, alloc, req, nonzero)
        if "NodeResourcesBalancedAllocation" in result.scores:
            ba = result.scores["NodeResourcesBalancedAllocation"][pos]
            assert 0 <= ba <= 100
            assert ba == reference.balanced_score(["cpu", "memory"], demand.requests, alloc, req)
