"""compile_state binds every bound pod at once (`state._bind_all`): the state must be the one the binds one by
one (`ClusterState.bind`, the scheduler cache's assume) leave, array for array and list for list."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubefit.api.core import Container, ContainerPort, ContainerStatus, Node, Pod
from kubefit.k8s.quantity import NANO
from kubefit.scheduler.state import ClusterState, compile_state

RESOURCES = ["cpu", "memory", "example.com/gpu", "hugepages-2Mi"]
NODES = [Node(name=f"n{i}", allocatable={"cpu": 8 * NANO, "memory": 64 * NANO, "pods": 110 * NANO,
                                         **({"example.com/gpu": 4 * NANO} if i % 2 else {})}) for i in range(4)]

request_st = st.dictionaries(st.sampled_from(RESOURCES), st.integers(0, 2**40), max_size=3)
# a few container sets, shared by identity between pods as a workload's decoded replicas share theirs
containers_st = st.lists(st.tuples(request_st, st.sampled_from([0, 0, 80, 443])), min_size=1, max_size=4)


def _containers(spec: list[tuple[dict, int]]) -> tuple[Container, ...]:
    return tuple(Container(f"c{i}", {k: v * NANO // 1000 for k, v in req.items()},
                           ports=(ContainerPort(8080, port, "TCP"),) if port else ())
                 for i, (req, port) in enumerate(spec))


pod_st = st.tuples(st.integers(0, 3), st.sampled_from(["n0", "n1", "n2", "n3", "gone", ""]),
                   st.sampled_from(["Running", "Running", "Succeeded", "Failed", "Pending"]),
                   st.integers(-5, 5), st.booleans(), st.booleans())


@settings(max_examples=200, deadline=None)
@given(sets=st.lists(containers_st, min_size=1, max_size=4), pods=st.lists(pod_st, max_size=40))
def test_compile_state_equals_binding_one_by_one(sets, pods):
    shared = [_containers(spec) for spec in sets]
    made = []
    for i, (which, node, phase, priority, resized, queued) in enumerate(pods):
        containers = shared[which % len(shared)]
        statuses = (ContainerStatus(containers[0].name, {"cpu": 3 * NANO},
                                    {"example.com/fpga": NANO} if i % 3 else {}),) if resized else ()
        made.append(Pod(name=f"p{i}", node_name=node, phase=phase, priority=priority, containers=containers,
                        container_statuses=statuses, queued=queued))
    at_once = compile_state(NODES, made)
    one_by_one = ClusterState(list(NODES), list(at_once.resources), at_once.allocatable.copy(),
                              np.zeros_like(at_once.allocatable), np.zeros((len(NODES), 2), dtype=np.int64))
    for pod in made:
        node = one_by_one.node_index.get(pod.node_name)
        if node is not None and pod.bound and pod.phase not in ("Succeeded", "Failed"):
            one_by_one.bind(node, one_by_one.bound_demand(pod), pod=pod)
    assert at_once.resources == one_by_one.resources == _columns(made)
    assert np.array_equal(at_once.requested, one_by_one.requested)
    assert np.array_equal(at_once.nonzero_requested, one_by_one.nonzero_requested)
    assert [[p.name for p in ps] for ps in at_once.pods] == [[p.name for p in ps] for ps in one_by_one.pods]
    assert at_once.priorities == one_by_one.priorities
    assert at_once.used_ports == one_by_one.used_ports
    assert [(n, p.name, d) for n, p, d in at_once.changes] == [(n, p.name, d) for n, p, d in one_by_one.changes]


def _columns(pods: list[Pod]) -> list[str]:
    """The state's resource columns by their definition: cpu, memory, pods and ephemeral-storage, then each
    further name as it first appears, nodes first, then pod by pod its containers', init containers' and
    statuses' lists."""
    names = ["cpu", "memory", "pods", "ephemeral-storage"]
    lists = [n.allocatable for n in NODES]
    for pod in pods:
        lists += [c.requests for c in (*pod.containers, *pod.init_containers)]
        lists += [rl for cs in (*pod.container_statuses, *pod.init_container_statuses)
                  for rl in (cs.requests or {}, cs.allocated_resources)]
    for rl in lists:
        names += [name for name in rl if name not in names]
    return names


def test_compile_state_sums_wrap_as_the_binds_do():
    """Two pods each asking 2^62 cpu units on one node: the int64 sum wraps (as NodeInfo's does in Go), the
    same whether bound one by one or at once. 2^62 + 2^62 = 2^63 ≡ −2^63 (mod 2^64)."""
    huge = (Container("c", {"example.com/gpu": 2**62 * NANO}),)
    pods = [Pod(name=f"p{i}", node_name="n1", containers=huge) for i in range(2)]
    state = compile_state(NODES, pods)
    assert int(state.requested[1, state.index["example.com/gpu"]]) == -(2**63)


def test_a_bind_naming_a_resource_the_state_lacks_widens_it_first():
    # two 8-cpu nodes with no extended resource; a pod of 1 cpu and 3 example.com/fpga bound on n1 without a
    # prepared row: its row is made first (the columns widened to hold fpga), then added to n1's: cpu 1, pods 1,
    # fpga 3 there, nothing on n0 (before, the row was taken from the narrower array and the add failed)
    from kubefit.k8s.requests import pod_demand

    state = compile_state(NODES[:1] + NODES[2:3], [])
    pod = Pod(name="p", containers=(Container("c", {"cpu": NANO, "example.com/fpga": 3 * NANO}),))
    state.bind(1, pod_demand(pod))
    fpga, cpu, pods = (state.index[r] for r in ("example.com/fpga", "cpu", "pods"))
    assert state.requested[1, [cpu, pods, fpga]].tolist() == [1000, 1, 3]
    assert not state.requested[0].any()


INT64 = st.integers(-2**63, 2**63 - 1)


@settings(max_examples=150, deadline=None)
@given(binds=st.lists(st.tuples(st.integers(0, 3), st.lists(INT64 | st.integers(-3, 3), min_size=5, max_size=5),
                                st.tuples(INT64, INT64)), max_size=12))
def test_a_bind_adds_its_rows_as_numpy_does(binds):
    """`ClusterState.bind` with a prepared row and non-zero pair (the engine's binds) adds them in C
    (`_countkernels.add_rows`): the rows numpy's `+=` leaves, int64 sums wrapping, bind after bind."""
    from kubefit.k8s.requests import pod_demand
    from kubefit.scheduler import state as state_module

    assert state_module._add_rows is not None
    state = compile_state(NODES, [])
    want_requested, want_nonzero = state.requested.copy(), state.nonzero_requested.copy()
    demand = pod_demand(Pod(name="p"))
    for node, row, pair in binds:
        row, pair = np.asarray(row, dtype=np.int64), np.asarray(pair, dtype=np.int64)
        state.bind(node, demand, row, nonzero=pair)
        with np.errstate(over="ignore"):
            want_requested[node] += row
            want_nonzero[node] += pair
        assert np.array_equal(state.requested, want_requested)
        assert np.array_equal(state.nonzero_requested, want_nonzero)


def test_add_rows_adds_all_pairs_or_none():
    """A pair the kernel does not take (a row of another width, a node out of range) adds nothing, not even the
    pairs before it: `bind` then adds them all with numpy."""
    from kubefit.scheduler._countkernels import add_rows

    requested, nonzero = np.zeros((2, 3), dtype=np.int64), np.zeros((2, 2), dtype=np.int64)
    row, pair = np.asarray([1, 2, 3], dtype=np.int64), np.asarray([4, 5], dtype=np.int64)
    for args in ((1, 1, requested, row, nonzero, row), (2, 1, requested, row, nonzero, pair),
                 (1, 1, requested, row, nonzero, pair.astype(np.int32))):
        try:
            add_rows(*args)
        except (TypeError, ValueError):
            pass
        else:  # pragma: no cover - the kernel must refuse
            raise AssertionError("add_rows took what it should refuse")
        assert not requested.any() and not nonzero.any()
    add_rows(1, -1, requested, row, nonzero, pair)
    assert requested.tolist() == [[0, 0, 0], [-1, -2, -3]] and nonzero.tolist() == [[0, 0], [-4, -5]]
