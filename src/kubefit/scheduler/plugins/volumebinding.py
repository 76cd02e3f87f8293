"""VolumeBinding (v1.34.1 `plugins/volumebinding`): bound claims' PV node affinity, unbound immediate claims,
WaitForFirstConsumer claims matched to available PVs or provisioned, for every node at once where it can.

PreFilter sorts the pod's claims as `GetPodVolumeClaims` does (bound = `spec.volumeName` plus the
bind-completed annotation; unbound with a WaitForFirstConsumer class and no `volumeName` = delay binding;
any other unbound claim = immediate, which rejects the pod). Filter is `FindPodVolumes`: the reasons are
appended in its order (node conflict, bind conflict, not enough space, PV not found).

Score needs the StorageCapacityScoring feature gate (alpha, off, in v1.34-v1.36; beta, on, in v1.37): without
it there is no scorer and PreScore skips. With it (`shape` given, the v1.36.3 `scorer.go` and `Score`, alike
in v1.34.1), PreScore never skips and a node scores its static bindings (PVs the pod's WaitForFirstConsumer
claims would bind to there), grouped by the PV's storage class: per class the shape (scores ×10) of
`requested × 100 / capacity` (100 when the capacity is 0 or exceeded), the node's score the rounded mean
over its classes. A node without static bindings scores its dynamic provisions by the CSIStorageCapacity
each found, and kubefit reads none (as a cluster without CSIStorageCapacity objects): 0.
"""

from __future__ import annotations

import numpy as np

from kubefit.api.core import Pod
from kubefit.api.storage import NOT_SUPPORTED_PROVISIONER, WAIT_FOR_FIRST_CONSUMER, PersistentVolume
from kubefit.k8s.gomath import go_div, int64
from kubefit.k8s.labels import parse_selector
from kubefit.k8s.quantity import value
from kubefit.scheduler.plugins.base import (
    SUCCESS,
    UNRESOLVABLE,
    CycleContext,
    FilterOutcome,
    PreFilterOutcome,
    StatusError,
)
from kubefit.scheduler.plugins.strategies import broken_linear_one, scaled_shape
from kubefit.scheduler.plugins.volumes import (
    StorageIndex,
    not_found,
    pod_claims,
    pv_node_affinity_mask,
    storage_view,
    topology_mask,
)
from kubefit.scheduler.state import ClusterState

NAME = "VolumeBinding"
REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
REASON_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
LABEL_HOSTNAME = "kubernetes.io/hostname"
REASONS = (REASON_NODE_CONFLICT, REASON_BIND_CONFLICT, REASON_NOT_ENOUGH_SPACE, REASON_PV_NOT_EXIST)
MAX_UTILIZATION = 100
# SetDefaults_VolumeBindingArgs with StorageCapacityScoring on: (utilization, score) on the 0..10 scale
DEFAULT_SHAPE = ((0, 10), (100, 0))


class VolumeClaims:
    """`PodVolumeClaims`: the pod's claims sorted into bound, delay-binding and immediate."""

    def __init__(self) -> None:
        self.bound: list = []
        self.delay: list = []
        self.immediate: list = []


def local_node_names(pv: PersistentVolume) -> set[str] | None:
    """`GetLocalPersistentVolumeNodeNames`: hostnames a PV's required terms pin it to (None: unpinned)."""
    if pv.node_affinity is None:
        return None
    result: set[str] = set()
    for term in pv.node_affinity.get("nodeSelectorTerms") or []:
        nodes: set[str] | None = None
        for expr in term.get("matchExpressions") or []:
            if expr.get("key") == LABEL_HOSTNAME and expr.get("operator") == "In":
                values = {str(v) for v in expr.get("values") or []}
                nodes = values if nodes is None else nodes & values
        result |= nodes or set()
    return result or None


class VolumeBinding:
    """The VolumeBinding plugin over a scenario's StorageIndex."""

    reads_other_nodes = True  # a bind anywhere may take a PV (the assume cache): verdicts elsewhere change

    def __init__(self, storage: StorageIndex, shape: tuple[tuple[int, int], ...] | None = None) -> None:
        """`shape`: `VolumeBindingArgs.shape` (utilization, score 0..10) when StorageCapacityScoring is on
        (`New` builds a scorer from it), None without the gate (no scorer: PreScore skips)."""
        self.storage = storage
        self.shape = None if shape is None else scaled_shape(shape)

    # ------------------------------------------------------------------ PreFilter
    def classify(self, state: ClusterState, pod: Pod) -> VolumeClaims | str | None:
        """The pod's claims, None when it uses none, or the UnschedulableAndUnresolvable reason of PreFilter."""
        view = storage_view(self.storage, state)
        claims = pod_claims(pod)
        if not claims:
            return None
        out = VolumeClaims()
        for name, ephemeral in claims:  # podHasPVCs: every claim must exist and be usable
            pvc = view.claim(pod.namespace, name)
            if pvc is None:
                return (f"waiting for ephemeral volume controller to create the persistentvolumeclaim \"{name}\""
                        if ephemeral else not_found("persistentvolumeclaim", name))
            if pvc.phase == "Lost":
                return f"persistentvolumeclaim \"{name}\" bound to non-existent persistentvolume \"{pvc.volume_name}\""
        for name, _ephemeral in claims:
            pvc = view.claim(pod.namespace, name)
            if pvc.volume_name and pvc.bind_completed:
                out.bound.append(pvc)
            elif self.delay_binding(pvc) and not pvc.volume_name:
                out.delay.append(pvc)
            else:
                out.immediate.append(pvc)
        return out

    def delay_binding(self, pvc) -> bool:
        """`IsDelayBindingMode`: the claim's class exists and binds WaitForFirstConsumer."""
        cls = self.storage.classes.get(pvc.class_name) if pvc.class_name else None
        if cls is None:
            return False
        if cls.volume_binding_mode is None:
            raise StatusError(f"VolumeBindingMode not set for StorageClass \"{pvc.class_name}\"")
        return cls.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER

    def pre_filter(self, state: ClusterState, ctx: CycleContext) -> PreFilterOutcome:
        claims = self.classify(state, ctx.pod)
        ctx.cache[NAME] = claims
        if claims is None:
            return PreFilterOutcome(skip=True)
        if isinstance(claims, str):
            return PreFilterOutcome(code=UNRESOLVABLE, reasons=(claims,))
        if claims.immediate:
            return PreFilterOutcome(code=UNRESOLVABLE, reasons=(REASON_UNBOUND_IMMEDIATE,))
        return PreFilterOutcome(node_names=self.eligible_nodes(state, claims))

    def eligible_nodes(self, state: ClusterState, claims: VolumeClaims) -> set[str] | None:
        """`GetEligibleNodes`: the intersection of the bound PVs' hostname pins (None: no restriction)."""
        eligible: set[str] | None = None
        view = storage_view(self.storage, state)
        for pvc in claims.bound:
            pv = view.volume(pvc.volume_name)
            if pv is None:
                return None
            names = local_node_names(pv)
            if names:
                eligible = set(names) if eligible is None else eligible & names
        return eligible

    def pre_static_for(self, state: ClusterState, ctx: CycleContext) -> bool:
        """Whether binds can never change this pod's PreFilter and PreScore outcomes (nor the claims PreFilter
        leaves in the cycle context): a pod without claims is skipped whatever is bound (`classify`: None), and
        PreScore reads the plugin's args alone. The engine then does not ask them again after each bind."""
        return not pod_claims(ctx.pod)

    # ------------------------------------------------------------------ Filter
    def filter(self, state: ClusterState, ctx: CycleContext, idx: np.ndarray) -> FilterOutcome:
        claims = ctx.cache.get(NAME)
        if claims is None or isinstance(claims, str):
            claims = self.classify(state, ctx.pod)
        matrix = np.zeros((len(idx), len(REASONS)), dtype=bool)
        if isinstance(claims, VolumeClaims):
            self._bound(state, claims, idx, matrix)
            if claims.delay and not self._provisioned_anywhere(claims):
                for row, node in enumerate(idx.tolist()):
                    unbound_ok, enough = self._unbound_on(state, claims, node)
                    matrix[row, 1], matrix[row, 2] = not unbound_ok, not enough
        codes = np.where(matrix.any(axis=1), UNRESOLVABLE, SUCCESS).astype(np.int8)
        return FilterOutcome(codes, list(REASONS), matrix)

    def _provisioned_anywhere(self, claims: VolumeClaims) -> bool:
        """Whether `_unbound_on` answers (True, True) on every node without looking: each delay-binding claim has
        no node selected yet, no volume of its class to bind, and a class that provisions on any node (a
        provisioner, no allowedTopologies, a driver without storage capacity tracking). The usual
        WaitForFirstConsumer claim of a StatefulSet: no loop over the nodes for each of its pods."""
        for pvc in claims.delay:
            cls = self.storage.classes.get(pvc.class_name) if pvc.class_name else None
            if (pvc.selected_node or cls is None or cls.provisioner in ("", NOT_SUPPORTED_PROVISIONER)
                    or cls.allowed_topologies or self.storage.volume_names_of_class(pvc.class_name)):
                return False
            driver = self.storage.csi_drivers.get(cls.provisioner)
            if pvc.request and driver is not None and driver.storage_capacity:
                return False
        return True

    def _bound(self, state: ClusterState, claims: VolumeClaims, idx: np.ndarray, matrix: np.ndarray) -> None:
        """`checkBoundClaims`: a missing PV fails every node (PV not found), else every PV's node affinity."""
        ok = np.ones(len(state), dtype=bool)
        view = storage_view(self.storage, state)
        for pvc in claims.bound:
            pv = view.volume(pvc.volume_name)
            if pv is None:
                matrix[:, 3] = True
                return
            ok &= pv_node_affinity_mask(state, pv)
        matrix[:, 0] = ~ok[idx]

    def _unbound_on(self, state: ClusterState, claims: VolumeClaims, node: int) -> tuple[bool, bool]:
        """`FindPodVolumes` for the delay-binding claims on one node: (unbound satisfied, sufficient storage)."""
        name = state.nodes[node].name
        to_provision, to_match = [], []
        for pvc in claims.delay:
            if pvc.selected_node:
                if pvc.selected_node != name:
                    return False, True
                to_provision.append(pvc)
            else:
                to_match.append(pvc)
        satisfied = True
        if to_match:
            satisfied, _bindings, unmatched = self.match_volumes(state, to_match, node)
            to_provision += unmatched
        if to_provision:
            return self.provisionable(state, to_provision, node)
        return satisfied, True

    def match_volumes(self, state: ClusterState, claims: list, node: int) -> tuple[bool, list, list]:
        """`findMatchingVolumes`: claims by increasing request, each takes the smallest matching PV not
        chosen yet; returns (all matched, [(pv, claim)], the unmatched claims)."""
        chosen: set[str] = set()
        bindings, unmatched = [], []
        for pvc in sorted(claims, key=lambda c: c.request):
            pv = self.find_matching_volume(state, pvc, node, chosen)
            if pv is None:
                unmatched.append(pvc)
                continue
            chosen.add(pv.meta.name)
            bindings.append((pv, pvc))
        return not unmatched, bindings, unmatched

    def find_matching_volume(self, state: ClusterState, pvc, node: int, excluded: set[str]) -> PersistentVolume | None:
        """`volume.FindMatchingVolume` on the scheduler path (node given, delay binding)."""
        selector = None if pvc.selector is None else parse_selector(pvc.selector)
        smallest = None
        for pv in storage_view(self.storage, state).volumes_of_class(pvc.class_name):
            if pv.meta.name in excluded:
                continue
            bound_to_claim = _bound_to(pv, pvc)
            if pv.claim_ref is not None and not bound_to_claim:
                continue
            if pv.capacity < pvc.request or pv.volume_mode != pvc.volume_mode or pv.deleting:
                continue
            affinity_ok = bool(pv_node_affinity_mask(state, pv)[node])
            if bound_to_claim:
                return pv if affinity_ok else None
            if pv.phase != "Available" or (selector is not None and not selector.matches(pv.meta.labels)):
                continue
            if pv.class_name != pvc.class_name or not affinity_ok:
                continue
            if not set(pvc.access_modes) <= set(pv.access_modes):
                continue
            if smallest is None or smallest.capacity > pv.capacity:
                smallest = pv
        return smallest

    def provisionable(self, state: ClusterState, claims: list, node: int) -> tuple[bool, bool]:
        """`checkVolumeProvisions`: (provision satisfied, sufficient storage)."""
        for pvc in claims:
            if not pvc.class_name:
                raise StatusError(f"no class for claim \"{pvc.meta.namespace}/{pvc.meta.name}\"")
            cls = self.storage.classes.get(pvc.class_name)
            if cls is None:
                raise StatusError(f"failed to find storage class \"{pvc.class_name}\"")
            if cls.provisioner in ("", NOT_SUPPORTED_PROVISIONER):
                return False, True
            if cls.allowed_topologies and not topology_mask(state, cls.allowed_topologies)[node]:
                return False, True  # (no allowedTopologies: every node; not a mask of every node per node)
            driver = self.storage.csi_drivers.get(cls.provisioner)
            if pvc.request and driver is not None and driver.storage_capacity:
                return True, False  # no CSIStorageCapacity object is read: none has room
        return True, True

    # ------------------------------------------------------------------ bind
    def assume(self, state: ClusterState, pod: Pod, node: int) -> None:
        """`AssumePodVolumes` (Reserve) after `pod` is bound to `node`: static bindings and provisioning."""
        claims = self.classify(state, pod)
        if not isinstance(claims, VolumeClaims) or not claims.delay:
            return
        view = storage_view(self.storage, state)
        to_match = [c for c in claims.delay if not c.selected_node]
        _ok, bindings, unmatched = self.match_volumes(state, to_match, node)
        for pv, pvc in bindings:
            view.assume_static(pv, pvc)
        for pvc in unmatched:
            view.assume_provision(pvc, state.nodes[node].name)

    def pre_score(self, state: ClusterState, ctx: CycleContext) -> bool:
        """Skip without a scorer (no StorageCapacityScoring); with one, PreScore never skips (v1.36.3: `if
        state.hasStaticBindings || pl.fts.EnableStorageCapacityScoring`), even for a pod without claims."""
        return self.shape is None

    def score(self, state: ClusterState, ctx: CycleContext, idx: np.ndarray) -> np.ndarray:
        out = np.zeros(len(idx), dtype=np.int64)
        claims = ctx.cache[NAME] if NAME in ctx.cache else self.classify(state, ctx.pod)
        if self.shape is None or not isinstance(claims, VolumeClaims):
            return out  # no claims: no `podVolumesByNode` entry, 0
        to_match = [c for c in claims.delay if not c.selected_node]
        if not any(self.storage.volume_names_of_class(c.class_name) for c in to_match):
            return out  # no volume to bind statically anywhere; dynamic provisions have no CSIStorageCapacity: 0
        for row, node in enumerate(idx.tolist()):
            _ok, bindings, _unmatched = self.match_volumes(state, to_match, node)
            by_class: dict[str, list[int]] = {}
            for pv, pvc in bindings:  # `StorageResource`: the claim's request, the PV's capacity (Value()),
                resource = by_class.setdefault(pv.storage_class_name, [0, 0])  # by `pv.Spec.StorageClassName`
                resource[0] += value(pvc.request)
                resource[1] += value(pv.capacity)
            out[row] = self.capacity_score(by_class.values())
        return out

    def capacity_score(self, classes) -> int:
        """`buildScorerFunction`'s scorer: the mean of the classes' shape scores, `math.Round`ed (0 without)."""
        total = count = 0
        for requested, capacity in classes:
            if capacity == 0 or requested > capacity:
                utilization = MAX_UTILIZATION
            else:
                utilization = go_div(int64(requested * MAX_UTILIZATION), capacity)
            total += broken_linear_one(utilization, self.shape)
            count += 1
        return 0 if count == 0 else (2 * total + count) // (2 * count)  # math.Round of a mean ≥ 0

    def normalize(self, raw: np.ndarray) -> np.ndarray:
        return raw

    def static_score_for(self, state: ClusterState, ctx: CycleContext) -> bool:
        """Whether binds can never change this pod's raw scores (rows.score_kernel): 0 everywhere without a
        scorer (StorageCapacityScoring off) or without claims to bind, so the engine keeps its row kernels
        (v1.37 scores every pod: most have no claims)."""
        if self.shape is None:
            return True
        claims = ctx.cache[NAME] if NAME in ctx.cache else self.classify(state, ctx.pod)
        if not isinstance(claims, VolumeClaims):
            return True
        # a claim to match scores only through a volume of its class (a run never adds volumes): none, 0
        return not any(self.storage.volume_names_of_class(c.class_name) for c in claims.delay if not c.selected_node)

    def signature(self, pod) -> tuple:
        """What this plugin reads of a pod: its namespace and volumes (its claims are its own, so a verdict
        cached for them stays valid when other pods' bindings are assumed)."""
        return (pod.namespace, repr(pod.volumes))


def _bound_to(pv: PersistentVolume, pvc) -> bool:
    """`IsVolumeBoundToClaim`: the PV's claimRef names the claim (and its UID, when set)."""
    ref = pv.claim_ref
    if ref is None or ref.name != pvc.meta.name or ref.namespace != pvc.meta.namespace:
        return False
    return not ref.uid or ref.uid == pvc.meta.uid


def assume_pod_volumes(filters: list, state: ClusterState, pod: Pod, node: int) -> None:
    """VolumeBinding's Reserve for a pod just bound to `node`, when the profile (its `filters`) has it."""
    for _name, plugin in filters:
        if isinstance(plugin, VolumeBinding):
            plugin.assume(state, pod, node)
