"""In-place resize: a bound pod's container statuses count in its node's accounting (SPEC §2, Node accounting).

kube-scheduler v1.34 (InPlacePodVerticalScaling on) accounts a bound pod with
`PodRequests(pod, {UseStatusResources: true})`: a container (or sidecar) whose status carries `resources`
counts max(spec requests, status resources.requests, allocatedResources), or, while a resize is
`PodResizePending`/`Infeasible`, max(status requests, allocatedResources) alone. The pod being scheduled
is read from its spec only. Every expected value below is computed by hand.
"""

from __future__ import annotations

import json
from typing import Any

from kubefit.cli import main
from kubefit.k8s.requests import pod_demand
from kubefit.manifests.documents import parse_documents
from kubefit.manifests.load import Scenario
from kubefit.manifests.scenario import add_document
from kubefit.scheduler.state import compile_state

MI = 1024 * 1024
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def container(name: str = "c", restart: str | None = None, **requests: str) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "resources": {"requests": requests}}
    if restart:
        c["restartPolicy"] = restart
    return c


def status(name: str = "c", requests: dict[str, str] | None = None, allocated: dict[str, str] | None = None,
           *, resources: bool = True) -> dict[str, Any]:
    cs: dict[str, Any] = {"name": name, "ready": True, "image": "nginx"}  # kubelet fields, unread
    if resources:
        cs["resources"] = {"requests": requests} if requests is not None else {}
    if allocated is not None:
        cs["allocatedResources"] = allocated
    return cs


def pod(containers: list[dict], status_: dict[str, Any] | None = None, *, inits: list[dict] | None = None,
        node_name: str | None = "n1", name: str = "p") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": containers}
    if inits:
        spec["initContainers"] = inits
    if node_name:
        spec["nodeName"] = node_name
    doc = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}
    if status_ is not None:
        doc["status"] = {"phase": "Running", **status_}
    return doc


def scenario(*docs: dict[str, Any]) -> Scenario:
    out = Scenario()
    for doc in parse_documents(json.dumps({"apiVersion": "v1", "kind": "List", "items": [NODE, *docs]})):
        add_document(out, doc)
    return out


def node_usage(*docs: dict[str, Any]) -> tuple[int, int, int, int]:
    """(requested cpu, requested memory, non-zero cpu, non-zero memory) of node n1."""
    s = scenario(*docs)
    state = compile_state(s.nodes, s.pods)
    cpu, mem = state.column("cpu"), state.column("memory")
    return (int(state.requested[0, cpu]), int(state.requested[0, mem]),
            int(state.nonzero_requested[0, 0]), int(state.nonzero_requested[0, 1]))


RESIZE_INFEASIBLE = {"type": "PodResizePending", "status": "True", "reason": "Infeasible"}


def test_status_requests_larger_than_spec_count() -> None:
    p = pod([container(cpu="1", memory="1Gi")],
            {"containerStatuses": [status(requests={"cpu": "2", "memory": "1Gi"})]})
    assert node_usage(p)[:2] == (2000, 1024 * MI)


def test_allocated_resources_larger_than_both_win() -> None:
    p = pod([container(cpu="1")], {"containerStatuses": [status(requests={"cpu": "2"}, allocated={"cpu": "3"})]})
    assert node_usage(p)[0] == 3000


def test_spec_larger_wins_while_the_resize_is_not_infeasible() -> None:
    p = pod([container(cpu="2")], {"containerStatuses": [status(requests={"cpu": "500m"}, allocated={"cpu": "500m"})],
                                   "conditions": [{"type": "PodResizePending", "status": "True",
                                                   "reason": "Deferred"}]})
    assert node_usage(p)[0] == 2000


def test_infeasible_resize_ignores_the_spec() -> None:
    p = pod([container(cpu="2")], {"containerStatuses": [status(requests={"cpu": "500m"}, allocated={"cpu": "500m"})],
                                   "conditions": [{"type": "Ready", "status": "True"}, RESIZE_INFEASIBLE]})
    assert node_usage(p)[0] == 500


def test_only_the_first_resize_pending_condition_decides() -> None:
    deferred_first = {"conditions": [{"type": "PodResizePending", "reason": "Deferred"}, RESIZE_INFEASIBLE],
                      "containerStatuses": [status(requests={"cpu": "500m"})]}
    assert node_usage(pod([container(cpu="2")], deferred_first))[0] == 2000


def test_infeasible_with_empty_status_resources_counts_nothing_but_the_non_zero_defaults() -> None:
    """`resources: {}` is present: max(nil, nil) is empty, so the container requests nothing."""
    p = pod([container(cpu="2", memory="1Gi")], {"containerStatuses": [status(requests=None)],
                                                 "conditions": [RESIZE_INFEASIBLE]})
    assert node_usage(p) == (0, 0, 100, 200 * MI)


def test_status_without_resources_leaves_the_spec_requests() -> None:
    p = pod([container(cpu="1")], {"containerStatuses": [status(resources=False, allocated={"cpu": "3"})],
                                   "conditions": [RESIZE_INFEASIBLE]})
    assert node_usage(p)[0] == 1000


def test_statuses_match_containers_by_name() -> None:
    p = pod([container("a", cpu="1"), container("b", cpu="1")],
            {"containerStatuses": [status("b", requests={"cpu": "3"}), status("other", requests={"cpu": "9"})]})
    assert node_usage(p)[0] == 1000 + 3000


def test_regular_init_container_status_is_ignored_a_sidecar_status_is_used() -> None:
    inits = [container("init", cpu="1"), container("side", restart="Always", cpu="1")]
    statuses = {"initContainerStatuses": [status("init", requests={"cpu": "3"}),
                                          status("side", requests={"cpu": "2"})]}
    # containers 1 + sidecar 2 = 3; init peaks: init 1 (spec, status ignored), side 2 → max(3, 2) = 3
    assert node_usage(pod([container(cpu="1")], statuses, inits=inits))[0] == 3000
    # a larger regular init container's status changes nothing: its spec 1 + earlier sidecars stays below 3
    statuses["initContainerStatuses"][0] = status("init", requests={"cpu": "8"})
    assert node_usage(pod([container(cpu="1")], statuses, inits=inits))[0] == 3000


def test_non_zero_defaults_still_apply_to_keys_the_status_lacks() -> None:
    """No cpu in spec or status: NonZeroRequested gets 100m for cpu; memory comes from the status."""
    p = pod([{"name": "c"}], {"containerStatuses": [status(requests={"memory": "300Mi"})]})
    assert node_usage(p) == (0, 300 * MI, 100, 300 * MI)


def test_pod_level_requests_still_override_and_overhead_is_added() -> None:
    p = pod([container(cpu="1")], {"containerStatuses": [status(requests={"cpu": "2", "memory": "1Gi"})]})
    p["spec"]["resources"] = {"requests": {"cpu": "1500m"}}
    p["spec"]["overhead"] = {"cpu": "100m"}
    # cpu: pod level 1500m replaces 2, + overhead 100m; memory from the status (pod level names no memory)
    assert node_usage(p) == (1600, 1024 * MI, 1600, 1024 * MI)


def test_a_pending_pod_is_read_from_its_spec() -> None:
    s = scenario(pod([container(cpu="1")], {"containerStatuses": [status(requests={"cpu": "2"})]}, node_name=None))
    pending = s.pending_pods[0]
    assert pod_demand(pending).requests["cpu"] == 1000
    assert pod_demand(pending).score_requests["cpu"] == 1000
    assert pod_demand(pending, use_status_resources=True).requests["cpu"] == 2000  # what a bound copy counts


def test_filter_sees_the_resized_pod(tmp_path, capsys) -> None:
    """Bound: spec 1, allocated 3.5 of 4 cpus; a pending pod of 1 cpu does not fit (by spec it would)."""
    bound = pod([container(cpu="1")], {"containerStatuses": [status(requests={"cpu": "1"}, allocated={"cpu": "3500m"})]},
                name="resized")
    pending = pod([container(cpu="1")], node_name=None, name="new")
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [NODE, bound, pending]}))
    capsys.readouterr()
    assert main(["simulate", "-f", str(path), "-o", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["unschedulable"] == 1 and "Insufficient cpu" in out["steps"][0]["message"]
