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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kubefit.api.cluster import ClusterObjects
from kubefit.api.core import Pod
from kubefit.api.dra import (
    RESERVED_FOR_MAX_SIZE,
    AllocationResult,
    ConsumerReference,
    DeviceClass,
    DeviceID,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)
from kubefit.scheduler.dra.allocator import (
    V134,
    Allocation,
    AllocationError,
    ClaimToAllocate,
    Features,
    allocate,
)
from kubefit.scheduler.dra.controller import ClaimController, ClaimKey
from kubefit.scheduler.dra.pools import Pool, gather_pools, reachable


class ClaimLookupError(Exception):
    """`foreachPodResourceClaim`'s errors: a claim not created yet, missing, being deleted, or not the pod's."""


@dataclass
class DraCatalog:
    """What never changes in a run: classes, templates, the claims as loaded, each node's pools."""

    classes: dict[str, DeviceClass]
    templates: dict[ClaimKey, ResourceClaimTemplate]
    loaded: dict[ClaimKey, ResourceClaim]
    node_pools: list[tuple[Pool, ...]]  # per node, in kubefit's pool order
    pool_nodes: dict[tuple[str, str], np.ndarray]  # (driver, pool) → nodes that reach it
    nonlocal_pools: bool  # a pool reached by more than one node (allNodes, a node selector)
    content_ids: list[tuple[int, ...]]  # per node: an id per pool of its devices' contents and flags
    features: Features = V134


def build_catalog(node_names: list[str], objects: ClusterObjects,
                  selector_mask: Callable[[dict[str, Any]], np.ndarray], features: Features = V134) -> DraCatalog:
    """The run's static DRA view: every node's pools (GatherPools per node), classes, templates, claims."""
    slices: list[ResourceSlice] = list(objects.of("ResourceSlice"))
    per_node = reachable(slices, node_names, selector_mask)
    interned: dict[tuple, tuple[Pool, ...]] = {}
    node_pools, pool_nodes, content_ids = [], {}, []
    contents: dict[tuple, int] = {}
    for n, indices in enumerate(per_node):
        key = tuple(indices)
        pools = interned.get(key)
        if pools is None:
            pools = interned[key] = tuple(gather_pools([slices[i] for i in indices]))
        node_pools.append(pools)
        ids = []
        for pool in pools:
            pool_nodes.setdefault((pool.driver, pool.name), []).append(n)
            content = (pool.incomplete, pool.invalid, tuple(d.content_key(pool.driver) for _i, d, _s in pool.devices))
            ids.append(contents.setdefault(content, len(contents)))
        content_ids.append(tuple(ids))
    return DraCatalog(
        classes={c.meta.name: c for c in objects.of("DeviceClass")},
        templates={(t.meta.namespace, t.meta.name): t for t in objects.of("ResourceClaimTemplate")},
        loaded={(c.meta.namespace, c.meta.name): c for c in objects.of("ResourceClaim")},
        node_pools=node_pools, pool_nodes={k: np.asarray(v, dtype=np.int64) for k, v in pool_nodes.items()},
        nonlocal_pools=any(len(nodes) > 1 for nodes in pool_nodes.values()),
        content_ids=content_ids, features=features)


def in_use_devices(claim: ResourceClaim) -> list[DeviceID]:
    """`foreachAllocatedDevice`: the devices an allocated claim holds (admin access holds none)."""
    if claim.allocation is None:
        return []
    return [r.device_id for r in claim.allocation.results if not r.admin_access]


@dataclass
class DraState:
    """The DRA state of one run (see the module docstring)."""

    catalog: DraCatalog
    claims: dict[ClaimKey, ResourceClaim] = field(default_factory=dict)  # current: loaded and generated
    generated: dict[tuple[str, str, str], str] = field(default_factory=dict)  # (ns, pod, pod claim) → name
    in_use: dict[DeviceID, int] = field(default_factory=dict)  # device → claims holding it
    offer_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # per node, -1: stale
    interned: dict[tuple, int] = field(default_factory=dict)  # offer / claims key → id (shared by copies)
    verdicts: dict[tuple[int, int], bool | str] = field(default_factory=dict)  # (claims, offer) → fits / error
    requests: dict[tuple[int, int], tuple | None] = field(default_factory=dict)  # (claims, offer) → `allocated_requests`
    notes: list[str] = field(default_factory=list)  # said to the user once (pool order, reservedFor full)
    frozen: bool = False
    version: int = 0  # bumped on every change of claims or devices in use
    controller: ClaimController | None = None  # makes the claims of templates (None: as the catalog's templates)
    refused: dict[tuple[str, str, str], str] = field(default_factory=dict)  # (ns, pod, pod claim) → why not made

    @classmethod
    def create(cls, catalog: DraCatalog, controller: ClaimController | None = None) -> DraState:
        state = cls(catalog, claims=dict(catalog.loaded),
                    offer_ids=np.full(len(catalog.node_pools), -1, dtype=np.int64),
                    controller=controller or ClaimController(catalog.templates))
        for claim in state.claims.values():
            state._hold(claim, +1)
        return state

    def copy(self, *, frozen: bool = False) -> DraState:
        return DraState(self.catalog, dict(self.claims), dict(self.generated), dict(self.in_use),
                        self.offer_ids.copy(), self.interned, self.verdicts, self.requests, self.notes,
                        frozen or self.frozen, self.version, None if self.controller is None else self.controller.copy(),
                        dict(self.refused))

    def restore(self, saved: DraState) -> None:
        """Take the claims, generated names, devices in use, offers and claim quotas back to `saved` (a `copy` of
        this state taken earlier: a planning trial's rollback, `ClusterState.rollback`); the version moves on."""
        self.claims, self.generated, self.in_use = dict(saved.claims), dict(saved.generated), dict(saved.in_use)
        self.offer_ids = saved.offer_ids.copy()
        self.controller = None if saved.controller is None else saved.controller.copy()
        self.refused = dict(saved.refused)
        self.version += 1

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

    # ------------------------------------------------------------------ what a node offers
    def intern(self, key: tuple) -> int:
        """A small integer for a hashable key (what a node offers, what claims ask for)."""
        found = self.interned.get(key)
        if found is None:
            found = self.interned[key] = len(self.interned)
        return found

    def offer_key(self, node: int) -> tuple:
        """What the node's pools offer now: per pool its contents' id and the positions of devices in use.
        Nodes with equal keys answer every allocation alike (device names aside)."""
        in_use = self.in_use
        return ("offer", *((content, tuple(i for i, (device_id, _d, _s) in enumerate(pool.devices) if device_id in in_use))
                           for content, pool in zip(self.catalog.content_ids[node], self.catalog.node_pools[node],
                                                    strict=True)))

    def offer_id_array(self, idx: np.ndarray) -> np.ndarray:
        """The offer ids of nodes `idx` (those gone stale since computed again)."""
        ids = self.offer_ids[idx]
        if (ids < 0).any():
            for node in idx[ids < 0].tolist():
                self.offer_ids[node] = self.intern(self.offer_key(node))
            ids = self.offer_ids[idx]
        return ids

    def fits_nodes(self, idx: np.ndarray, claims_id: int, claims: Sequence[ClaimToAllocate]) -> np.ndarray:
        """Per node of `idx`, whether the claims can all be allocated there now: one allocation per distinct
        offer (AllocationError: the Filter error, raised for the first node in `idx` order that meets it)."""
        ids = self.offer_id_array(idx)
        out = np.zeros(len(idx), dtype=bool)
        offers, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
        verdicts = []
        for offer, position in sorted(zip(offers.tolist(), first.tolist(), strict=True), key=lambda p: p[1]):
            verdicts.append((offer, self._verdict(claims_id, offer, int(idx[position]), claims)))
        fits = dict(verdicts)
        out[:] = np.asarray([fits[o] for o in offers.tolist()], dtype=bool)[inverse.ravel()]
        return out

    def fits(self, node: int, claims_id: int, claims: Sequence[ClaimToAllocate]) -> bool:
        """Whether the claims can all be allocated on the node now (AllocationError: the Filter error)."""
        return bool(self.fits_nodes(np.asarray([node], dtype=np.int64), claims_id, claims)[0])

    def _verdict(self, claims_id: int, offer: int, node: int, claims: Sequence[ClaimToAllocate]) -> bool:
        verdict = self.verdicts.get((claims_id, offer))
        if verdict is None:
            try:
                verdict = self.allocate_on(node, claims) is not None
            except AllocationError as exc:
                verdict = str(exc)
            self.verdicts[(claims_id, offer)] = verdict
        if isinstance(verdict, str):
            raise AllocationError(verdict)
        return verdict

    def allocated_requests(self, idx: np.ndarray, claims_id: int, claims: Sequence[ClaimToAllocate]
                           ) -> tuple[list[tuple[frozenset[str], ...] | None], np.ndarray]:
        """What the claims' allocation holds on each node of `idx` (what Filter keeps in `nodeAllocations`
        for Score): distinct answers, and per node which of them it gets. An answer is per claim the
        `request` names of its results (`request/subrequest` for a `firstAvailable` choice), None where the
        claims do not all fit. One allocation per distinct offer, as `fits_nodes` (nodes with equal offers
        choose alike, device names aside); AllocationError: the Filter error."""
        ids = self.offer_id_array(idx)
        offers, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
        answers = []
        for offer, position in zip(offers.tolist(), first.tolist(), strict=True):
            key = (claims_id, offer)
            if key not in self.requests:
                allocation = self.allocate_on(int(idx[position]), claims)
                self.requests[key] = None if allocation is None else tuple(
                    frozenset(r.request for r in result.results) for result in allocation.results)
            answers.append(self.requests[key])
        return answers, inverse.ravel()

    def allocate_on(self, node: int, claims: Sequence[ClaimToAllocate], node_name: str = "") -> Allocation | None:
        """The allocator on one node with the devices in use now."""
        return allocate(list(claims), node_name, list(self.catalog.node_pools[node]), self.in_use,
                        self.catalog.classes, self.catalog.features)

    # ------------------------------------------------------------------ changes
    def reserve(self, node: int, node_name: str, pod: Pod) -> None:
        """Reserve + PreBind for `pod` bound to `node`: allocate its unallocated claims there, reserve all."""
        if self.frozen or not pod.resource_claims:
            return
        try:
            claims = self.pod_claims(pod)
        except ClaimLookupError:
            return  # the cycle would have refused the pod; a caller binding it anyway allocates nothing
        pending = [(key, claim) for _n, key, claim in claims if claim.allocation is None]
        allocation = None
        if pending:
            to_allocate = [ClaimToAllocate(f"{k[0]}/{k[1]}", c.spec) for k, c in pending]
            allocation = self.allocate_on(node, to_allocate, node_name)
            if allocation is None:
                self.notes.append(f"{pod.key}: bound to {node_name} although its claims cannot be allocated there; "
                                  f"they stay unallocated")
                return
            if allocation.order_mattered:
                self._order_note(pod, node_name)
            for (key, claim), result in zip(pending, allocation.results, strict=True):
                self._replace(key, dataclasses.replace(claim, allocation=result))
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

    def release(self, pod: Pod) -> None:
        """The pod is gone: it leaves `reservedFor`; unreserved claims are deallocated; its generated ones go."""
        if self.frozen or not pod.resource_claims:
            return
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
        """Count the claim's devices in (or out of) use; the nodes reaching their pools must look again."""
        for device_id in in_use_devices(claim):
            count = self.in_use.get(device_id, 0) + delta
            if count > 0:
                self.in_use[device_id] = count
            else:
                self.in_use.pop(device_id, None)
            nodes = self.catalog.pool_nodes.get(device_id[:2])
            if nodes is not None:
                self.offer_ids[nodes] = -1

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
            except AllocationError:
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
            devices = [device_id for pool in pools for device_id, _d, _s in pool.devices]
            if devices:
                drivers: dict[str, dict[str, int]] = {}
                for device_id in devices:
                    counts = drivers.setdefault(device_id[0], {"devices": 0, "allocated": 0})
                    counts["devices"] += 1
                    counts["allocated"] += device_id in self.in_use
                out[name] = {"devices": len(devices), "allocated": ["/".join(d) for d in devices if d in self.in_use],
                             "drivers": dict(sorted(drivers.items()))}
        return out

    def nodes_of(self, allocation: AllocationResult | None) -> set[int]:
        """The nodes whose pools hold an allocation's devices (their offers changed)."""
        if allocation is None:
            return set()
        none = np.zeros(0, dtype=np.int64)
        return {n for r in allocation.results for n in self.catalog.pool_nodes.get((r.driver, r.pool), none).tolist()}


def attach_dra(state, pods: Sequence[Pod] = ()) -> DraState:
    """Give a compiled ClusterState its DRA state (its nodes' pools, the scenario's claims and classes) and the
    resourceclaim controller of the run, which makes the claims of the scenario's `pods` (document order) when
    the claims have ResourceQuotas: what a quota admits first is what the API server saw created first."""
    from kubefit.k8s.nodeaffinity import NodeSelector
    from kubefit.scheduler.dra.controller import claim_controller, count_existing
    from kubefit.scheduler.plugins.selectors import node_labels

    table = node_labels(state)
    catalog = build_catalog(state.node_names, state.objects, lambda s: NodeSelector.parse(s).mask(table))
    controller = claim_controller(state.objects, catalog.loaded)
    state.dra = DraState.create(catalog, controller)
    if controller.quota is not None:
        count_existing(controller, list(catalog.loaded.values()), pods)
        if not state.objects.api_server.quota_at_arrival:  # a timeline creates each pod when it arrives
            for pod in pods:
                if not pod.bound:
                    for pod_claim in pod.resource_claims:
                        state.dra.claim_key(pod, pod_claim)
    return state.dra
