"""The C kernels read numpy arrays off the array object (`_ndview.h`) instead of through the buffer protocol: the
same memory, shape and format, so the same answers. Each kernel is called here twice on equal inputs, once with
plain arrays (the view) and once with arrays of a subclass of numpy.ndarray (which the view never takes: the buffer
protocol, as before), and the results must agree; what either refuses, both refuse."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubefit.scheduler import rows
from kubefit.scheduler.config import NodeResourcesFitArgs

from .test_row_kernels import CPU_AND_MEMORY, fit_engine

try:
    from kubefit.scheduler import _countkernels, _rowkernels
except ImportError:  # pragma: no cover - the C kernels are optional
    _countkernels = _rowkernels = None

pytestmark = pytest.mark.skipif(_countkernels is None or _rowkernels is None, reason="the C kernels are not built")


class Other(np.ndarray):
    """An ndarray of another type: the kernels read it through the buffer protocol."""


def other(a: np.ndarray | None) -> np.ndarray | None:
    return None if a is None else a.copy().view(Other)


def test_the_view_is_on():
    """numpy's layout was recognised when the modules loaded (otherwise every array takes the slower path)."""
    assert _countkernels.ARRAY_VIEW == 1 and _rowkernels.ARRAY_VIEW == 1


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_best_reads_the_same_through_either_path(data):
    n = data.draw(st.integers(1, 30))
    total = np.asarray(data.draw(st.lists(st.integers(-10**6, 10**6), min_size=n, max_size=n)), dtype=np.int64)
    feasible = np.asarray(sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1))), dtype=np.int64)
    m = len(feasible)
    normed = np.asarray(data.draw(st.lists(st.integers(0, 100), min_size=m, max_size=m)), dtype=np.int64)
    extra = data.draw(st.one_of(st.integers(-50, 50),
                                st.lists(st.integers(-50, 50), min_size=m, max_size=m).map(np.asarray)))
    scale = data.draw(st.integers(0, 3))
    results = []
    for wrap in (lambda a: a, other):
        summed, top = wrap(np.zeros(m, dtype=np.int64)), wrap(np.zeros(m, dtype=np.int64))
        x = wrap(extra) if isinstance(extra, np.ndarray) else extra
        count = _countkernels.best(wrap(total), wrap(feasible), wrap(normed), summed, top, scale, x)
        results.append((np.asarray(summed).tolist(), np.asarray(top)[:count].tolist()))
    assert results[0] == results[1]
    expected = total[feasible] + normed * scale + extra  # (engine._best's numpy path, the reference)
    assert results[0][0] == expected.tolist()
    assert results[0][1] == feasible[expected == expected.max()].tolist()


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_scatter_writes_the_same_through_either_path(data):
    n, length = data.draw(st.integers(1, 8)), data.draw(st.integers(0, 20))
    node = np.asarray(data.draw(st.lists(st.integers(0, n - 1), min_size=length, max_size=length)), dtype=np.int64)
    klass = np.asarray(data.draw(st.lists(st.integers(0, 2), min_size=length, max_size=length)), dtype=np.int64)
    sign = np.asarray(data.draw(st.lists(st.sampled_from([1, -1]), min_size=length, max_size=length)), dtype=np.int64)
    table = np.asarray(data.draw(st.lists(st.integers(0, 2), min_size=3, max_size=3)), dtype=np.int64)
    dtype = data.draw(st.sampled_from([np.int32, np.int64]))
    target = np.asarray(data.draw(st.lists(st.integers(0, 9), min_size=4, max_size=4)), dtype=dtype)
    index = np.asarray(data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), dtype=dtype)
    mask = data.draw(st.one_of(st.none(), st.lists(st.booleans(), min_size=n, max_size=n).map(np.asarray)))
    offset = data.draw(st.one_of(st.none(), st.lists(st.integers(0, 9), min_size=n, max_size=n)
                                 .map(lambda v: np.asarray(v, dtype=dtype))))
    start = data.draw(st.integers(0, length))
    results = []
    for wrap in (lambda a: a if a is None else a.copy(), other):
        out = wrap(target)
        top = _countkernels.scatter(wrap(node), wrap(klass), wrap(sign), start, length, wrap(table), out,
                                    wrap(index), wrap(mask), 2, wrap(offset))
        results.append((top, np.asarray(out).tolist()))
    assert results[0] == results[1]
    expected = target.astype(np.int64)  # the change-by-change replay (podclasses.follow's reference)
    for i in range(start, length):
        if table[klass[i]] and (mask is None or mask[node[i]]):
            expected[index[node[i]]] += sign[i] * table[klass[i]] * 2
    assert results[0][1] == expected.tolist()


def test_evaluate_writes_the_same_through_either_path():
    """NodeResourcesFit's row kernels over three nodes whose cpu in use differs (one of them full): the codes, raw
    scores, feasibility and totals written through the view are those written through the buffer protocol, and
    they are the plugin's (4000m cores: (4000 - 100 - used)·100 / 4000 for cpu, memory 99)."""
    engine, shape, _pod = fit_engine(NodeResourcesFitArgs("LeastAllocated", CPU_AND_MEMORY), 3, 100)
    state = engine.state
    cpu = state.index["cpu"]
    state.requested[1, cpu] = state.nonzero_requested[1, 0] = 2000  # (millicores: Filter reads the one, Score the other)
    state.requested[2, cpu] = state.nonzero_requested[2, 0] = 3950
    state._row_lists.clear()
    written = []
    for wrap in (lambda a: a if a is None else a.copy(), other):
        out = [wrap(a) for a in (shape.codes, shape.raw, shape.ok, shape.summed, shape.total, shape.bad)]
        done = rows.evaluate_compiled(wrap(shape.kernels.spec), [0, 1, 2], wrap(state.allocatable),
                                      wrap(state.requested), wrap(state.nonzero_requested), out[0], out[1],
                                      wrap(shape.allowed), *out[2:], False)
        written.append((done, [np.asarray(a).tolist() for a in out]))
    assert written[0] == written[1]
    done, (codes, raw, ok, _summed, total, _bad) = written[0]
    assert done[0] == 3 and ok == [True, True, False] and codes[0][2] != 0
    assert raw[0][:2] == [(97 + 99) // 2, (47 + 99) // 2] and total[:2] == raw[0][:2]


def test_what_the_buffer_protocol_refuses_the_view_refuses():
    """A read-only array where a kernel writes, a float array, a strided one, a big-endian one: refused with the
    buffer protocol's or the kernel's own error, never read through the view."""
    m = 3
    feasible, normed = np.arange(m, dtype=np.int64), np.zeros(m, dtype=np.int64)
    total = np.zeros(m, dtype=np.int64)
    readonly = np.zeros(m, dtype=np.int64)
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):  # (numpy's words)
        _countkernels.best(total, feasible, normed, readonly, np.zeros(m, dtype=np.int64))
    with pytest.raises(TypeError):
        _countkernels.best(total.astype(np.float64), feasible, normed, np.zeros(m, dtype=np.int64),
                           np.zeros(m, dtype=np.int64))
    with pytest.raises((BufferError, ValueError)):
        _countkernels.best(np.zeros(2 * m, dtype=np.int64)[::2], feasible, normed, np.zeros(m, dtype=np.int64),
                           np.zeros(m, dtype=np.int64))
    swapped = np.arange(m, dtype=">i8")  # (the buffer protocol's, as before the view: its format's last letter)
    assert _countkernels.best(swapped, feasible, normed, np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.int64)) \
        == _countkernels.best(other(swapped), feasible, normed, np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.int64))
