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
* Score (v1.35+, kubernetes#134711: `Score`, `computeScore`, `NormalizeScore`): see `DynamicResources.score`.
  No Score in v1.34. Reserve/PreBind are `DraState.reserve`, run by the engine when it binds the pod.

Filter's `filterTimeout` (10 s of wall clock per node) is not reproduced: kubefit's allocation on a node
never stops early, as kube-scheduler's does not when it finishes in time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from kubefit.api.cluster import ClusterObjects
from kubefit.api.core import Pod
from kubefit.api.dra import FIRST_AVAILABLE_MAX_SIZE, AllocationResult, ClaimSpec
from kubefit.scheduler.plugins.base import (
    UNRESOLVABLE,
    CycleContext,
    FilterOutcome,
    PreFilterOutcome,
    SchedulingCycleError,
)
from kubefit.scheduler.plugins.tainttoleration import default_normalize
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
        memo["refusable"] = refusable_templates(objects)
    return memo


def refusable_templates(objects: ClusterObjects) -> tuple[frozenset[str], frozenset[tuple[str, str]]]:
    """Where the API server may refuse a claim made from a template (`kubefit.scheduler.dra.controller`): the
    namespaces with a ResourceQuota on claims, and the templates asking for admin access. A pod of those signs
    as itself: whether its claim exists is its own (one quota, two pods alike: one runs, one waits)."""
    from kubefit.manifests.claimquota import COUNT_CLAIMS, IMPLICIT_PER_CLASS, PER_CLASS

    quoted = frozenset(q.meta.namespace for q in objects.of("ResourceQuota")
                       if any(n == COUNT_CLAIMS or n.endswith(PER_CLASS) or n.startswith(IMPLICIT_PER_CLASS)
                              or "/" in n and n.startswith("requests.") for n in q.hard))
    admin = frozenset((t.meta.namespace, t.meta.name) for t in objects.of("ResourceClaimTemplate")
                      if any(r.exactly is not None and r.exactly.admin_access for r in t.spec.requests))
    return quoted, admin


def subrequest_rank_score(spec: ClaimSpec, requests: frozenset[str] | set[str]) -> int:
    """`computeScore` for one claim: each `firstAvailable` request whose subrequest at index i is among the
    allocation's result requests (`request/subrequest`) adds `FirstAvailableDeviceRequestMaxSize - i` (8 for
    the first choice, 7 for the second, ...); `exactly` requests add nothing."""
    score = 0
    for request in spec.requests:
        if request.exactly is not None:
            continue
        for i, sub in enumerate(request.first_available):
            if f"{request.name}/{sub.name}" in requests:
                score += FIRST_AVAILABLE_MAX_SIZE - i
    return score


def result_requests(allocation: AllocationResult) -> frozenset[str]:
    return frozenset(r.request for r in allocation.results)


@dataclass
class DynamicResources:
    """`scores`: v1.35+ DynamicResources is a Score plugin too (kubernetes#134711), and v1.36's Score answers 0
    unless DRAPrioritizedList is on (the `DRA_SCORE` variant; v1.35 with the gate off is not told apart: its
    allocator refuses `firstAvailable` requests anyway). `scores_by_claim_index`: v1.35's `computeScore`,
    which reads the node's allocation results by the claim's index among all the pod's claims."""

    name: str = NAME
    objects: ClusterObjects = field(default_factory=ClusterObjects)
    scores: bool = False
    scores_by_claim_index: bool = False
    normalize_needs_context = True  # NormalizeScore raises v1.35's Score error (`_SCORE_ERROR` in the raw scores)

    # ------------------------------------------------------------------ PreEnqueue
    def pre_enqueue(self, pod: Pod, state: ClusterState | None = None) -> PreFilterOutcome | None:
        """`PreEnqueue`: the claims of the run (`state`: those the resourceclaim controller made or could not
        make in it), else as the scenario gives them (a template's claim is made by the controller)."""
        if not pod.resource_claims:
            return None
        if state is not None and state.dra is not None:
            from kubefit.scheduler.dra.state import ClaimLookupError

            try:
                state.dra.pod_claims(pod)
            except ClaimLookupError as exc:
                return PreFilterOutcome(code=UNRESOLVABLE, reasons=(str(exc),))
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

    # ------------------------------------------------------------------ Score
    def pre_score(self, state: ClusterState, ctx: CycleContext) -> bool:
        """No PreScore upstream: never skipped (a pod without claims scores 0 everywhere)."""
        return False

    def score(self, state: ClusterState, ctx: CycleContext, idx: np.ndarray) -> np.ndarray:
        """`Score` (v1.36.3 `dynamicresources.go`): 0 when scoring is off, the pod has no claims, or the node has
        no `nodeAllocations` entry, which Filter writes only when `state.allocator != nil`, i.e. some claim
        needs allocation in this cycle (all claims allocated: 0 everywhere). Otherwise `computeScore` over the
        pod's claims in order: an allocated claim's own `status.allocation`, the others the node's allocation
        results in order (`unallocatedIndex`); per claim `subrequest_rank_score`.

        v1.35.4 (`scores_by_claim_index`) took `allocationResults[i]` for the i-th claim of all: with an
        allocated claim beside claims to allocate there are fewer results than claims and Score fails on
        every node with an entry (`_SCORE_ERROR` here, raised by `normalize` when such a node is feasible)."""
        out = np.zeros(len(idx), dtype=np.int64)
        pre: PreState | None = ctx.cache.get(PRE)
        if not self.scores or pre is None or not pre.to_allocate or not len(idx):
            return out
        from kubefit.scheduler.dra.allocator import AllocationError

        dra: DraState = state.dra
        try:
            answers, which = dra.allocated_requests(idx, pre.key, pre.to_allocate)
        except AllocationError:  # Filter failed the cycle with it already
            return out
        fixed = 0
        if self.scores_by_claim_index and len(pre.to_allocate) < len(pre.claims):
            values = [0 if a is None else _SCORE_ERROR for a in answers]
            return np.asarray(values, dtype=np.int64)[which]
        for _name, _key, claim in pre.claims:
            if claim.allocation is not None:
                fixed += subrequest_rank_score(claim.spec, result_requests(claim.allocation))
        values = [0 if a is None else fixed + sum(subrequest_rank_score(c.spec, requests)
                                                  for c, requests in zip(pre.to_allocate, a, strict=True))
                  for a in answers]
        return np.asarray(values, dtype=np.int64)[which]

    def normalize(self, raw: np.ndarray, ctx: CycleContext) -> np.ndarray:
        """`NormalizeScore`: `helper.DefaultNormalizeScore(MaxNodeScore, false, scores)`; v1.35's Score error
        (`RunScorePlugins` wraps it) when a feasible node met it."""
        if len(raw) and int(raw.min()) == _SCORE_ERROR:
            pre: PreState = ctx.cache[PRE]
            raise SchedulingCycleError(f'running Score plugins: plugin "{NAME}" failed with: number of '
                                       f'allocations {len(pre.to_allocate)} is smaller than number of claims')
        return default_normalize(raw, False)

    def static_score_for(self, state: ClusterState, ctx: CycleContext) -> bool:
        """Whether binds can never change this pod's raw scores (rows.score_kernel): 0 everywhere when the
        plugin does not score or PreFilter skipped it (no claims), so the engine keeps its row kernels."""
        return not self.scores or ctx.cache.get(PRE) is None

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
        whether (and where) it is allocated as loaded. Pods of one workload sign alike — but where the API
        server may refuse a template's claim (`refusable_templates`), each pod signs as itself; a pod naming a
        claim others may share is re-evaluated every cycle anyway (`reads_other_nodes_for`)."""
        memo = claim_index(self.objects)
        claims, (quoted, admin) = memo["resource_claims"], memo["refusable"]
        parts = []
        for c in pod.resource_claims:
            name = c.get("resourceClaimName") or next(
                (claim for n, claim in pod.resource_claim_statuses if n == c.get("name")), None)
            if name is None:
                template = c.get("resourceClaimTemplateName")
                own = (pod.name, pod.uid) if pod.namespace in quoted or (pod.namespace, template) in admin else ()
                parts.append(("template", c.get("name"), template, *own))
                continue
            claim = claims.get((pod.namespace, name))
            allocation = None if claim is None else claim.allocation
            parts.append(("claim", c.get("name"), None if claim is None else claim.spec.key(),
                          None if allocation is None else (freeze(allocation.node_selector),
                                                           result_requests(allocation))))
        return (pod.namespace, tuple(parts))


_SCORE_ERROR = -1  # a node where v1.35's Score fails (no raw score is negative)


def freeze(value: Any) -> Any:
    from kubefit.k8s.nodeaffinity import freeze as frozen

    return frozen(value)


def _selector_mask(state: ClusterState, selector: dict[str, Any]) -> np.ndarray:
    """`nodeaffinity.NewNodeSelector(...).Match` over every node."""
    from kubefit.k8s.nodeaffinity import NodeSelector
    from kubefit.scheduler.plugins.selectors import node_labels

    return NodeSelector.parse(selector).mask(node_labels(state))
