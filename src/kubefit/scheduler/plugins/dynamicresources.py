"""DynamicResources: a pod's ResourceClaims must be allocatable on the node (kube-scheduler v1.34.1).

`pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go`:

* PreEnqueue (`foreachPodResourceClaim`): every claim must exist (a template's claim created by the
  resourceclaim controller, owned by the pod), none being deleted; else the pod never enters the queue.
* PreFilter: no claims, Skip; a claim's request naming a class that does not exist,
  UnschedulableAndUnresolvable for every node; allocated claims remember their node selector; the others
  are the claims to allocate (`CanBeReserved` is always true in v1.34: `reservedFor` never refuses here).
* Filter, per node: an allocated claim whose node selector the node misses is "resourceclaim not
  available on the node"; the claims to allocate go through the structured allocator on the node's pools
  with the devices in use now ("cannot allocate all claims" when they do not all fit); both
  UnschedulableAndUnresolvable (`statusUnschedulable`). An allocator error fails the whole cycle.
* PostFilter: no claims (or PreFilter refused them), "no new claims to deallocate"; an allocated claim
  unavailable on some node and reserved by no one else is deallocated ("deallocation of ResourceClaim
  completed"; upstream picks one at random from a map, kubefit the first in claim order); else "still
  not schedulable".
* No Score in v1.34. Reserve/PreBind are `DraState.reserve`, run by the engine when it binds the pod.

Filter's `filterTimeout` (10 s of wall clock per node) is not reproduced: kubefit's allocation on a node
never stops early, as kube-scheduler's does not when it finishes in time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from kubefit.api.cluster import ClusterObjects
from kubefit.api.core import Pod
from kubefit.scheduler.plugins.base import (
    UNRESOLVABLE,
    CycleContext,
    FilterOutcome,
    PreFilterOutcome,
    SchedulingCycleError,
)
from kubefit.scheduler.state import ClusterState

if TYPE_CHECKING:  # the DRA modules load when a pod has claims (startup of runs without DRA stays as it was)
    from kubefit.scheduler.dra.allocator import ClaimToAllocate
    from kubefit.scheduler.dra.state import ClaimKey, DraState

NAME = "DynamicResources"
CANNOT_ALLOCATE = "cannot allocate all claims"
NOT_AVAILABLE = "resourceclaim not available on the node"
NO_CLAIMS = "no new claims to deallocate"
STILL_NOT_SCHEDULABLE = "still not schedulable"
DEALLOCATED = "deallocation of ResourceClaim completed"
LABELS = [CANNOT_ALLOCATE, NOT_AVAILABLE]
PRE = f"{NAME}/pre"  # the cycle's PreFilter state in CycleContext.cache


@dataclass
class PreState:
    """The cycle state PreFilter leaves (upstream's stateData)."""

    claims: list[tuple[str, ClaimKey, Any]]  # (pod claim name, key, ResourceClaim)
    available_on: list[np.ndarray | None]  # per claim: the nodes its allocation's node selector matches
    to_allocate: list[ClaimToAllocate]
    key: int  # what the claims to allocate ask for, interned (equal keys, equal verdicts)
    unavailable: set[int] = field(default_factory=set)  # claims Filter found unavailable on some node


def cycle_error(message: str) -> Exception:
    """The framework's error for a failing Filter: the cycle stops with it."""

    return SchedulingCycleError(f'running "{NAME}" filter plugin: {message}')


def claim_index(objects: ClusterObjects) -> dict[ClaimKey, Any]:
    memo = objects.__dict__.setdefault("_memo", {})
    if "resource_claims" not in memo:
        memo["resource_claims"] = {(c.meta.namespace, c.meta.name): c for c in objects.of("ResourceClaim")}
        memo["claim_templates"] = {(t.meta.namespace, t.meta.name) for t in objects.of("ResourceClaimTemplate")}
    return memo


@dataclass
class DynamicResources:
    """`scores`: v1.35+ DynamicResources is a Score plugin too (kubernetes#134711)."""

    name: str = NAME
    objects: ClusterObjects = field(default_factory=ClusterObjects)
    scores: bool = False

    # ------------------------------------------------------------------ PreEnqueue
    def pre_enqueue(self, pod: Pod) -> PreFilterOutcome | None:
        """`PreEnqueue`: the claims as the scenario gives them (a template's claim is made by the controller)."""
        if not pod.resource_claims:
            return None
        memo = claim_index(self.objects)
        for pod_claim in pod.resource_claims:
            problem = self._lookup_problem(pod, pod_claim, memo)
            if problem is not None:
                return PreFilterOutcome(code=UNRESOLVABLE, reasons=(problem,))
        return None

    @staticmethod
    def _lookup_problem(pod: Pod, pod_claim: dict[str, Any], memo: dict) -> str | None:
        claims = memo["resource_claims"]
        if pod_claim.get("resourceClaimName"):
            key, own = (pod.namespace, pod_claim["resourceClaimName"]), False
        else:
            status = [c for n, c in pod.resource_claim_statuses if n == pod_claim.get("name")]
            if not status:
                if (pod.namespace, pod_claim.get("resourceClaimTemplateName")) in memo["claim_templates"]:
                    return None  # the resourceclaim controller creates it
                return f'pod "{pod.namespace}/{pod.name}": ResourceClaim not created yet'
            if status[0] is None:
                return None
            key, own = (pod.namespace, status[0]), True
        claim = claims.get(key)
        if claim is None:
            return f'could not find ResourceClaim "{key[0]}/{key[1]}"'
        if claim.deleting:
            return f'resourceclaim "{key[1]}" is being deleted'
        if own and (claim.controller_uid != pod.uid or claim.controller_kind != "Pod"):
            return (f"ResourceClaim {key[0]}/{key[1]} was not created for pod {pod.namespace}/{pod.name} "
                    f"(pod is not owner)")
        return None

    # ------------------------------------------------------------------ PreFilter
    def pre_filter(self, state: ClusterState, ctx: CycleContext) -> PreFilterOutcome:
        pod = ctx.pod
        ctx.cache[PRE] = None
        if not pod.resource_claims or state.dra is None:
            return PreFilterOutcome(skip=True)
        from kubefit.scheduler.dra.allocator import ClaimToAllocate
        from kubefit.scheduler.dra.state import ClaimLookupError

        dra: DraState = state.dra
        try:
            claims = dra.pod_claims(pod)
        except ClaimLookupError as exc:
            return PreFilterOutcome(code=UNRESOLVABLE, reasons=(str(exc),))
        if not claims:
            return PreFilterOutcome(skip=True)
        available_on: list[np.ndarray | None] = []
        to_allocate = []
        for _name, key, claim in claims:
            if claim.allocation is not None:
                selector = claim.allocation.node_selector
                available_on.append(None if selector is None else _selector_mask(state, selector))
                continue
            available_on.append(None)
            problem = self._request_problem(dra, key, claim)
            if problem is not None:
                return PreFilterOutcome(code=UNRESOLVABLE, reasons=(problem,))
            to_allocate.append(ClaimToAllocate(f"{key[0]}/{key[1]}", claim.spec))
        key = dra.intern(("claims", *(c.spec.key() for c in to_allocate)))
        ctx.cache[PRE] = PreState(claims, available_on, to_allocate, key)
        return PreFilterOutcome()

    @staticmethod
    def _request_problem(dra: DraState, key: ClaimKey, claim) -> str | None:
        """`validateDeviceClass` of each request (subrequests named `request/subrequest`)."""
        for request in claim.spec.requests:
            subs = [(request.name, request.exactly)] if request.exactly is not None else \
                [(f"{request.name}/{s.name}", s) for s in request.first_available]
            if not subs or (request.exactly is None and not request.first_available):
                return f"resource claim {key[0]}/{key[1]}, request {request.name}: unknown request type"
            for name, sub in subs:
                if not sub.device_class_name:

                    raise SchedulingCycleError(f'running PreFilter plugin "{NAME}": request {name}: unsupported '
                                               f'request type')
                if sub.device_class_name not in dra.catalog.classes:
                    return f"request {name}: device class {sub.device_class_name} does not exist"
        return None

    # ------------------------------------------------------------------ Filter
    def filter(self, state: ClusterState, ctx: CycleContext, idx: np.ndarray) -> FilterOutcome:
        pre: PreState | None = ctx.cache.get(PRE)
        if pre is None:
            return FilterOutcome.passing(len(idx))
        from kubefit.scheduler.dra.allocator import AllocationError

        dra: DraState = state.dra
        matrix = np.zeros((len(idx), 2), dtype=bool)
        if pre.to_allocate:
            try:
                matrix[:, 0] = ~dra.fits_nodes(idx, pre.key, pre.to_allocate)
            except AllocationError as exc:
                raise cycle_error(str(exc)) from None
        for i, mask in enumerate(pre.available_on):
            if mask is None:
                continue
            missing = ~mask[idx] & ~matrix[:, 0]  # recorded where the allocation of the others succeeded
            if missing.any():
                pre.unavailable.add(i)
                matrix[:, 1] |= missing
        matrix[:, 1] &= ~matrix[:, 0]
        codes = np.where(matrix.any(axis=1), UNRESOLVABLE, 0).astype(np.int8)
        return FilterOutcome(codes, list(LABELS), matrix)

    # ------------------------------------------------------------------ PostFilter
    def post_filter(self, state: ClusterState, ctx: CycleContext, ran_on: np.ndarray) -> tuple[str, list[ClaimKey]]:
        """PostFilter after a cycle that found no node: (its message, the claims it deallocates). `ran_on`:
        the nodes this plugin's Filter ran on (those no earlier Filter plugin rejected)."""
        pre: PreState | None = ctx.cache.get(PRE)
        if pre is None or not pre.claims:
            return NO_CLAIMS, []
        if len(ran_on) and any(m is not None for m in pre.available_on):
            try:
                self.filter(state, ctx, ran_on)  # records the claims unavailable on some node
            except Exception:  # noqa: BLE001 - the cycle's own Filter raised it already
                pass
        pod = ctx.pod
        for index in sorted(pre.unavailable):
            _name, key, claim = pre.claims[index]
            reserved = claim.reserved_for
            if not reserved or (len(reserved) == 1 and reserved[0].uid == pod.uid):
                return DEALLOCATED, [key]
        return STILL_NOT_SCHEDULABLE, []

    # ------------------------------------------------------------------ engine hooks
    def reads_other_nodes_for(self, state: ClusterState, ctx: CycleContext) -> bool:
        """Binds elsewhere can change this pod's verdicts when it names a claim other pods may share, or when
        devices are reachable from several nodes (network-attached pools)."""
        pod = ctx.pod
        if not pod.resource_claims or state.dra is None:
            return False
        return state.dra.catalog.nonlocal_pools or any(c.get("resourceClaimName") for c in pod.resource_claims)

    def signature(self, pod: Pod) -> tuple:
        """What the pod's claims ask for, not which claims they are: a template's name, or a claim's spec and
        whether (and where) it is allocated as loaded. Pods of one workload sign alike; a pod naming a
        claim others may share is re-evaluated every cycle anyway (`reads_other_nodes_for`)."""
        claims = claim_index(self.objects)["resource_claims"]
        parts = []
        for c in pod.resource_claims:
            name = c.get("resourceClaimName") or next(
                (claim for n, claim in pod.resource_claim_statuses if n == c.get("name")), None)
            if name is None:
                parts.append(("template", c.get("name"), c.get("resourceClaimTemplateName")))
                continue
            claim = claims.get((pod.namespace, name))
            allocation = None if claim is None else claim.allocation
            parts.append(("claim", c.get("name"), None if claim is None else claim.spec.key(),
                          None if allocation is None else freeze(allocation.node_selector)))
        return (pod.namespace, tuple(parts))


def freeze(value: Any) -> Any:
    from kubefit.k8s.nodeaffinity import freeze as frozen

    return frozen(value)


def _selector_mask(state: ClusterState, selector: dict[str, Any]) -> np.ndarray:
    """`nodeaffinity.NewNodeSelector(...).Match` over every node."""
    from kubefit.k8s.nodeaffinity import NodeSelector
    from kubefit.scheduler.plugins.selectors import node_labels

    return NodeSelector.parse(selector).mask(node_labels(state))
