"""What `SimulationResult.to_dict` says of the nodes (`final`, `allocatable`), read column by column and once per
distinct row, equals the straightforward per-node reading: the same keys in the same order and the same values,
extended resources included where a node has or requests some."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubefit.scheduler.simulate import final_usage, node_allocatable
from kubefit.scheduler.state import ClusterState

BASIC = ["cpu", "memory", "pods", "ephemeral-storage"]
EXTENDED = ["nvidia.com/gpu", "example.com/fpga", "hugepages-2Mi", "a.io/x"]
AMOUNT = st.sampled_from([0, 0, 0, 1, 7, 2**40]) | st.integers(-2**63, 2**63 - 1)


def _final_per_node(state: ClusterState) -> dict[str, dict]:
    """The reference: per node, a dict comprehension over the columns (as `final_usage` was written)."""
    out = {}
    names = sorted(("cpu", "ephemeral-storage", "memory"))
    basic = [(r, state.index[r]) for r in names]
    pods = state.index["pods"]
    others = [(r, col) for r, col in state.index.items() if r not in names and r != "pods"]
    for name, req, (cpu, memory) in zip(state.node_names, state.requested.tolist(),
                                        state.nonzero_requested.tolist(), strict=True):
        requested = {r: req[col] for r, col in basic}
        extra = [(r, req[col]) for r, col in others if req[col] != 0]
        if extra:
            requested = dict(sorted([*requested.items(), *extra]))
        out[name] = {"requested": requested, "nonZeroRequested": {"cpu": cpu, "memory": memory}, "pods": req[pods]}
    return out


def _allocatable_per_node(state: ClusterState) -> dict[str, dict[str, int]]:
    columns = sorted(state.index.items())
    shown = {"cpu", "ephemeral-storage", "memory", "pods"}
    return {name: {r: row[col] for r, col in columns if row[col] or r in shown}
            for name, row in zip(state.node_names, state.allocatable.tolist(), strict=True)}


@st.composite
def states(draw) -> ClusterState:
    from kubefit.api.core import Node

    resources = BASIC + draw(st.lists(st.sampled_from(EXTENDED), unique=True, max_size=3))
    n = draw(st.integers(1, 12))
    kinds = draw(st.lists(st.lists(AMOUNT, min_size=len(resources), max_size=len(resources)), min_size=1, max_size=3))
    alloc = np.asarray([kinds[draw(st.integers(0, len(kinds) - 1))] for _ in range(n)], dtype=np.int64)
    requested = np.asarray(draw(st.lists(st.lists(AMOUNT, min_size=len(resources), max_size=len(resources)),
                                         min_size=n, max_size=n)), dtype=np.int64)
    nonzero = np.asarray(draw(st.lists(st.tuples(AMOUNT, AMOUNT), min_size=n, max_size=n)), dtype=np.int64)
    names = [f"n{draw(st.integers(0, n + 1))}" for _ in range(n)]  # (two nodes of one name now and then)
    return ClusterState([Node(name, {}) for name in names], resources, alloc, requested, nonzero)


@settings(max_examples=200, deadline=None)
@given(states())
def test_final_and_allocatable_equal_the_per_node_reading(state):
    got, want = final_usage(state), _final_per_node(state)
    assert got == want
    assert [list(v["requested"]) for v in got.values()] == [list(v["requested"]) for v in want.values()]
    assert list(got) == list(want)
    alloc, want_alloc = node_allocatable(state), _allocatable_per_node(state)
    assert alloc == want_alloc and [list(v) for v in alloc.values()] == [list(v) for v in want_alloc.values()]
    if alloc:  # each node its own dict: changing one changes no other
        first = next(iter(alloc))
        alloc[first]["cpu"] = "changed"
        assert all(v["cpu"] != "changed" for k, v in alloc.items() if k != first)
