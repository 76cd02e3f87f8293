"""The claims and devices of one run: what kube-scheduler's DRA manager and the resourceclaim controller keep.

`DraState` lives on the run's ClusterState (`state.dra`), so everything built on the engine sees it: the
claims as they are now (loaded, allocated by a bind, created from a template), which devices are in use,
and per node what its pools offer. It changes only through

* `reserve` (the plugin's Reserve + PreBind, called by `Engine.bind`): each unallocated claim of the pod
  gets the allocation the allocator finds on the node (the one Filter found), the pod joins every claim's
  `reservedFor`, the devices are in use for later pods;
* `release` (`ClusterState.unbind`: a pod evicted, ended, or moved by a plan): the resourceclaim
  controller's work, the pod leaves `reservedFor`, a claim no one reserves is deallocated
  (`syncClaim`: "deallocate the claim as soon as the last consumer stops using it"), and the claims made
  for the pod from a template are deleted with it;
* `deallocate` (the plugin's PostFilter).

A claim from a ResourceClaimTemplate is made as the resourceclaim controller makes it, through the API server
(`kubefit.scheduler.dra.controller`: named `<pod>-<pod claim>-<5 characters>`, owned by the pod, annotated, spec
from the template; validated and admitted by the claims' ResourceQuotas). A claim named in the pod's
`status.resourceClaimStatuses` that is gone (or not the pod's) is made anew, as the controller does. The pods of
the scenario get theirs when the state is made, in document order (the order the API server saw them created:
what a ResourceQuota admits first); a pod created during a run (a copy, a controller's replacement, a timeline's
arrival) at its first cycle. A refused claim is tried again at the pod's next cycle.

Copies (`copy`) are independent; a `frozen` copy (DefaultPreemption's dry run: upstream evaluates victims
with the cycle's PreFilter state, DynamicResources has no PreFilterExtensions in v1.34) ignores binds and
removals.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kubefit.api.cluster import ClusterObjects, ObjectMeta
from kubefit.api.core import Pod
from kubefit.api.dra import (
    RESERVED_FOR_MAX_SIZE,
    AllocationResult,
    ClaimSpec,
    ConsumerReference,
    DeviceClass,
    DeviceID,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)
from kubefit.k8s.names import generate_name
from kubefit.scheduler.dra.allocator import (
    V134,
    AllocatedState,
    Allocation,
    AllocationError,
    ClaimToAllocate,
    Features,
    NodeUnschedulable,
    Rules,
    allocate,
    relocate,
)
from kubefit.scheduler.dra.capacity import add_into, remove_from
from kubefit.scheduler.dra.controller import ClaimController, ClaimKey
from kubefit.scheduler.dra.extended import ClassResolver
from kubefit.scheduler.dra.pools import (
    Pool,
    PoolRules,
    by_pool,
    device_mask,
    foreign_pools,
    gather_pools,
    reachable,
)


class ClaimLookupError(Exception):
    """`foreachPodResourceClaim`'s errors: a claim not created yet, missing, being deleted, or not the pod's."""


@dataclass
class PoolView:
    """Each node's pools as one version's allocator gathers them, and what the allocator can tell apart."""

    node_pools: list[tuple[Pool, ...]]  # per node, in the allocator's pool order
    pool_nodes: dict[tuple[str, str], np.ndarray]  # (driver, pool) → nodes that reach it
    nonlocal_pools: bool  # a pool reached by more than one node (allNodes, a node selector)
    content_ids: list[tuple[int, ...]]  # per node: an id per pool of its devices' contents and flags
    notes: list[str] = field(default_factory=list)  # what the pools say that the user should know


@dataclass
class DraCatalog:
    """What never changes in a run: classes, templates, the claims as loaded, and each node's pools as the
    version's allocator gathers them (`features`, `rules`; gathered when first needed, again when `configure`
    changes them)."""

    classes: dict[str, DeviceClass]
    templates: dict[ClaimKey, ResourceClaimTemplate]
    loaded: dict[ClaimKey, ResourceClaim]
    view: PoolView | None = None
    features: Features = V134
    rules: Rules = field(default_factory=Rules)
    builder: Callable[[Features, Rules], PoolView] | None = field(default=None, repr=False)
    allocatable: list[dict[str, int]] = field(default_factory=list, repr=False)  # per node, nano-units
    extended_resources: bool = False  # DRAExtendedResource: requests of device-backed extended resources
    generation: int = 0  # bumped by `DraState.configure` when the pools are gathered again
    selections: dict = field(default_factory=dict, repr=False)  # selector verdicts per device (AllocatedState)
    selector_mask: Callable[[dict[str, Any]], np.ndarray] | None = field(default=None, repr=False)
    node_names: list[str] = field(default_factory=list, repr=False)
    slices: list[ResourceSlice] = field(default_factory=list, repr=False)
    class_devices: dict[str, list[list[DeviceID]] | str] = field(default_factory=dict, repr=False)

    def pools(self) -> PoolView:
        if self.view is None:
            self.view = self.builder(self.features, self.rules)
        return self.view

    @property
    def node_pools(self) -> list[tuple[Pool, ...]]:
        return self.pools().node_pools

    @property
    def pool_nodes(self) -> dict[tuple[str, str], np.ndarray]:
        return self.pools().pool_nodes

    @property
    def nonlocal_pools(self) -> bool:
        return self.pools().nonlocal_pools

    @property
    def content_ids(self) -> list[tuple[int, ...]]:
        return self.pools().content_ids

    @property
    def notes(self) -> list[str]:
        return self.pools().notes

    def devices_of_class(self, class_name: str) -> list[list[DeviceID]] | None:
        """Per node, the devices of the class it reaches as `calculateDRAResourceTotals` counts them (every
        slice, the class's selectors); None when a selector fails on a device (upstream logs it, scores 0)."""
        found = self.class_devices.get(class_name)
        if found is None:
            found = self.class_devices[class_name] = self._devices_of_class(self.classes[class_name])
        return None if isinstance(found, str) else found

    def _devices_of_class(self, device_class: DeviceClass) -> list[list[DeviceID]] | str:
        from kubefit.k8s.cel import CelError, CelRuntimeError, compile_selector
        from kubefit.scheduler.dra.extended import device_totals

        masks: dict[int, np.ndarray] = {}

        def matches(driver: str, device) -> bool:
            return all(compile_selector(e).matches(driver, device) for e in device_class.selectors)

        out = []
        try:
            for n, name in enumerate(self.node_names):
                def selector_match(selector, n=n):
                    key = id(selector)
                    if key not in masks:
                        masks[key] = self.selector_mask(selector)
                    return bool(masks[key][n])
                out.append(device_totals(n, name, device_class, self.slices, selector_match, matches))
        except (CelError, CelRuntimeError) as exc:
            return str(exc)
        return out

    @functools.cached_property
    def loaded_extended(self) -> dict[tuple[str, str, str], ClaimKey]:
        """The scheduler's claims for pods' extended resources among the loaded claims, by their pod."""
        return {(k[0], c.controller_name, c.controller_uid): k for k, c in self.loaded.items() if c.extended}

    @functools.cached_property
    def resolver(self) -> ClassResolver:
        return ClassResolver.of(self.classes.values())


def build_catalog(node_names: list[str], objects: ClusterObjects,
                  selector_mask: Callable[[dict[str, Any]], np.ndarray], features: Features = V134,
                  rules: Rules | None = None) -> DraCatalog:
    """The run's static DRA view: every node's pools (GatherPools per node), classes, templates, claims."""
    rules = rules or Rules()
    catalog = DraCatalog(
        classes={c.meta.name: c for c in objects.of("DeviceClass")},
        templates={(t.meta.namespace, t.meta.name): t for t in objects.of("ResourceClaimTemplate")},
        loaded={(c.meta.namespace, c.meta.name): c for c in objects.of("ResourceClaim")},
        features=features, rules=rules, selector_mask=selector_mask, node_names=list(node_names),
        slices=list(objects.of("ResourceSlice")))
    catalog.builder = lambda f, r: build_view(node_names, objects, selector_mask, f, r)
    return catalog


def build_view(node_names: list[str], objects: ClusterObjects,
               selector_mask: Callable[[dict[str, Any]], np.ndarray], features: Features, rules: Rules) -> PoolView:
    """`GatherPools` for every node (nodes reaching the same slices share the result), and per node an id per
    pool of what its devices offer, with the values of attributes no selector reads renamed in order of
    appearance on the node (equal ids, equal allocations: such values are only compared with each other)."""
    slices: list[ResourceSlice] = list(objects.of("ResourceSlice"))
    pool_rules = PoolRules(rules.minor, features.partitionable_devices,
                           counter_slices_everywhere=rules.counter_slices_everywhere)
    per_node = reachable(slices, node_names, selector_mask, pool_rules)
    foreign = foreign_pools(slices, per_node, pool_rules)
    index_by_pool = by_pool(slices)
    index = {name: i for i, name in enumerate(node_names)}
    masks: dict[int, np.ndarray] = {}
    opaque = _opaque_attributes(objects)
    device_keys: dict[int, tuple] = {}
    statics: dict[tuple, int] = {}
    shown_names: dict[tuple[str, str], bool] = {}

    def here_of(n: int):
        def here(s: ResourceSlice, d) -> bool:
            key = id(d)
            if key not in masks:
                masks[key] = device_mask(d, node_names, index, selector_mask)
            return bool(masks[key][n])
        return here

    interned: dict[tuple, tuple[tuple[Pool, ...], tuple[int, ...]]] = {}
    node_pools, pool_nodes, content_ids = [], {}, []
    contents: dict[tuple, int] = {}
    for n, indices in enumerate(per_node):
        per_device = tuple(i for i in indices if slices[i].per_device_node_selection)
        key = (tuple(indices), tuple(id(f) for f, nodes in foreign if n in nodes),
               tuple(bool(here_of(n)(slices[i], d)) for i in per_device for d in slices[i].devices))
        found = interned.get(key)
        if found is None:
            gathered = gather_pools([slices[i] for i in indices], index_by_pool, pool_rules, here_of(n),
                                    v137=rules.counter_slices_own_nodes)
            gathered = [p for p in gathered if p.devices or p.incomplete or p.invalid or rules.minor < 36]
            gathered += [f for f, nodes in foreign if n in nodes]
            pools = tuple(sorted(gathered, key=lambda p: (p.binding, p.driver, p.name)))
            ids = tuple(contents.setdefault(c, len(contents))
                        for c in _contents(pools, rules, opaque, (device_keys, statics), shown_names))
            found = interned[key] = (pools, ids)
        pools, ids = found
        node_pools.append(pools)
        for pool in pools:
            pool_nodes.setdefault((pool.driver, pool.name), []).append(n)
        content_ids.append(ids)
    return PoolView(node_pools, {k: np.asarray(v, dtype=np.int64) for k, v in pool_nodes.items()},
                    any(len(nodes) > 1 for nodes in pool_nodes.values()), content_ids,
                    _catalog_notes(slices, node_pools, features, rules))


def _opaque_attributes(objects: ClusterObjects):
    """The attributes (domain, id) the selectors of the run read: their values matter; the others are only ever
    compared with each other (matchAttribute, distinctAttribute). None when a selector may read any."""
    from kubefit.k8s.cel import CelError, compile_selector

    expressions = [e for c in objects.of("DeviceClass") for e in c.selectors]
    specs = [c.spec for c in objects.of("ResourceClaim")] + [t.spec for t in objects.of("ResourceClaimTemplate")]
    for spec in specs:
        for request in spec.requests:
            for sub in (request.exactly,) if request.exactly is not None else request.first_available:
                expressions += [e for e in sub.selectors if e is not None]
    read = set()
    for expression in expressions:
        try:
            reads = compile_selector(expression).reads
        except CelError:
            return None
        if reads is None:
            return None
        for path in reads:
            if path[:1] == ("attributes",):
                if len(path) < 3:
                    return None
                read.add(path[1:3])
            elif not path:
                return None
    return read


def _contents(pools: tuple[Pool, ...], rules: Rules, read, memo: tuple[dict, dict], shown_names: dict) -> list[tuple]:
    """What each pool offers, for telling nodes apart (`_opaque_attributes`: which values are renamed). A device
    is its visible contents (interned: a small integer, shared by every node) and its hidden attribute values,
    renamed in their order of appearance on the node."""
    from kubefit.k8s.cel import split_qualified

    renaming: dict[tuple, int] = {}
    device_keys, statics = memo  # id(device) → (its static id, its hidden values, the device); static → id

    def base(driver: str, device) -> tuple:
        found = device_keys.get(id(device))
        if found is None:
            shown, hidden = [], []
            for k, a in device.attributes.items():
                visible = shown_names.get((driver, k))
                if visible is None:
                    visible = shown_names[(driver, k)] = read is None or split_qualified(k, driver) in read
                (shown if visible else hidden).append((k, a.kind, a.value))
            shown.sort()
            hidden.sort()
            static = (driver, tuple(shown), tuple((k, kind) for k, kind, _v in hidden), device.rest_key())
            found = device_keys[id(device)] = (statics.setdefault(static, len(statics)), tuple(hidden), device)
        return found  # (the device kept: its id stays its own)

    def devices_key(driver: str, candidates, with_here: bool) -> tuple:
        bases = [base(driver, c.device) for c in candidates]
        values = [renaming.setdefault(h, len(renaming)) for b in bases for h in b[1]]
        here = tuple(c.here for c in candidates) if with_here else ()
        return tuple(b[0] for b in bases), here, tuple(values)

    named = [p.name for p in pools]
    out = []
    for pool in pools:
        content = (pool.incomplete, pool.invalid,
                   tuple(sorted((k, tuple(sorted(v.items()))) for k, v in pool.counter_sets.items())),
                   devices_key(pool.driver, pool.devices, True), devices_key(pool.driver, pool.others, False))
        if rules.counters_by_pool_name and named.count(pool.name) > 1:
            content = (named.index(pool.name), content)  # counters kept by pool name: which pools share one matters
        out.append(content)
    return out


def _catalog_notes(slices: list[ResourceSlice], node_pools: list[tuple[Pool, ...]], features: Features,
                   rules: Rules) -> list[str]:
    """What the pools say that the user should know: (v1.36) counters of same-named pools on different nodes,
    which kube-scheduler caches by pool name for a whole scheduling cycle (whichever node computes them first,
    in parallel, wins)."""
    notes = []
    if features.partitionable_devices and rules.counters_by_pool_name:
        seen: dict[str, set] = {}
        for pools in node_pools:
            for pool in pools:
                if pool.counter_sets and pool.devices:
                    seen.setdefault(pool.name, set()).add(id(pool))
        shared = sorted(name for name, ids in seen.items() if len(ids) > 1)
        if shared:
            notes.append(f"DynamicResources: pools named {shared[0]!r} with shared counters are reached by several "
                         f"nodes with different devices; kube-scheduler v1.{rules.minor} keys its counter cache by "
                         f"pool name for a whole scheduling cycle (kubernetes#140435), so "
                         f"which node's counters it uses depends on the order its parallel Filter runs in; kubefit "
                         f"computes each node's own")
    return notes


@dataclass
class OfferTable:
    """`DraState.verdicts` of one set of claims as arrays indexed by offer id: the code (-1: not allocated
    for yet; FIT, CANNOT, INVALID_POOLS_CODE, ERROR_CODE) and the index of the answer (`allocated_requests`)
    among the distinct ones."""

    codes: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int8))
    answer_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    answers: list = field(default_factory=list)
    answer_index: dict = field(default_factory=dict)
    errors: dict[int, str] = field(default_factory=dict)

    def grow(self, size: int) -> None:
        codes = np.full(size, -1, dtype=np.int8)
        codes[:len(self.codes)] = self.codes
        answer_ids = np.full(size, -1, dtype=np.int32)
        answer_ids[:len(self.answer_ids)] = self.answer_ids
        self.codes, self.answer_ids = codes, answer_ids

    def record(self, offer: int, verdict: int | str, answer) -> None:
        if isinstance(verdict, str):
            self.codes[offer] = ERROR_CODE
            self.errors[offer] = verdict
            return
        self.codes[offer] = verdict
        found = self.answer_index.get(answer)
        if found is None:
            found = self.answer_index[answer] = len(self.answers)
            self.answers.append(answer)
        self.answer_ids[offer] = found


def holdings(claim: ResourceClaim, consumable: bool):
    """`foreachAllocatedDevice`: per device of an allocated claim (admin access holds none), ("dedicated", id),
    or with DRAConsumableCapacity a share ("share", id, share id, consumed capacity or None)."""
    if claim.allocation is None:
        return
    for r in claim.allocation.results:
        if r.admin_access:
            continue
        if consumable and r.share_id is not None:
            yield ("share", r.device_id, r.share_id, r.consumed_capacity)
        else:
            yield ("dedicated", r.device_id)


@dataclass
class DraState:
    """The DRA state of one run (see the module docstring)."""

    catalog: DraCatalog
    claims: dict[ClaimKey, ResourceClaim] = field(default_factory=dict)  # current: loaded and generated
    generated: dict[tuple[str, str, str], str] = field(default_factory=dict)  # (ns, pod, pod claim) → name
    in_use: dict[DeviceID, int] = field(default_factory=dict)  # device → claims holding it exclusively
    shares: dict[DeviceID, dict[str, int]] = field(default_factory=dict)  # device → share id → claims
    capacity: dict[DeviceID, dict[str, int]] = field(default_factory=dict)  # aggregated consumed capacity
    offer_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # per node, -1: stale
    interned: dict[tuple, int] = field(default_factory=dict)  # offer / claims key → id (shared by copies)
    verdicts: dict[tuple[int, int], tuple] = field(default_factory=dict)  # (claims, offer) → `_outcome`
    notes: list[str] = field(default_factory=list)  # said to the user once (pool order, reservedFor full)
    frozen: bool = False
    version: int = 0  # bumped on every change of claims or devices in use
    extended: dict[tuple[str, str], str] = field(default_factory=dict)  # (ns, pod) → the scheduler's claim for it
    generation: int = 0  # the catalog generation the claims are held for
    counters: dict = field(default_factory=dict)  # (driver, pool) → id(pool) → counters left (AllocatedState)
    tables: dict[int, OfferTable] = field(default_factory=dict)  # claims → `verdicts` per offer (shared by copies)
    controller: ClaimController | None = None  # makes the claims of templates (None: as the catalog's templates)
    refused: dict[tuple[str, str, str], str] = field(default_factory=dict)  # (ns, pod, pod claim) → why not made

    @classmethod
    def create(cls, catalog: DraCatalog, controller: ClaimController | None = None) -> DraState:
        """The state of the loaded claims; their devices are held at the first `sync` (the pools gathered then,
        as the version configured by then gathers them)."""
        return cls(catalog, claims=dict(catalog.loaded), offer_ids=np.zeros(0, dtype=np.int64), generation=-1,
                   controller=controller or ClaimController(catalog.templates))

    def copy(self, *, frozen: bool = False) -> DraState:
        return DraState(self.catalog, dict(self.claims), dict(self.generated), dict(self.in_use),
                        {k: dict(v) for k, v in self.shares.items()}, {k: dict(v) for k, v in self.capacity.items()},
                        self.offer_ids.copy(), self.interned, self.verdicts, self.notes,
                        frozen or self.frozen, self.version, dict(self.extended), self.generation, dict(self.counters),
                        self.tables, controller=None if self.controller is None else self.controller.copy(),
                        refused=dict(self.refused))

    def restore(self, saved: DraState) -> None:
        """Take the claims, generated names, devices in use, offers and claim quotas back to `saved` (a `copy` of
        this state taken earlier: a planning trial's rollback, `ClusterState.rollback`); the version moves on."""
        self.claims, self.generated, self.in_use = dict(saved.claims), dict(saved.generated), dict(saved.in_use)
        self.shares = {k: dict(v) for k, v in saved.shares.items()}
        self.capacity = {k: dict(v) for k, v in saved.capacity.items()}
        self.extended = dict(saved.extended)
        self.counters = dict(saved.counters)
        self.offer_ids = saved.offer_ids.copy()
        self.generation = saved.generation
        self.controller = None if saved.controller is None else saved.controller.copy()
        self.refused = dict(saved.refused)
        self.version += 1

    def configure(self, features: Features, rules: Rules, extended_resources: bool) -> None:
        """Make the catalog the version's (the plugin's factory hands over its gates, as kube-scheduler hands
        `feature.Features` to the plugin): its pools gathered and its claims held as that allocator sees them.
        The catalog is shared by every copy: a copy made before sees the change at its next `sync`."""
        catalog = self.catalog
        if (catalog.features, catalog.rules) != (features, rules):
            catalog.features, catalog.rules, catalog.view = features, rules, None
            catalog.selections = {}
            catalog.generation += 1
            self.interned.clear()
            self.verdicts.clear()
            self.tables.clear()
        catalog.extended_resources = extended_resources
        self.sync()

    def sync(self) -> None:
        """Hold the claims again when the catalog changed since they were held (`configure`)."""
        if self.generation == self.catalog.generation:
            return
        self.generation = self.catalog.generation
        self.notes.extend(n for n in self.catalog.notes if n not in self.notes)
        self.in_use, self.shares, self.capacity, self.counters = {}, {}, {}, {}
        self.offer_ids = np.full(len(self.catalog.node_pools), -1, dtype=np.int64)
        for claim in self.claims.values():
            self._hold(claim, +1)
        self.version += 1

    def allocated_state(self) -> AllocatedState:
        """`GatherAllocatedState`: what the allocator sees as allocated before the cycle."""
        return AllocatedState(self.in_use, self.shares, self.capacity, self.counters, self.catalog.selections)

    # ------------------------------------------------------------------ claims of a pod
    def claim_key(self, pod: Pod, pod_claim: dict[str, Any], *, create: bool = True) -> tuple[ClaimKey, bool] | None:
        """`resourceclaim.Name`: the claim's key and whether the claim must be the pod's (made from a
        template); None when a template's claim was not created (the controller could not: `refused`)."""
        name = pod_claim.get("name") or ""
        if pod_claim.get("resourceClaimName"):
            return (pod.namespace, pod_claim["resourceClaimName"]), False
        generated = self.generated.get((pod.namespace, pod.name, name))
        for status_name, claim_name in pod.resource_claim_statuses:
            if status_name == name:
                if not claim_name:
                    return None
                key = (pod.namespace, claim_name)
                if generated is None and (not create or self._kept(key, pod, pod_claim)):
                    return key, True
                break  # gone, or no longer the pod's: the controller makes a new one (`handleClaim`)
        if generated is None and create:
            generated = self._create_from_template(pod, pod_claim)
        return ((pod.namespace, generated), True) if generated else None

    def _kept(self, key: ClaimKey, pod: Pod, pod_claim: dict[str, Any]) -> bool:
        """Whether the claim the pod's status names stays its claim: it exists and is the pod's
        (`resourceclaim.IsForPod`), or there is no template to make another from (the scheduler then says what
        is wrong with it)."""
        claim = self.claims.get(key)
        if claim is not None and claim.controller_uid == pod.uid and claim.controller_kind == "Pod":
            return True
        return (pod.namespace, pod_claim.get("resourceClaimTemplateName") or "") not in self.catalog.templates

    def _create_from_template(self, pod: Pod, pod_claim: dict[str, Any]) -> str | None:
        """The resourceclaim controller's claim for a pod's template reference: an orphan it made before, or a
        new one the API server admits (None: refused or impossible, the reason in `refused`)."""
        controller = self.controller or ClaimController(self.catalog.templates)
        pod_claim_name = pod_claim.get("name") or ""
        where = (pod.namespace, pod.name, pod_claim_name)
        orphan = controller.orphan(pod, pod_claim_name)
        if orphan is not None and orphan in self.claims:
            self.generated[where] = orphan[1]
            return orphan[1]
        claim, error = controller.create(pod, pod_claim)
        if claim is None:
            if error is not None and self.refused.get(where) != error:
                self.notes.append(f"{pod.key}: the resourceclaim controller cannot create the claim of "
                                  f"{pod_claim_name!r}: {error}")
            self.refused[where] = error or ""
            return None
        self.refused.pop(where, None)
        self.claims[(pod.namespace, claim.meta.name)] = claim
        self.generated[where] = claim.meta.name
        return claim.meta.name

    def refusal(self, pod: Pod) -> str | None:
        """Why the controller could not make the pod's claims in this run (None: it could, or was not asked)."""
        found = [self.refused[(pod.namespace, pod.name, c.get("name") or "")] for c in pod.resource_claims
                 if (pod.namespace, pod.name, c.get("name") or "") in self.refused]
        return "; ".join(f for f in found if f) or None

    def pod_claims(self, pod: Pod) -> list[tuple[str, ClaimKey, ResourceClaim]]:
        """`foreachPodResourceClaim`: (pod claim name, key, claim) for each claim; ClaimLookupError as upstream."""
        out = []
        for pod_claim in pod.resource_claims:
            found = self.claim_key(pod, pod_claim)
            if found is None:
                if pod_claim.get("resourceClaimTemplateName") and any(
                        n == pod_claim.get("name") for n, _c in pod.resource_claim_statuses):
                    continue  # the status says no claim is needed: skipped, as upstream does
                raise ClaimLookupError(f'pod "{pod.namespace}/{pod.name}": ResourceClaim not created yet')
            key, must_own = found
            claim = self.claims.get(key)
            if claim is None:
                raise ClaimLookupError(f'could not find ResourceClaim "{key[0]}/{key[1]}"')
            if claim.deleting:
                raise ClaimLookupError(f'resourceclaim "{key[1]}" is being deleted')
            if must_own and (claim.meta.namespace != pod.namespace or claim.controller_uid != pod.uid
                             or claim.controller_kind != "Pod"):
                raise ClaimLookupError(f"ResourceClaim {key[0]}/{key[1]} was not created for pod "
                                       f"{pod.namespace}/{pod.name} (pod is not owner)")
            out.append((pod_claim.get("name") or "", key, claim))
        return out

    def extended_claim(self, pod: Pod) -> tuple[ClaimKey, ResourceClaim] | None:
        """`findExtendedResourceClaim`: the claim the scheduler made for the pod's extended resources (annotated,
        the pod its controller), if there is one."""
        name = self.extended.get((pod.namespace, pod.name))
        if name is not None and (pod.namespace, name) in self.claims:
            return (pod.namespace, name), self.claims[(pod.namespace, name)]
        key = self.catalog.loaded_extended.get((pod.namespace, pod.name, pod.uid))
        if key is not None and key in self.claims:
            return key, self.claims[key]
        return None

    # ------------------------------------------------------------------ extended resources backed by devices
    def node_scalars(self, node: int) -> dict[str, int]:
        """The node's allocatable scalar resources in whole units (`GetScalarResources`), present keys only."""
        from kubefit.k8s.quantity import scheduler_units

        return {name: scheduler_units(name, nanos) for name, nanos in self.catalog.allocatable[node].items()}

    def pod_scalars(self, pod: Pod) -> dict[str, int] | None:
        """The pod's scalar requests when DRA may have to provide one of its extended resources (None: never)."""
        if not self.catalog.extended_resources:
            return None
        from kubefit.k8s.requests import pod_requests_nanos, to_units
        from kubefit.scheduler.dra.extended import is_dra_extended_name, pod_extended_requests

        named = [*(n for c in (*pod.containers, *pod.init_containers) for n in c.requests), *pod.overhead]
        if not any(is_dra_extended_name(n) for n in named):
            return None  # (pod-level requests name cpu, memory and hugepages only)

        return pod_extended_requests(to_units(pod_requests_nanos(pod)), self.catalog.resolver)

    def device_totals(self, resource: str, nodes: Sequence[int]) -> tuple[np.ndarray, np.ndarray] | None:
        """`calculateDRAExtendedResourceAllocatableRequest` for nodes: how many devices of the class backing
        `resource` each reaches, and how many of those are allocated (None: no class backs it)."""
        device_class = self.catalog.resolver.get(resource)
        if device_class is None:
            return None
        self.sync()
        per_node = self.catalog.devices_of_class(device_class.meta.name)
        total = np.zeros(len(nodes), dtype=np.int64)
        used = np.zeros(len(nodes), dtype=np.int64)
        if per_node is None:
            return total, used
        for i, node in enumerate(nodes):
            devices = per_node[node]
            total[i] = len(devices)
            used[i] = sum(1 for d in devices if self._allocated(d))
        return total, used

    def holds(self, pod: Pod) -> bool:
        """Whether the pod has claims (its own, or the scheduler's for its extended resources)."""
        return bool(pod.resource_claims) or (pod.namespace, pod.name) in self.extended

    def needs(self, pod: Pod) -> bool:
        """Whether binding the pod allocates or reserves claims."""
        return bool(pod.resource_claims) or self.pod_scalars(pod) is not None

    def extended_spec(self, pod: Pod, node: int, user_claims: bool) -> ClaimSpec | None:
        """The spec of the claim the scheduler makes for the pod on the node (None: it makes none)."""
        from kubefit.scheduler.dra.extended import CANNOT_FIT, extended_claim_spec, node_requests

        scalars = self.pod_scalars(pod)
        if scalars is None or self.extended_claim(pod) is not None:
            return None
        needed = node_requests(scalars, self.node_scalars(node), self.catalog.resolver)
        if needed == CANNOT_FIT or not needed:
            return None  # device plugins provide it all (with user claims, PreBind makes an empty claim: see reserve)
        return extended_claim_spec(pod, needed, self.catalog.resolver)

    # ------------------------------------------------------------------ what a node offers
    def intern(self, key: tuple) -> int:
        """A small integer for a hashable key (what a node offers, what claims ask for)."""
        found = self.interned.get(key)
        if found is None:
            found = self.interned[key] = len(self.interned)
        return found

    def offer_key(self, node: int) -> tuple:
        """What the node's pools offer now: per pool its contents' id and, per device in use, how (held, shared,
        the capacity its shares consume). Nodes with equal keys answer every allocation alike (names aside)."""
        return ("offer", *((content, self._usage(pool)) for content, pool in
                           zip(self.catalog.content_ids[node], self.catalog.node_pools[node], strict=True)))

    def _usage(self, pool: Pool) -> tuple:
        in_use, shares, capacity = self.in_use, self.shares, self.capacity
        if not (in_use or shares):
            return ()
        out = []
        for i, candidate in enumerate((*pool.devices, *pool.others)):
            device_id = candidate.device_id
            if device_id in in_use or device_id in shares or device_id in capacity:
                out.append((i, device_id in in_use, device_id in shares,
                            tuple(sorted(capacity[device_id].items())) if device_id in capacity else None))
        return tuple(out)

    def offer_id_array(self, idx: np.ndarray) -> np.ndarray:
        """The offer ids of nodes `idx` (those gone stale since computed again)."""
        self.sync()
        ids = self.offer_ids[idx]
        if (ids < 0).any():
            for node in idx[ids < 0].tolist():
                self.offer_ids[node] = self.intern(self.offer_key(node))
            ids = self.offer_ids[idx]
        return ids

    def fits_nodes(self, idx: np.ndarray, claims_id: int, claims: Sequence[ClaimToAllocate]) -> np.ndarray:
        """Per node of `idx`, whether the claims can all be allocated there now: FIT, CANNOT (the allocator
        found no solution) or INVALID_POOLS (no solution, and an invalid pool: the node's own message); one
        allocation per distinct offer (AllocationError: the Filter error, raised for the first node in `idx`
        order that meets it)."""
        _table, _ids, codes = self._resolved(idx, claims_id, claims)
        return codes

    def fits(self, node: int, claims_id: int, claims: Sequence[ClaimToAllocate]) -> bool:
        """Whether the claims can all be allocated on the node now (AllocationError: the Filter error)."""
        return int(self.fits_nodes(np.asarray([node], dtype=np.int64), claims_id, claims)[0]) == FIT

    def allocated_requests(self, idx: np.ndarray, claims_id: int, claims: Sequence[ClaimToAllocate]
                           ) -> tuple[list[tuple[frozenset[str], ...] | None], np.ndarray]:
        """What the claims' allocation holds on each node of `idx` (what Filter keeps in `nodeAllocations`
        for Score): distinct answers, and per node which of them it gets. An answer is per claim the
        `request` names of its results (`request/subrequest` for a `firstAvailable` choice), None where the
        claims do not all fit. One allocation per distinct offer, shared with `fits_nodes` (nodes with equal
        offers choose alike, device names aside); AllocationError: the Filter error."""
        table, ids, _codes = self._resolved(idx, claims_id, claims)
        return table.answers, table.answer_ids[ids]

    def _resolved(self, idx: np.ndarray, claims_id: int, claims: Sequence[ClaimToAllocate]
                  ) -> tuple[OfferTable, np.ndarray, np.ndarray]:
        """The claims' table, the offers of nodes `idx` and their codes, every one known: the allocator runs for
        offers not met yet, in node order; the first node (in that order) whose offer is an error raises it."""
        ids = self.offer_id_array(idx)
        table = self._table(claims_id, int(ids.max()) + 1 if len(ids) else 0)
        codes = table.codes[ids]
        while True:
            pending = np.flatnonzero((codes < 0) | (codes == ERROR_CODE))
            if not len(pending):
                return table, ids, codes
            position = int(pending[0])
            offer = int(ids[position])
            if codes[position] == ERROR_CODE:
                raise AllocationError(table.errors[offer])
            self._outcome(claims_id, offer, int(idx[position]), claims)
            codes[ids == offer] = table.codes[offer]

    def _table(self, claims_id: int, size: int) -> OfferTable:
        """The claims' table, holding at least offers below `size`."""
        table = self.tables.get(claims_id)
        if table is None:
            table = self.tables[claims_id] = OfferTable()
        if len(table.codes) < size:
            table.grow(max(size, 2 * len(table.codes), len(self.interned)))
        return table

    def _outcome(self, claims_id: int, offer: int, node: int, claims: Sequence[ClaimToAllocate]) -> tuple:
        """One allocation per (claims, offer): its verdict (FIT, CANNOT, INVALID_POOLS_CODE or the error text),
        what the allocation holds (per claim its results' request names; None when nothing fits), and the
        allocation itself (`reserve` moves it onto its node: `relocate`). Kept in `verdicts` and the claims'
        table."""
        key = (claims_id, offer)
        found = self.verdicts.get(key)
        if found is None:
            try:
                allocation = self.allocate_on(node, claims, self.catalog.node_names[node])
                found = (FIT if allocation is not None else CANNOT, None if allocation is None else tuple(
                    frozenset(r.request for r in result.results) for result in allocation.results),
                    allocation)
            except NodeUnschedulable:
                found = (INVALID_POOLS_CODE, None, None)
            except AllocationError as exc:
                found = (str(exc), None, None)
            self.verdicts[key] = found
            self._table(claims_id, offer + 1).record(offer, found[0], found[1])
        return found

    def allocate_on(self, node: int, claims: Sequence[ClaimToAllocate], node_name: str = "") -> Allocation | None:
        """The allocator on one node with the devices in use now."""
        self.sync()
        return allocate(list(claims), node_name, list(self.catalog.node_pools[node]), self.allocated_state(),
                        self.catalog.classes, self.catalog.features, self.catalog.rules)

    # ------------------------------------------------------------------ changes
    def reserve(self, node: int, node_name: str, pod: Pod, extended: ClaimSpec | None = None) -> None:
        """Reserve + PreBind for `pod` bound to `node`: allocate its unallocated claims there (and the claim for
        its device-backed extended resources, `extended`: its spec on this node), reserve all; the scheduler's
        claim is created owned by the pod."""
        if self.frozen:
            return
        self.sync()
        if extended is None:
            extended = self.extended_spec(pod, node, bool(pod.resource_claims))
            if extended is None and pod.resource_claims and self.pod_scalars(pod) is not None:
                self._empty_claim_note(pod, node_name)
        if not (pod.resource_claims or extended is not None):
            return
        try:
            claims = self.pod_claims(pod)
        except ClaimLookupError:
            return  # the cycle would have refused the pod; a caller binding it anyway allocates nothing
        pending = [(key, claim) for _n, key, claim in claims if claim.allocation is None]
        if extended is not None:
            key = (pod.namespace, generate_name(f"{pod.name}-extended-resources-", "ResourceClaim", pod.namespace,
                                                pod.name))
            meta = ObjectMeta(key[1], pod.namespace, f"uid-claim-{pod.namespace}-{key[1]}")
            pending.append((key, ResourceClaim(meta, extended, controller_uid=pod.uid, controller_kind="Pod",
                                               controller_name=pod.name, extended=True)))
        if pending:
            to_allocate = [ClaimToAllocate(f"{k[0]}/{k[1]}", c.spec) for k, c in pending]
            allocation = self._allocation_for(node, node_name, to_allocate)
            if allocation is None:
                self.notes.append(f"{pod.key}: bound to {node_name} although its claims cannot be allocated there; "
                                  f"they stay unallocated")
                return
            if allocation.order_mattered:
                self._order_note(pod, node_name)
            for (key, claim), result in zip(pending, allocation.results, strict=True):
                self._replace(key, dataclasses.replace(claim, allocation=result))
            if extended is not None:
                self.extended[(pod.namespace, pod.name)] = pending[-1][0][1]
                claims = [*claims, ("", pending[-1][0], self.claims[pending[-1][0]])]
        for _n, key, claim in claims:
            claim = self.claims[key]
            if any(r.uid == pod.uid and r.name == pod.name for r in claim.reserved_for):
                continue
            if len(claim.reserved_for) >= RESERVED_FOR_MAX_SIZE:
                self.notes.append(f"{pod.key}: ResourceClaim {key[0]}/{key[1]} is already reserved for "
                                  f"{RESERVED_FOR_MAX_SIZE} consumers; the API server would refuse the pod's "
                                  f"reservation (status.reservedFor: Too many)")
            consumer = ConsumerReference("pods", pod.name, pod.uid)
            self._replace(key, dataclasses.replace(claim, reserved_for=(*claim.reserved_for, consumer)))

    def _allocation_for(self, node: int, node_name: str, claims: list[ClaimToAllocate]) -> Allocation | None:
        """The claims' allocation on the node: the one Filter found for the same claims and an equal offer,
        moved onto this node's devices (what the allocator would find here), else the allocator's now."""
        offer = int(self.offer_id_array(np.asarray([node], dtype=np.int64))[0])
        found = self.verdicts.get((self.intern(("claims", *(c.spec.key() for c in claims))), offer))
        if found is not None and found[2] is not None:
            return relocate(found[2], claims, list(self.catalog.node_pools[node]), node_name, self.catalog.rules)
        try:
            return self.allocate_on(node, claims, node_name)
        except (AllocationError, NodeUnschedulable):
            return None

    def release(self, pod: Pod) -> None:
        """The pod is gone: it leaves `reservedFor`; unreserved claims are deallocated; its generated ones and the
        scheduler's claim for its extended resources go (owned by the pod: garbage-collected)."""
        if self.frozen:
            return
        self.sync()
        found = self.extended_claim(pod)
        if found is not None:
            self._remove(found[0])
            self.extended.pop((pod.namespace, pod.name), None)
        for pod_claim in pod.resource_claims:
            found = self.claim_key(pod, pod_claim, create=False)
            if found is None or found[0] not in self.claims:
                continue
            key, generated = found
            claim = self.claims[key]
            kept = tuple(r for r in claim.reserved_for if not (r.uid == pod.uid and r.name == pod.name))
            if generated and claim.controller_uid == pod.uid:
                self._remove(key)
                self.generated.pop((pod.namespace, pod.name, pod_claim.get("name") or ""), None)
            elif len(kept) != len(claim.reserved_for):
                self._replace(key, dataclasses.replace(claim, reserved_for=kept,
                                                       allocation=claim.allocation if kept else None))

    def deallocate(self, key: ClaimKey) -> None:
        """PostFilter's deallocation: allocation and reservations removed."""
        claim = self.claims.get(key)
        if claim is not None and not self.frozen:
            self._replace(key, dataclasses.replace(claim, allocation=None, reserved_for=()))

    def delete(self, key: ClaimKey) -> None:
        """PostFilter's deletion of a stale claim the scheduler made for a pod's extended resources."""
        if key in self.claims and not self.frozen:
            self._remove(key)

    def _replace(self, key: ClaimKey, claim: ResourceClaim) -> None:
        old = self.claims.get(key)
        if old is not None:
            self._hold(old, -1)
        self.claims[key] = claim
        self._hold(claim, +1)
        self.version += 1

    def _remove(self, key: ClaimKey) -> None:
        old = self.claims.pop(key)
        self._hold(old, -1)
        if self.controller is not None:
            self.controller.release(old)
        self.version += 1

    def _hold(self, claim: ResourceClaim, delta: int) -> None:
        """Count the claim's devices in (or out of) use (`allocatedDevices.addDevices/removeDevices`); the nodes
        reaching their pools must look again."""
        for held in holdings(claim, self.catalog.features.consumable_capacity):
            device_id = held[1]
            if held[0] == "dedicated":
                _count(self.in_use, device_id, delta)
            else:
                _count(self.shares.setdefault(device_id, {}), held[2], delta)
                if not self.shares[device_id]:
                    del self.shares[device_id]
                if held[3] is not None:
                    (add_into if delta > 0 else remove_from)(self.capacity, device_id, held[3])
            self.counters.pop(device_id[:2], None)
            nodes = self.catalog.pool_nodes.get(device_id[:2])
            if nodes is not None:
                self.offer_ids[nodes] = -1

    def _empty_claim_note(self, pod: Pod, node_name: str) -> None:
        """v1.36.3's PreBind for a pod with claims whose device-backed extended resources a device plugin provides
        on its node: it writes an extended-resource claim with no request, then fails patching the pod's status
        ("nil or empty request mappings"), so the binding is retried; kubefit binds the pod."""
        if not any(n.startswith("DynamicResources: extended resources") for n in self.notes):
            self.notes.append(f"DynamicResources: extended resources of {pod.key} are provided by a device plugin on "
                              f"{node_name}, beside its ResourceClaims: kube-scheduler v1.36's PreBind then creates "
                              f"an extended-resource claim without requests and fails (\"nil or empty request "
                              f"mappings\"), retrying the pod; kubefit binds it")

    def _order_note(self, pod: Pod, node_name: str) -> None:
        if not any(n.startswith("DynamicResources: pool order") for n in self.notes):
            self.notes.append(f"DynamicResources: pool order: {pod.key}'s claims on {node_name} had matching devices "
                              f"in more than one pool; kube-scheduler ranges over a node's pools in random (Go map) "
                              f"order, kubefit in (driver, pool) name order, so other devices may have been chosen")

    def devices_of(self, pod: Pod) -> dict[str, list[str]]:
        """Per claim of the pod (its name in the pod), the devices allocated to it ("driver/pool/device")."""
        out = {}
        for pod_claim in pod.resource_claims:
            found = self.claim_key(pod, pod_claim, create=False)
            claim = self.claims.get(found[0]) if found else None
            if claim is not None and claim.allocation is not None:
                out[pod_claim.get("name") or ""] = ["/".join(r.device_id) for r in claim.allocation.results]
        found = self.extended_claim(pod)
        if found is not None and found[1].allocation is not None:
            out[found[0][1]] = ["/".join(r.device_id) for r in found[1].allocation.results]
        return out

    def preview(self, pod: Pod, nodes: Sequence[int], node_names: list[str]) -> dict[str, dict[str, list[str]]]:
        """Per node of `nodes`, the devices each of the pod's claims would get there (what Reserve would
        write; claims already allocated keep their devices)."""
        try:
            claims = self.pod_claims(pod)
        except ClaimLookupError:
            return {}
        pending = [(name, key, claim) for name, key, claim in claims if claim.allocation is None]
        to_allocate = [ClaimToAllocate(f"{k[0]}/{k[1]}", c.spec) for _n, k, c in pending]
        out = {}
        for node in nodes:
            try:
                allocation = self.allocate_on(node, to_allocate, node_names[node]) if to_allocate else None
            except (AllocationError, NodeUnschedulable):
                continue
            devices = {name: ["/".join(r.device_id) for r in claim.allocation.results]
                       for name, _k, claim in claims if claim.allocation is not None}
            if allocation is not None:
                devices.update({name: ["/".join(r.device_id) for r in result.results]
                                for (name, _k, _c), result in zip(pending, allocation.results, strict=True)})
            out[node_names[node]] = devices
        return out

    def usage(self, node_names: list[str]) -> dict[str, dict[str, Any]]:
        """Per node with devices: how many its pools hold and which are allocated now (node-local pools), and
        both counts per driver (`drivers`: a node's GPUs and NICs are told apart)."""
        out = {}
        for name, pools in zip(node_names, self.catalog.node_pools, strict=True):
            devices = [c.device_id for pool in pools for c in pool.devices]
            if devices:
                drivers: dict[str, dict[str, int]] = {}
                for device_id in devices:
                    counts = drivers.setdefault(device_id[0], {"devices": 0, "allocated": 0})
                    counts["devices"] += 1
                    counts["allocated"] += self._allocated(device_id)
                out[name] = {"devices": len(devices), "allocated": ["/".join(d) for d in devices if self._allocated(d)],
                             "drivers": dict(sorted(drivers.items()))}
        return out

    def _allocated(self, device_id: DeviceID) -> bool:
        return device_id in self.in_use or device_id in self.shares or device_id in self.capacity

    def nodes_of(self, allocation: AllocationResult | None) -> set[int]:
        """The nodes whose pools hold an allocation's devices (their offers changed)."""
        if allocation is None:
            return set()
        none = np.zeros(0, dtype=np.int64)
        return {n for r in allocation.results for n in self.catalog.pool_nodes.get((r.driver, r.pool), none).tolist()}


FIT, CANNOT, INVALID_POOLS_CODE = 0, 1, 2
ERROR_CODE = 3  # an OfferTable's code for an allocation error (its text in `errors`)


def _count(counts: dict, key: Any, delta: int) -> None:
    value = counts.get(key, 0) + delta
    if value > 0:
        counts[key] = value
    else:
        counts.pop(key, None)


def attach_dra(state, pods: Sequence[Pod] = ()) -> DraState:
    """Give a compiled ClusterState its DRA state (its nodes' pools, the scenario's claims and classes) and the
    resourceclaim controller of the run, which makes the claims of the scenario's `pods` (document order) when
    the claims have ResourceQuotas: what a quota admits first is what the API server saw created first."""
    from kubefit.k8s.nodeaffinity import NodeSelector
    from kubefit.scheduler.dra.controller import claim_controller, count_existing
    from kubefit.scheduler.plugins.selectors import node_labels

    table = node_labels(state)
    names, objects = state.node_names, state.objects

    def selector_mask(selector: dict[str, Any]) -> np.ndarray:
        return NodeSelector.parse(selector).mask(table)

    catalog = build_catalog(names, objects, selector_mask)
    catalog.allocatable = [dict(node.allocatable) for node in state.nodes]
    controller = claim_controller(objects, catalog.loaded)
    state.dra = DraState.create(catalog, controller)
    if controller.quota is not None:
        count_existing(controller, list(catalog.loaded.values()), pods)
        if not objects.api_server.quota_at_arrival:  # a timeline creates each pod when it arrives
            for pod in pods:
                if not pod.bound:
                    for pod_claim in pod.resource_claims:
                        state.dra.claim_key(pod, pod_claim)
    return state.dra
