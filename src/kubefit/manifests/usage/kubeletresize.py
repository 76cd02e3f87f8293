"""The kubelet's admission of an in-place resize (in-place pod resize, GA since Kubernetes v1.35).

kubernetes/kubernetes `pkg/kubelet/allocation/allocation_manager.go` `handlePodResourcesResize` → `canResizePod`:

1. the pod's new cpu or memory requests above the node's allocatable: `Infeasible`, "Node didn't have enough
   capacity: memory, requested: R, capacity: C" (memory named first when both are short; cpu in millicores);
2. else the pod admission handlers on the other pods' allocated resources (`canAdmitPod` →
   `pkg/kubelet/lifecycle/predicate.go` `predicateAdmitHandler.Admit` → `generalFilter` → NodeResourcesFit's
   `Fits`): a resource short is `Deferred`, "Node didn't have enough resource: cpu, requested: R, used: U,
   capacity: C" (the first short one in `Fits`' order: pods, cpu, memory, ephemeral-storage, then the rest);
3. else the resize is admitted (and its allocation recorded: the next resize on the node sees it).

Resizes pending on a node are retried in `sortPendingResizes` order: those that raise no request first, then higher
priority, then Guaranteed pods, then the longest pending (kubefit: the scenario's order). The CPU and Memory
Manager static policies (a Guaranteed pod's exclusive cpus) and swap are node configuration kubefit does not read.
"""

from __future__ import annotations

from dataclasses import dataclass

INFEASIBLE, DEFERRED, ADMITTED = "Infeasible", "Deferred", "InPlace"
FITS_ORDER = ("pods", "cpu", "memory", "ephemeral-storage")


@dataclass(frozen=True)
class Verdict:
    """The kubelet's answer to one resize: InPlace (admitted), Deferred or Infeasible, and its message."""

    decision: str
    message: str = ""


def judge(requests: dict[str, int], allocatable: dict[str, int], used: dict[str, int], pods_used: int) -> Verdict:
    """`canResizePod` for a pod asking `requests` (scheduler units: millicores, bytes, counts) on a node with
    `allocatable`, the other pods' allocated requests `used` and their count `pods_used`."""
    cpu, memory = requests.get("cpu", 0), requests.get("memory", 0)
    cpu_cap, memory_cap = allocatable.get("cpu", 0), allocatable.get("memory", 0)
    if cpu > cpu_cap or memory > memory_cap:
        if memory > memory_cap:
            what = f"memory, requested: {memory}, capacity: {memory_cap}"
        else:
            what = f"cpu, requested: {cpu}, capacity: {cpu_cap}"
        return Verdict(INFEASIBLE, f"Node didn't have enough capacity: {what}")
    short = _first_short(requests, allocatable, used, pods_used)
    if short is not None:
        return Verdict(DEFERRED, short)
    return Verdict(ADMITTED)


def _first_short(requests: dict[str, int], allocatable: dict[str, int], used: dict[str, int],
                 pods_used: int) -> str | None:
    """NodeResourcesFit's `Fits` (`fitsRequest`) as the kubelet's `InsufficientResourceError` says it: the
    pod count first, then cpu, memory, ephemeral-storage and the other resources the pod asks."""
    allowed = allocatable.get("pods", 0)
    if pods_used + 1 > allowed:
        return f"Node didn't have enough resource: pods, requested: 1, used: {pods_used}, capacity: {allowed}"
    names = [n for n in FITS_ORDER[1:] if requests.get(n, 0) > 0]
    names += sorted(n for n in requests if n not in FITS_ORDER and requests[n] > 0)
    for name in names:
        asked, have, taken = requests[name], allocatable.get(name, 0), used.get(name, 0)
        if asked > have - taken:
            return (f"Node didn't have enough resource: {name}, requested: {asked}, used: {taken}, "
                    f"capacity: {have}")
    return None


def increases(before: dict[str, int], after: dict[str, int]) -> bool:
    """`isResizeIncreasingRequests`: the pod's cpu or memory request grows."""
    return after.get("cpu", 0) > before.get("cpu", 0) or after.get("memory", 0) > before.get("memory", 0)
