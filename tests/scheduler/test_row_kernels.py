"""The row kernels in C (`_rowkernels.c`) give what rows.py's Python kernels give, row by row, on values
from the everyday to the edge of int64 (where both hand the row on: to Python, then to the plugins)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubefit.api.core import Container, Node, Pod
from kubefit.scheduler import engine as eng
from kubefit.scheduler import rows
from kubefit.scheduler.config import (
    NodeResourcesFitArgs,
    Profile,
    ResourceWeight,
    SchedulerConfiguration,
    ScorePlugin,
    ShapePoint,
)
from kubefit.scheduler.state import compile_state

from .test_simulate_properties import NANO, config_st, nodes_st, pods_st

SAFE = rows.SAFE
# a row's amounts: everyday ones (most rows), or some around every bound the kernels check (rows.SAFE, int64)
EVERYDAY = st.one_of(st.integers(0, 8), st.integers(0, 5000), st.integers(0, 10**12))
EDGES = st.one_of(EVERYDAY, st.sampled_from([-1, SAFE - 1, SAFE, SAFE + 1, 2**62, 2**63 - 1, -SAFE, -SAFE - 1,
                                             -(2**63)]), st.integers(-(2**63), 2**63 - 1))


def amounts(data, width: int) -> list[int]:
    return data.draw(st.lists(data.draw(st.sampled_from([EVERYDAY, EVERYDAY, EVERYDAY, EDGES])),
                              min_size=width, max_size=width))


def test_the_compiled_kernels_are_built():
    """An installation from the project's files compiles them (setup.py); without a C compiler kubefit
    runs the Python kernels, with the same results, about 5x slower per stale row."""
    assert rows.evaluate_compiled is not None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes_st(), pods_st(max_pods=3), config_st(), st.data())
def test_compiled_rows_equal_python_rows(nodes, pods, config, data):
    """After rows of the state change (to any int64 amounts), a shape brought up to date through the C
    kernels holds exactly what the Python kernels (and, past their exact range, the plugins) give."""
    if rows.evaluate_compiled is None:
        pytest.skip("the C kernels are not built")
    state = compile_state(nodes, pods)
    engine = eng.Engine(state, config, tie_break="first")
    shape = engine.shape(pods[0])
    if shape.kernels is None or shape.kernels.spec is None:
        return
    n, width = state.requested.shape
    changed = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=3 * n))
    for i in set(changed):
        if data.draw(st.booleans()):
            state.requested[i] = amounts(data, width)
            state.nonzero_requested[i] = amounts(data, 2)
        if data.draw(st.booleans()):
            state.allocatable[i] = amounts(data, width)
    state._row_lists.clear()
    engine.log.extend(changed)
    if data.draw(st.booleans()):
        engine.last_removal = len(engine.log) - 1  # a removal among them: no skipping of infeasible rows
    python = copy.deepcopy(shape)
    python.kernels.spec = None
    with np.errstate(over="ignore"):  # the plugins' int64 arithmetic wraps as Go's does, past the kernels' range
        engine._sync(python)
        engine._sync(shape)
    for name in ("codes", "raw", "ok", "summed", "total", "bad"):
        assert np.array_equal(getattr(shape, name), getattr(python, name)), name
    assert (shape.n_ok, shape.n_bad) == (python.n_ok, python.n_bad)
    assert shape.n_ok == int(np.count_nonzero(shape.ok)) and shape.n_bad == int(np.count_nonzero(shape.bad))


def fit_engine(args: NodeResourcesFitArgs, nodes: int, cpu_milli: int) -> tuple[eng.Engine, eng.Shape, Pod]:
    """`nodes` nodes of 4 cores and 8Gi, NodeResourcesFit alone with `args` (cpu and memory weighted 1), and
    the shape of a pod asking `cpu_milli` millicores and 1Mi."""
    nodes_ = [Node(f"n{i}", {"cpu": 4 * NANO, "memory": (8 << 30) * NANO, "pods": 110 * NANO})
              for i in range(nodes)]
    profile = Profile(filter_plugins=("NodeResourcesFit",), score_plugins=(ScorePlugin("NodeResourcesFit", 1),),
                      plugin_args={"NodeResourcesFit": args})
    pod = Pod("p", containers=(Container("c", {"cpu": cpu_milli * NANO // 1000, "memory": (1 << 20) * NANO}),))
    engine = eng.Engine(compile_state(nodes_, [pod]), SchedulerConfiguration((profile,), 100), tie_break="first")
    return engine, engine.shape(pod), pod


CPU_AND_MEMORY = (ResourceWeight("cpu", 1), ResourceWeight("memory", 1))


def test_a_row_past_the_exact_range_is_handed_to_python():
    """A node whose amounts leave the range where int64 arithmetic is exact stops the C call there; the rows
    before it are done in C, that one and the rest in Python: the same result as Python alone."""
    if rows.evaluate_compiled is None:
        pytest.skip("the C kernels are not built")
    engine, shape, _pod = fit_engine(NodeResourcesFitArgs("LeastAllocated", CPU_AND_MEMORY), 3, 100)
    state = engine.state
    cpu = state.index["cpu"]
    state.allocatable[1, cpu] = SAFE + 1  # beyond rows.SAFE: the Python kernel raises, the plugins decide
    state.requested[2, cpu] = 1000
    state._row_lists.clear()
    engine.log.extend([0, 1, 2])
    done, *_ = rows.evaluate_compiled(shape.kernels.spec, [0, 1, 2], state.allocatable, state.requested,
                                      state.nonzero_requested, shape.codes.copy(), shape.raw.copy(), shape.allowed,
                                      shape.ok.copy(), shape.summed.copy(), shape.total.copy(), shape.bad.copy(),
                                      False)
    assert done == 1
    python = copy.deepcopy(shape)
    python.kernels.spec = None
    engine._sync(python)
    engine._sync(shape)
    assert np.array_equal(shape.raw, python.raw) and np.array_equal(shape.total, python.total)
    assert shape.raw[0, 0] == (97 + 99) // 2  # cpu (4000 - 100)·100 / 4000, memory (8Gi - 1Mi)·100 / 8Gi


def test_bad_arguments_are_refused_not_read():
    """Arrays of other shapes or a spec whose indices leave them: a Python error, no memory read."""
    if rows.evaluate_compiled is None:
        pytest.skip("the C kernels are not built")
    n = 2
    alloc = np.zeros((n, 4), dtype=np.int64)
    args = [alloc, alloc.copy(), np.zeros((n, 2), dtype=np.int64), np.zeros((1, n), dtype=np.int8),
            np.zeros((1, n), dtype=np.int64), None, np.ones(n, dtype=bool), np.zeros(n, dtype=np.int64),
            np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool), False]
    good = np.asarray([0, 1, 0, rows.FIT_FILTER, 2, 1, 3, 5, 0, 0], dtype=np.int64)
    assert rows.evaluate_compiled(good, [0, 1], *args)[0] == 2
    for spec in ([0, 1, 0, rows.FIT_FILTER, 2, 1, 9, 5, 0, 0],  # a resource column beyond the arrays
                 [0, 1, 3, rows.FIT_FILTER, 2, 0, 0, 0],  # a filter beyond codes
                 [0, 1, 0, rows.FIT_FILTER, 2, 1, 3],  # cut short
                 [0, 0, 0, 1, 0, 0, 7, 0]):  # an unknown kind of scorer
        with pytest.raises(ValueError):
            rows.evaluate_compiled(np.asarray(spec, dtype=np.int64), [0], *args)
    with pytest.raises(IndexError):
        rows.evaluate_compiled(good, [n], *args)
    with pytest.raises(ValueError):
        rows.evaluate_compiled(good, [0], alloc[:1], *args[1:])
    with pytest.raises(TypeError):
        rows.evaluate_compiled(good, [0], alloc.astype(np.float64), *args[1:])


def test_ratio_counts_only_resources_scoring_above_zero():
    """RequestedToCapacityRatio in C as in kube-scheduler: a resource scoring 0 is left out of the weighted
    mean (cpu 1 of 4 cores → 25, memory 1Mi of 8Gi → utilization 0 → 0: the node scores 25, not 13), and a
    bind that raises the node's cpu to 3 of 4 cores moves it to 75."""
    if rows.evaluate_compiled is None:
        pytest.skip("the C kernels are not built")
    args = NodeResourcesFitArgs("RequestedToCapacityRatio", CPU_AND_MEMORY, (ShapePoint(0, 0), ShapePoint(100, 10)))
    engine, shape, pod = fit_engine(args, 2, 1000)
    assert shape.kernels.spec is not None and shape.raw[0].tolist() == [25, 25]
    engine.bind(1, shape, pod)
    engine.bind(1, shape, pod)
    engine._sync(shape)
    assert shape.raw[0].tolist() == [25, 75]
