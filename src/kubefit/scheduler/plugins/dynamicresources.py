"""DynamicResources: a pod's ResourceClaims must be allocatable on the node (kube-scheduler v1.34.1 to v1.37).

`pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go` (v1.36.3; `extendeddynamicresources.go`):

* PreEnqueue (`foreachPodResourceClaim`): every claim must exist (a template's claim created by the
  resourceclaim controller, owned by the pod), none being deleted; else the pod never enters the queue.
* PreFilter: no claims (and no device-backed extended resource), Skip; a claim reserved for 256 others,
  "resourceclaim in use"; a request naming a class that does not exist, UnschedulableAndUnresolvable for every
  node; allocated claims remember their node selector (one whose devices failed their binding conditions is
  available nowhere); the others are the claims to allocate. With DRAExtendedResource (v1.36+), a pod asking for
  an extended resource a DeviceClass backs gets the scheduler's claim for it (`preFilterExtendedResources`).
* Filter, per node: the scheduler's claim of a prior cycle still holding requests, "cannot schedule extended
  resource claim"; an extended resource neither the node nor a class provides, "cannot fit resource"; the
  node's variant of the scheduler's claim (its requests for what DRA provides there, `filterExtendedResources`)
  joins the claims to allocate; an allocated claim whose node selector the node misses is "resourceclaim not
  available on the node"; the claims go through the version's structured allocator on the node's pools with
  the devices in use now ("cannot allocate all claims"; v1.35+: "invalid resource pools were encountered"
  when an invalid pool was in the way); all UnschedulableAndUnresolvable. An allocator error fails the cycle.
* PostFilter: no claims (or PreFilter refused them), "no new claims to deallocate"; an allocated claim
  unavailable on some node and reserved by no one else is deallocated ("deallocation of ResourceClaim
  completed"; upstream picks one at random from a map, kubefit the first in claim order); a stale claim of the
  scheduler is deleted ("deletion of ResourceClaim completed"); else "still not schedulable".
* Score (v1.35+, kubernetes#134711: `Score`, `computeScore`, `NormalizeScore`): see `DynamicResources.score`.
  No Score in v1.34. Reserve/PreBind are `DraState.reserve`, run by the engine when it binds the pod.

Filter's `filterTimeout` (10 s of wall clock per node) is not reproduced: kubefit's allocation on a node
never stops early, as kube-scheduler's does not when it finishes in time. PreBind's wait for binding conditions
(up to `bindingTimeout`) is assumed to succeed.
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
DELETED = "deletion of ResourceClaim completed"
IN_USE = "resourceclaim in use"
INVALID_POOLS = "invalid resource pools were encountered"
STALE_EXTENDED_CLAIM = "cannot schedule extended resource claim"
CANNOT_FIT = "cannot fit resource"
LABELS = [CANNOT_ALLOCATE, NOT_AVAILABLE, INVALID_POOLS, STALE_EXTENDED_CLAIM, CANNOT_FIT]
NONE, STOP = -1, -2  # a node needing no allocation; a node filterExtendedResources refused
PRE = f"{NAME}/pre"  # the cycle's PreFilter state in CycleContext.cache


@dataclass
class ExtendedState:
    """`draExtendedResource` of the cycle: the pod's scalar requests (whole units) when one of its extended
    resources is backed by a DeviceClass, and the claim a prior cycle made for them ((key, claim) or None)."""

    scalars: dict[str, int]
    found: tuple[ClaimKey, Any] | None = None


@dataclass
class PreState:
    """The cycle state PreFilter leaves (upstream's stateData)."""

    claims: list[tuple[str, ClaimKey, Any]]  # (pod claim name, key, ResourceClaim); the scheduler's claim last
    available_on: list[np.ndarray | None]  # per claim: the nodes its allocation's node selector matches
    to_allocate: list[ClaimToAllocate]  # the user's claims to allocate
    key: int  # what the claims to allocate ask for, interned (equal keys, equal verdicts)
    unavailable: set[int] = field(default_factory=set)  # claims Filter found unavailable on some node
    extended: ExtendedState | None = None
    pod: Pod | None = None
    groups: list[tuple[int, list]] = field(default_factory=list)  # (claims id, claims) a node allocates
    group_of: dict[Any, int] = field(default_factory=dict)  # the node's extended requests → its group
    specs: dict[int, Any] = field(default_factory=dict)  # group → the spec of the scheduler's claim there


def binding_failed(claim) -> bool:
    """`isClaimReadyForBinding` fails: a device with binding conditions has one of its
    `bindingFailureConditions` True in `status.devices` (Filter then finds the claim unavailable everywhere and
    PostFilter deallocates it). A claim whose conditions are not met yet stays usable: a simulation assumes they
    are met before `bindingTimeout`."""
    for result in claim.allocation.results:
        if not result.binding_conditions:
            continue
        conditions = claim.device_conditions.get(result.device_id, {})
        if any(conditions.get(c) == "True" for c in result.binding_failure_conditions):
            return True
    return False


def _groups(groups: np.ndarray, needs: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """Each group of claims the nodes needing DRA allocate (`DynamicResources._node_groups`) with those nodes'
    rows (every node of one group, the common case: without sorting)."""
    if not len(groups):
        return []
    if needs.all() and int(groups.min()) == int(groups.max()):
        return [(int(groups[0]), np.arange(len(groups)))]
    return [(g, np.flatnonzero(needs & (groups == g))) for g in np.unique(groups[needs]).tolist()]


def ctx_pod(pre: PreState) -> Pod:
    return pre.pod


def can_be_reserved(claim, pod: Pod) -> bool:
    """`CanBeReserved` or `IsReservedForPod`: a claim reserved for 256 consumers takes no other pod."""
    from kubefit.api.dra import RESERVED_FOR_MAX_SIZE

    return len(claim.reserved_for) < RESERVED_FOR_MAX_SIZE or any(r.uid == pod.uid for r in claim.reserved_for)


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
    features: Any = None  # the allocator's features (`AllocatorFeatures(fts)`), None: v1.34's
    rules: Any = None  # the version's allocator rules (`kubefit.scheduler.dra.allocator.Rules`)
    extended_resources: bool = False  # DRAExtendedResource

    def __post_init__(self) -> None:
        from kubefit.scheduler.dra.allocator import V134, Rules

        self.features = self.features or V134
        self.rules = self.rules or Rules()
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
        if state.dra is None or not (pod.resource_claims or self.extended_resources):
            return PreFilterOutcome(skip=True)
        from kubefit.scheduler.dra.allocator import ClaimToAllocate
        from kubefit.scheduler.dra.state import ClaimLookupError

        dra: DraState = state.dra
        dra.configure(self.features, self.rules, self.extended_resources)
        try:
            claims = dra.pod_claims(pod)
        except ClaimLookupError as exc:
            return PreFilterOutcome(code=UNRESOLVABLE, reasons=(str(exc),))
        extended = self._extended(dra, ctx) if self.extended_resources else None
        if not claims and extended is None:
            return PreFilterOutcome(skip=True)
        available_on: list[np.ndarray | None] = []
        to_allocate = []
        every = list(claims) + ([("", *extended.found)] if extended is not None and extended.found else [])
        for _name, key, claim in every:
            if claim.allocation is not None:
                if not can_be_reserved(claim, pod):
                    return PreFilterOutcome(code=UNRESOLVABLE, reasons=(IN_USE,))
                selector = claim.allocation.node_selector
                mask = None if selector is None else _selector_mask(state, selector)
                if self.features.device_binding and binding_failed(claim):
                    mask = np.zeros(len(state.nodes), dtype=bool)  # isClaimReadyForBinding's error: unavailable
                available_on.append(mask)
                continue
            available_on.append(None)
            if extended is not None and extended.found and key == extended.found[0]:
                continue  # the scheduler's claim of a prior cycle: Filter refuses it
            problem = self._request_problem(dra, key, claim)
            if problem is not None:
                return PreFilterOutcome(code=UNRESOLVABLE, reasons=(problem,))
            to_allocate.append(ClaimToAllocate(f"{key[0]}/{key[1]}", claim.spec))
        if extended is not None and not extended.found:
            available_on.append(None)
        key = dra.intern(("claims", *(c.spec.key() for c in to_allocate)))
        ctx.cache[PRE] = PreState(every, available_on, to_allocate, key, extended=extended, pod=pod)
        return PreFilterOutcome()

    def _extended(self, dra: DraState, ctx: CycleContext):
        """`preFilterExtendedResources`: the pod's scalar requests when one of its extended resources is backed
        by a DeviceClass, and the claim a prior cycle made for them (None: the pod needs none)."""
        from kubefit.scheduler.dra.extended import pod_extended_requests

        scalars = pod_extended_requests(ctx.demand.requests, dra.catalog.resolver)
        if scalars is None:
            return None
        return ExtendedState(scalars, dra.extended_claim(ctx.pod))

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
        from kubefit.scheduler.dra.state import CANNOT, INVALID_POOLS_CODE

        dra: DraState = state.dra
        matrix = np.zeros((len(idx), len(LABELS)), dtype=bool)
        groups, stop = self._node_groups(state, pre, idx, matrix)
        needs = ~stop & (groups >= 0)
        for g, rows in _groups(groups, needs):
            claims_id, claims = pre.groups[g]
            try:
                codes = dra.fits_nodes(idx[rows], claims_id, claims)
            except AllocationError as exc:
                raise cycle_error(str(exc)) from None
            matrix[rows, 0] = codes == CANNOT
            matrix[rows, 2] = codes == INVALID_POOLS_CODE
        failed = matrix[:, 0] | matrix[:, 2] | stop
        for i, mask in enumerate(pre.available_on):
            if mask is None:
                continue
            missing = ~mask[idx] & ~failed  # recorded where the allocation of the others succeeded
            if missing.any():
                pre.unavailable.add(i)
                matrix[:, 1] |= missing
        codes = np.where(matrix.any(axis=1), UNRESOLVABLE, 0).astype(np.int8)
        return FilterOutcome(codes, list(LABELS), matrix)

    def _node_groups(self, state: ClusterState, pre: PreState, idx: np.ndarray, matrix: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
        """Per node of `idx`, which claims it must allocate (an index into `pre.groups`, -1: none), and whether
        `filterExtendedResources` already refused it (its reason set in `matrix`)."""
        groups = np.zeros(len(idx), dtype=np.int64)
        stop = np.zeros(len(idx), dtype=bool)
        if not pre.groups:
            pre.groups.append((pre.key, pre.to_allocate))
        extended = pre.extended
        if extended is None:
            if not pre.to_allocate:
                groups[:] = -1
            return groups, stop
        if extended.found is not None and extended.found[1].spec.requests:
            matrix[:, 3] = stop[:] = True  # a claim of a prior cycle: PostFilter deletes it
            return groups, stop
        for i, node in enumerate(idx.tolist()):
            group = self._extended_group(state, pre, node)
            if group == STOP:
                matrix[i, 4] = stop[i] = True
            else:
                groups[i] = group
        return groups, stop

    def _extended_group(self, state: ClusterState, pre: PreState, node: int) -> int:
        """`filterExtendedResources` for one node: the group of claims to allocate there (the user's, then the
        node's variant of the scheduler's claim), NONE when nothing is to allocate, STOP for "cannot fit"."""
        from kubefit.scheduler.dra.allocator import ClaimToAllocate
        from kubefit.scheduler.dra.extended import CANNOT_FIT, extended_claim_spec, node_requests

        dra: DraState = state.dra
        extended = pre.extended
        needed = node_requests(extended.scalars, dra.node_scalars(node), dra.catalog.resolver)
        if needed == CANNOT_FIT:
            return STOP
        user_claims = len(pre.claims) > (1 if extended.found else 0)
        if not needed and not user_claims:
            return NONE
        if extended.found is not None:  # allocated by a prior cycle (no requests left to allocate here)
            spec = None
        else:
            spec = extended_claim_spec(ctx_pod(pre), needed, dra.catalog.resolver)
        key = frozenset(needed.items()) if spec is not None else None
        group = pre.group_of.get(key)
        if group is None:
            claims = list(pre.to_allocate)
            if spec is not None:
                claims.append(ClaimToAllocate(f"{ctx_pod(pre).namespace}/<extended-resources>", spec))
            group = pre.group_of[key] = len(pre.groups)
            pre.groups.append((dra.intern(("claims", *(c.spec.key() for c in claims))), claims))
            pre.specs[group] = spec
        return group if pre.groups[group][1] else NONE

    # ------------------------------------------------------------------ PostFilter
    def post_filter(self, state: ClusterState, ctx: CycleContext, ran_on: np.ndarray) -> tuple[str, list]:
        """PostFilter after a cycle that found no node: (its message, the claims it deallocates or deletes).
        `ran_on`: the nodes this plugin's Filter ran on (those no earlier Filter plugin rejected)."""
        pre: PreState | None = ctx.cache.get(PRE)
        if pre is None or not pre.claims and pre.extended is None:
            return NO_CLAIMS, []
        if len(ran_on) and any(m is not None for m in pre.available_on):
            try:
                self.filter(state, ctx, ran_on)  # records the claims unavailable on some node
            except Exception:  # noqa: BLE001 - the cycle's own Filter raised it already
                pass
        pod = ctx.pod
        found = pre.extended.found if pre.extended is not None else None
        for index in sorted(pre.unavailable):
            _name, key, claim = pre.claims[index]
            if found is not None and key == found[0]:
                break
            reserved = claim.reserved_for
            if not reserved or (len(reserved) == 1 and reserved[0].uid == pod.uid):
                return DEALLOCATED, [key]
        if found is not None:
            return DELETED, [("delete", found[0])]
        return STILL_NOT_SCHEDULABLE, []

    def pre_static_for(self, state: ClusterState, ctx: CycleContext) -> bool:
        """Whether binds can never change this pod's PreFilter and PreScore outcomes: without claims (and
        without extended resources backed by devices) PreFilter skips whatever is bound, and PreScore never
        skips. The engine then does not ask them again after each bind."""
        return state.dra is None or not (ctx.pod.resource_claims or self.extended_resources)

    # ------------------------------------------------------------------ Score
    def pre_score(self, state: ClusterState, ctx: CycleContext) -> bool:
        """No PreScore upstream: never skipped (a pod without claims scores 0 everywhere)."""
        return False

    def score(self, state: ClusterState, ctx: CycleContext, idx: np.ndarray) -> np.ndarray:
        """`Score` (v1.36.3 `dynamicresources.go`): 0 when scoring is off, the pod has no claims, or the node has
        no `nodeAllocations` entry, which Filter writes only when `state.allocator != nil`, i.e. some claim
        needs allocation in this cycle (all claims allocated: 0 everywhere), and the node needed DRA. Otherwise
        `computeScore` over the pod's claims in order: an allocated claim's own `status.allocation`, the others
        the node's allocation results in order (`unallocatedIndex`); per claim `subrequest_rank_score` (the
        scheduler's claim for extended resources has no subrequests: it adds nothing).

        v1.35.4 (`scores_by_claim_index`) took `allocationResults[i]` for the i-th claim of all: with an
        allocated claim beside claims to allocate there are fewer results than claims and Score fails on
        every node with an entry (`_SCORE_ERROR` here, raised by `normalize` when such a node is feasible)."""
        out = np.zeros(len(idx), dtype=np.int64)
        pre: PreState | None = ctx.cache.get(PRE)
        if not self.scores or pre is None or not len(idx):
            return out
        needs_allocator = bool(pre.to_allocate) or (pre.extended is not None and pre.extended.found is None)
        if not needs_allocator:
            return out
        from kubefit.scheduler.dra.allocator import AllocationError

        dra: DraState = state.dra
        matrix = np.zeros((len(idx), len(LABELS)), dtype=bool)
        groups, stop = self._node_groups(state, pre, idx, matrix)
        fixed = sum(subrequest_rank_score(claim.spec, result_requests(claim.allocation))
                    for _n, _k, claim in pre.claims if claim.allocation is not None)
        needs = ~stop & (groups >= 0)
        for g, rows in _groups(groups, needs):
            claims_id, claims = pre.groups[g]
            try:
                answers, which = dra.allocated_requests(idx[rows], claims_id, claims)
            except AllocationError:  # Filter failed the cycle with it already
                continue
            if self.scores_by_claim_index and len(pre.to_allocate) < len(pre.claims):
                values = [0 if a is None else _SCORE_ERROR for a in answers]
            else:
                values = [0 if a is None else fixed + sum(subrequest_rank_score(c.spec, requests)
                                                          for c, requests in zip(claims, a, strict=True))
                          for a in answers]
            out[rows] = np.asarray(values, dtype=np.int64)[which]
        return out

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
        if state.dra is None or not (pod.resource_claims or ctx.cache.get(PRE) is not None):
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
