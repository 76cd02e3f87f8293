"""The Kubernetes versions kubefit reproduces: one `KubeVersion` (minor, patch, feature gates, variants).

Versions are data. Each difference between scheduler versions that changes an answer is one named
`Variant` below, with the minor it first appears in, the upstream pull request, and the feature gate
that turns it on and off where upstream has one. Everything that differs by version asks
`version.has(VARIANT)` once, when it is built (defaulting, validation, plugin factories, the queue),
as kube-scheduler hands `feature.Features` to its plugin factories; nothing asks in a hot loop.

Feature gates follow `k8s.io/component-base/featuregate`: each version knows its own gates (a gate a
version does not have is refused as kube-scheduler refuses it), each gate has that version's default,
and a gate locked to its default (GA or deprecated) cannot be set to the other value.

Adding v1.38: a line in `PATCHES`, its column in `GATES`, and a `Variant` for each change.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from kubefit.errors import InputError

# The patch each minor is reproduced at (the newest whose scheduler source could be read).
PATCHES: dict[int, str] = {34: "v1.34.1", 35: "v1.35.4", 36: "v1.36.3", 37: "v1.37.0"}
DEFAULT_MINOR = 37  # the newest supported minor answers when nothing says otherwise
ENV = "KUBEFIT_KUBE_VERSION"

# gate -> {minor: (default, locked)}; a minor missing from a gate's map does not know the gate. The gates that
# `pkg/scheduler` reads, from `pkg/features/kube_features.go` of v1.34.1, v1.35.4 and v1.36.3 (versioned specs),
# and for v1.37 from its release notes (no v1.37 kube_features.go could be read: the changes named there are
# applied to v1.36's table). Every row was compared again (issue #46) with the kube_features.go vendored at
# v1.34.1 (kubernetes-sigs/cluster-capacity), v1.35.7 (openshift-kni/scheduler-plugins 2117d3e3) and v1.36.3
# (kubernetes-sigs/kueue), and with sig-release's v1.37.0-rc.0 release-notes draft: they agree.
_ALPHA, _BETA_OFF, _BETA, _GA, _LOCKED = (False, False), (False, False), (True, False), (True, False), (True, True)


def _gate(*per_minor: tuple[bool, bool] | None) -> dict[int, tuple[bool, bool]]:
    """Specs for 1.34, 1.35, 1.36, 1.37 in that order (None: the version does not know the gate)."""
    return {minor: spec for minor, spec in zip((34, 35, 36, 37), per_minor, strict=True) if spec is not None}


GATES: dict[str, dict[int, tuple[bool, bool]]] = {
    "CSIMigrationPortworx": _gate(_LOCKED, _LOCKED, None, None),
    "DRAAdminAccess": _gate(_BETA, _BETA, _LOCKED, _LOCKED),
    "DRAConsumableCapacity": _gate(_ALPHA, _ALPHA, _BETA, _BETA),
    "DRADeviceBindingConditions": _gate(_ALPHA, _ALPHA, _BETA, _BETA),
    "DRADeviceTaintRules": _gate(None, _ALPHA, _BETA_OFF, _BETA_OFF),
    "DRADeviceTaints": _gate(_ALPHA, _ALPHA, _BETA, _GA),  # GA in v1.37 (kubernetes#138676)
    "DRAExtendedResource": _gate(_ALPHA, _ALPHA, _BETA, _GA),  # GA in v1.37 (kubernetes#138488)
    "DRAListTypeAttributes": _gate(None, None, _ALPHA, _ALPHA),
    "DRANodeAllocatableResources": _gate(None, None, _ALPHA, _ALPHA),
    "DRAPartitionableDevices": _gate(_ALPHA, _ALPHA, _BETA, _BETA),
    "DRAPrioritizedList": _gate(_BETA, _BETA, _GA, _LOCKED),  # locked in v1.37 (kubernetes#139110)
    "DRAResourceClaimDeviceStatus": _gate(_BETA, _BETA, _BETA, _GA),  # GA in v1.37 (kubernetes#137546)
    "DRASchedulerFilterTimeout": _gate(_BETA, _BETA, _BETA, _BETA),
    "DRAWorkloadResourceClaims": _gate(None, None, _ALPHA, _BETA_OFF),  # beta, off, in v1.37 (kubernetes#140334)
    "DynamicResourceAllocation": _gate(_GA, _LOCKED, _LOCKED, _LOCKED),
    # workload-aware scheduling (KEP-4671 gang scheduling, KEP-5710 workload-aware preemption, KEP-5732 topology-aware
    # placement): alpha from v1.35 (kube_features.go of v1.35.4 and v1.36.3); in v1.37 the Workload and PodGroup
    # APIs are beta (`scheduling.k8s.io/v1beta1`, kubernetes#140184), off by default as beta APIs are, and
    # GangScheduling and WorkloadAwarePreemption are folded into GenericWorkload (removed, kubernetes#139520)
    "CompositePodGroup": _gate(None, None, None, _ALPHA),  # scheduling.k8s.io/v1alpha3 (kubernetes#139407, #139596)
    "GangScheduling": _gate(None, _ALPHA, _ALPHA, None),  # removed in v1.37 (kubernetes#139520)
    "GenericWorkload": _gate(None, _ALPHA, _ALPHA, _BETA_OFF),  # beta, off, in v1.37 (kubernetes#140184)
    "PodGroupPreemptionPolicy": _gate(None, None, None, _ALPHA),  # PodGroup.spec.preemptionPolicy (#139240, #140359)
    # kube-apiserver's (HPA validation), accepted by --feature-gates as kube-scheduler accepts every kube gate;
    # beta and on in v1.37 (kubernetes#139648, "Enabled scaling to and from zero by default for the HPA")
    "HPAScaleToZero": _gate(_ALPHA, _ALPHA, _ALPHA, _BETA),
    "InPlacePodLevelResourcesVerticalScaling": _gate(None, _ALPHA, _BETA, _BETA),
    "InPlacePodVerticalScaling": _gate(_BETA, _LOCKED, _LOCKED, _LOCKED),
    "MatchLabelKeysInPodTopologySpread": _gate(_BETA, _BETA, _BETA, _BETA),
    "NodeDeclaredFeatures": _gate(None, _ALPHA, _BETA, _GA),  # GA in v1.37 (kubernetes#139763)
    "NodeInclusionPolicyInPodTopologySpread": _gate(_LOCKED, _LOCKED, _LOCKED, _LOCKED),
    "NominatedNodeNameForExpectation": _gate(_ALPHA, _BETA, _BETA, _BETA),
    "OpportunisticBatching": _gate(None, _BETA, _BETA, _BETA),  # KEP-5598, kubernetes#135231
    "PodLevelResources": _gate(_BETA, _BETA, _BETA, _BETA),
    "SchedulerAsyncAPICalls": _gate(_BETA, _BETA_OFF, _BETA_OFF, _BETA_OFF),
    "SchedulerAsyncPreemption": _gate(_BETA, _BETA, _BETA, _BETA),
    "SchedulerPopFromBackoffQ": _gate(_BETA, _BETA, _BETA, _BETA),
    "SchedulerQueueingHints": _gate(_LOCKED, _LOCKED, _LOCKED, _LOCKED),
    "SidecarContainers": _gate(_LOCKED, _LOCKED, _LOCKED, None),  # removed in v1.37 (kubernetes#137755)
    "StorageCapacityScoring": _gate(_ALPHA, _ALPHA, _ALPHA, _BETA),  # beta, on, in v1.37 (issue #34)
    "TaintTolerationComparisonOperators": _gate(None, _ALPHA, _ALPHA, _ALPHA),
    "TopologyAwareWorkloadScheduling": _gate(None, None, _ALPHA, _ALPHA),  # placements per topology value (KEP-5732)
    "VolumeAttributesClass": _gate(_GA, _GA, _LOCKED, _LOCKED),
    # beta and on in v1.37 (kubernetes#140612; KEP-5030's beta "will be on in production", and
    # aws-ebs-csi-driver#3019 sets preventPodSchedulingIfMissing "on k8s 1.37 and later (where the feature is
    # enabled in beta)")
    "VolumeLimitScaling": _gate(None, _ALPHA, _ALPHA, _BETA),
    "WorkloadAwarePreemption": _gate(None, None, _ALPHA, None),  # removed in v1.37 (kubernetes#139520)
    "WorkloadWithJob": _gate(None, None, _ALPHA, _ALPHA),  # the Job controller's Workload (kubernetes#140188 in v1.37)
}

# gate -> the gates it needs, per minor (`defaultKubernetesFeatureGateDependencies` of kube_features.go, v1.35.4 and
# v1.36.3; v1.37 from its release notes: GangScheduling and WorkloadAwarePreemption are gone, the gates that remain
# keep needing GenericWorkload). Setting a gate on while one it needs is off is refused as kube-scheduler refuses it
# (`featureGate.Set`). Only the workload-aware scheduling gates are listed here.
DEPENDENCIES: dict[str, dict[int, tuple[str, ...]]] = {
    "GangScheduling": {35: ("GenericWorkload",), 36: ("GenericWorkload",)},
    "WorkloadAwarePreemption": {36: ("GangScheduling",)},
    "TopologyAwareWorkloadScheduling": {36: ("GenericWorkload",), 37: ("GenericWorkload",)},
    "WorkloadWithJob": {36: ("GenericWorkload",), 37: ("GenericWorkload",)},
    "DRAWorkloadResourceClaims": {36: ("DynamicResourceAllocation", "GenericWorkload"),
                                  37: ("DynamicResourceAllocation", "GenericWorkload")},
    "CompositePodGroup": {37: ("GenericWorkload",)},
    "PodGroupPreemptionPolicy": {37: ("GenericWorkload",)},
}


@dataclass(frozen=True)
class Variant:
    """One behaviour that differs between versions: on from minor `since` while every gate of `gates` is on."""

    name: str
    since: int
    pr: str
    summary: str
    gates: tuple[str, ...] = ()


BALANCED_WITHOUT_POD = "BalancedAllocationWithAndWithoutPod"
OPPORTUNISTIC_BATCHING = "OpportunisticBatching"
BATCH_RESCORES_LAST_NODE = "BatchRescoresLastNode"
TAINT_REASON_UNNAMED = "TaintReasonUnnamed"
FIT_ARGS_RTC_VALIDATION = "FitArgsRequestedToCapacityRatioValidation"
DRA_SCORE = "DynamicResourcesScore"
NODE_DECLARED_FEATURES = "NodeDeclaredFeaturesPlugin"
DRA_BINDING_TIMEOUT = "DynamicResourcesBindingTimeout"
DRA_SCORE_ALLOCATED_CLAIMS = "DynamicResourcesScoreAllocatedClaims"
STORAGE_CAPACITY_SCORING = "StorageCapacityScoring"
RESIZE_FOOTPRINT_MAX_OF_SUMS = "ResizeFootprintMaxOfSums"
IMAGE_LOCALITY_IMAGE_VOLUMES = "ImageLocalityImageVolumes"
IMAGE_LOCALITY_VOLUMES_THRESHOLD = "ImageLocalityImageVolumesInThreshold"
POD_SCHEDULING_GROUP = "PodSchedulingGroup"
POD_GROUP_CYCLE = "PodGroupCycle"
WORKLOAD_API_BETA = "WorkloadAPIBeta"
GANG_GATES_MERGED = "GangGatesMerged"
CSI_DRIVER_REQUIRED_ON_NODE = "CSIDriverRequiredOnNode"
LABEL_KEY_MESSAGES = "LabelKeyMessages"
PLACEMENT_FEASIBLE = "PlacementFeasible"
POD_GROUP_POST_FILTER_ONLY = "PodGroupPostFilterOnly"
WAP_SINGLE_ATTEMPT = "WorkloadPreemptionSingleAttempt"
POD_GROUP_REQUEUE_ACTIVE = "PodGroupRequeueActive"
POD_GROUP_VALIDATION = "PodGroupMemberValidation"
PREEMPTION_PLACEMENT_MESSAGE = "PreemptionPlacementMessage"
COMPOSITE_POD_GROUP_CYCLE = "CompositePodGroupCycle"
# the structured allocator of DynamicResources (kubefit.scheduler.dra.allocator.Rules reads these)
DRA_SKIP_BAD_POOLS = "DRASkipIncompleteAndInvalidPools"
DRA_CLASS_CONFIG_REQUESTS = "DRAClassConfigNamesRequests"
DRA_SORTED_POOLS = "DRASortedPools"
DRA_COMBINATIONS = "DRACombinationsSearch"
DRA_COUNTER_SLICES_EVERYWHERE = "DRACounterSlicesReachEveryNode"
DRA_COUNTER_SLICES_OWN_NODES = "DRACounterSlicesReachTheirNodes"
DRA_ROLLBACK_CANDIDATE = "DRARollbackRejectedCandidate"
DRA_COUNTERS_BY_POOL_ID = "DRACountersByPoolID"
DRA_DISTINCT_PER_DEVICE = "DRADistinctAttributePerDevice"
DRA_SHARE_SPARES_COUNTERS = "DRAShareWithoutCapacitySparesCounters"
DRA_ALL_MODE_CAPACITY = "DRAAllModeNeedsEveryDeviceCapacity"
DRA_MILLI_RANGES = "DRACapacityRangesInMilliUnits"
DRA_LIST_INTERSECTION_RESTORE = "DRAListMatchRestoresIntersection"
DRA_CONFIG_ONCE = "DRAClaimConfigOnceAndClearedForAll"
DRA_LIST_VALUES_IN_CEL = "DRAListValuesAlwaysConverted"
DRA_CEL_ERROR_NAMES_DEVICE = "DRACelErrorNamesDevice"

VARIANTS: tuple[Variant, ...] = (
    Variant(TAINT_REASON_UNNAMED, 35, "kubernetes#134740",
            "TaintToleration's Filter reason no longer names the taint: `node(s) had untolerated taint(s)`"),
    Variant(OPPORTUNISTIC_BATCHING, 35, "KEP-5598, kubernetes#135231",
            "a pod whose scheduling signature equals the previous pod's takes the next node of that pod's "
            "sorted score list (re-filtered, not re-scored)", gates=("OpportunisticBatching",)),
    Variant(DRA_SCORE, 35, "kubernetes#134711",
            "DynamicResources scores nodes (ranks of the allocated firstAvailable subrequests), weight 2 in the "
            "default profile; from v1.36 only while DRAPrioritizedList is on", gates=("DRAPrioritizedList",)),
    Variant(DRA_SCORE_ALLOCATED_CLAIMS, 36, "dynamicresources.go computeScore, v1.35.4 -> v1.36.3",
            "DynamicResources' Score reads an allocated claim's own allocation and the node's allocation results "
            "for the others in order (v1.35 indexed the results by claim: an allocated claim beside unallocated "
            "ones failed the cycle, `number of allocations N is smaller than number of claims`)"),
    Variant(NODE_DECLARED_FEATURES, 35, "KEP-5328, kubernetes#133389",
            "NodeDeclaredFeatures Filter, appended to the default profile", gates=("NodeDeclaredFeatures",)),
    Variant(BALANCED_WITHOUT_POD, 36, "kubernetes#135573",
            "NodeResourcesBalancedAllocation scores the balance with and without the incoming pod: "
            "50 + (50 + with - without) / 2"),
    Variant(FIT_ARGS_RTC_VALIDATION, 36, "kubernetes#132120",
            "NodeResourcesFitArgs: the shape is validated at `scoringStrategy.requestedToCapacityRatio.shape`; "
            "RequestedToCapacityRatio without `requestedToCapacityRatio` is a validation error (v1.34 and v1.35 "
            "panic), and `requestedToCapacityRatio` with another type is forbidden"),
    Variant(DRA_BINDING_TIMEOUT, 35, "KEP-5007 (DRADeviceBindingConditions, beta and on in v1.36)",
            "DynamicResourcesArgs.bindingTimeout defaulted to 10m (`SetDefaults_DynamicResourcesArgs`)",
            gates=("DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus")),
    Variant(STORAGE_CAPACITY_SCORING, 33, "KEP-4049, kubernetes#128184",
            "VolumeBinding scores nodes (PreScore no longer skips): the static bindings of a node, per storage "
            "class, by the `VolumeBindingArgs.shape` of requested / PV capacity (dynamic provisions by their "
            "CSIStorageCapacity); `shape` defaulted to (0, 10), (100, 0) and validated, refused without the gate",
            gates=("StorageCapacityScoring",)),
    Variant(IMAGE_LOCALITY_IMAGE_VOLUMES, 36, "kubernetes#130231",
            "ImageLocality adds the images of image volumes (`spec.volumes[].image.reference`) held by the node to "
            "its sum; the upper threshold still counts only the containers and init containers"),
    Variant(IMAGE_LOCALITY_VOLUMES_THRESHOLD, 37, "kubernetes#138951",
            "ImageLocality's upper threshold (1000 MiB per image) counts the image volumes too, as the sum does"),
    Variant(RESIZE_FOOTPRINT_MAX_OF_SUMS, 37, "kubernetes#140047",
            "a bound pod being resized counts the max of the sums of its containers' desired, allocated and "
            "actuated requests (v1.34-v1.36: the sum of each container's max). Not reproduced: the PR's rules for "
            "init containers, sidecars and Infeasible resizes could not be read; kubefit counts v1.36's footprint "
            "and says so when the two can differ"),
    Variant(LABEL_KEY_MESSAGES, 35, "apimachinery da7b67ed (kubernetes af6b3ed1, `Add support for k8s-label-key`)",
            "label keys are checked by `content.IsLabelKey` (`validation.IsQualifiedName` and `labels`' key check): "
            "\"a valid label key ...\" where v1.34 says \"a qualified name ...\", and lengths in bytes, not characters "
            "(NodeResourcesFitArgs.ignoredResources, NodeAffinityArgs.addedAffinity)"),
    Variant(CSI_DRIVER_REQUIRED_ON_NODE, 35, "KEP-5030 (VolumeLimitScaling: alpha v1.35, beta and on v1.37)",
            "NodeVolumeLimits refuses a node whose CSINode lacks the CSI driver of a new volume when that driver's "
            "CSIDriver sets `preventPodSchedulingIfMissing` (`<driver> CSI driver is not installed on the node`)",
            gates=("VolumeLimitScaling",)),
    Variant(BATCH_RESCORES_LAST_NODE, 37, "kubernetes#140289",
            "opportunistic batching rescores the last chosen node", gates=("OpportunisticBatching",)),
    # workload-aware scheduling (`kubefit.scheduler.podgroups`, `kubefit.scheduler.groupcycle`)
    Variant(POD_SCHEDULING_GROUP, 36, "KEP-4671, kubernetes v1.36.3 core/v1 PodSpec",
            "a pod names its group in `spec.schedulingGroup.podGroupName` (a PodGroup object, scheduling.k8s.io/"
            "v1alpha2); v1.35: `spec.workloadRef{name, podGroup, podGroupReplicaKey}` naming a pod group of a "
            "Workload (v1alpha1), a field v1.36 tombstones"),
    Variant(POD_GROUP_CYCLE, 36, "KEP-4671, v1.36.3 schedule_one_podgroup.go",
            "the pods of a pod group are one queue entry scheduled in one pod group cycle on one snapshot "
            "(assumed there, bound together or not at all); v1.35 schedules them pod by pod, the gang's pods "
            "holding their nodes at Permit until minCount of them wait (5 minutes at most)",
            gates=("GenericWorkload",)),
    Variant(WORKLOAD_API_BETA, 37, "kubernetes#140184, #140080",
            "Workload and PodGroup are served as scheduling.k8s.io/v1beta1 (v1alpha2 no longer), a PodGroup names "
            "its Workload in `spec.workloadRef{workloadName, templateName}`, `disruptionMode` is `{single|all}`"),
    Variant(GANG_GATES_MERGED, 37, "kubernetes#139520",
            "GangScheduling and WorkloadAwarePreemption are no longer gates: what they enabled is on with "
            "GenericWorkload"),
    # v1.37's pod group cycle (`schedule_one_podgroup.go` of the v1.37 code freeze, `gangscheduling.go`)
    Variant(PLACEMENT_FEASIBLE, 37, "kubernetes#138643, #140215",
            "GangScheduling's PlacementFeasible decides a pod group cycle instead of Permit: checked before the "
            "first pod and after each (`minCount (N) cannot be satisfied: S scheduled, R remaining` stops the "
            "cycle at once), a group is feasible once minCount pods (1 for basic) are scheduled, bound ones "
            "included", gates=("GenericWorkload",)),
    Variant(POD_GROUP_POST_FILTER_ONLY, 37, "kubernetes#140412, #139674, #140683, #139218",
            "no PostFilter for the pods of a pod group cycle (their message is their FitError alone); "
            "PodGroupPostFilter (DefaultPreemption's workload-aware preemption) runs once the whole group is "
            "unschedulable, for groups with topology constraints too, its messages prefixed `pod group "
            "preemption: `", gates=("GenericWorkload",)),
    Variant(WAP_SINGLE_ATTEMPT, 37, "kubernetes#139980, #138757, #140311",
            "workload-aware preemption runs the group's algorithm once with every potential victim removed, then "
            "reprieves victims (most important first) whose return leaves every proposed pod fitting on its "
            "proposed node; success says `found a placement for podgroup, preempting N victims`",
            gates=("GenericWorkload",)),
    Variant(POD_GROUP_REQUEUE_ACTIVE, 37, "kubernetes#139613",
            "after a successful pod group cycle the group's remaining pods go straight back to the active queue "
            "(their timestamps kept): the group gets its next cycle at once", gates=("GenericWorkload",)),
    Variant(POD_GROUP_VALIDATION, 37, "kubernetes#139920, #140359, #140183",
            "a pod group cycle first checks its pods (pending and bound): one schedulerName, the PodGroup's "
            "priority, one preemption policy (with PodGroupPreemptionPolicy: the PodGroup's); else every pod fails "
            "with the error and the PodGroup's condition says it", gates=("GenericWorkload",)),
    Variant(PREEMPTION_PLACEMENT_MESSAGE, 37, "kubernetes#140180",
            "DefaultPreemption says where it found room: `preemption: found a potential placement for pod on node "
            "N, preempting K victims` (v1.34-v1.36: nothing)"),
    Variant(COMPOSITE_POD_GROUP_CYCLE, 37, "KEP-6012, kubernetes#139596, #140634",
            "a CompositePodGroup hierarchy is one queue entry scheduled in one cycle from its root: children in "
            "order, GangScheduling's PlacementFeasible counting scheduled children against minGroupCount",
            gates=("GenericWorkload", "CompositePodGroup")),
    Variant(DRA_SKIP_BAD_POOLS, 35, "dynamic-resource-allocation v0.35 (allocateOne, Allocate)",
            "the DRA allocator skips incomplete and invalid pools; a node where nothing fits and a pool is invalid "
            "fails with `invalid resource pools were encountered` (v1.34: an invalid pool fails the whole cycle, an "
            "incomplete pool's devices are allocated)"),
    Variant(DRA_CLASS_CONFIG_REQUESTS, 35, "dynamic-resource-allocation v0.35 (Allocate)",
            "a DeviceClass's configuration is copied into an allocation once, naming the requests using the class"),
    Variant(DRA_SORTED_POOLS, 36, "dynamic-resource-allocation v0.36 (sortPoolsByID, sortSlicesByName)",
            "the incubating and experimental DRA allocators try pools in (driver, pool) order and a pool's slices by "
            "name (v1.34, v1.35 and v1.36's stable allocator: Go map order, random)"),
    Variant(DRA_COMBINATIONS, 36, "dynamic-resource-allocation v0.36 (allocateOne startLocation)",
            "the next device of one request is searched after the previous one (combinations, not permutations): a "
            "device allowing multiple allocations is taken once per request"),
    Variant(DRA_COUNTER_SLICES_EVERYWHERE, 36, "dynamic-resource-allocation v0.36 (NewAllocator slicesShared)",
            "a ResourceSlice with sharedCounters reaches every node (an invalid or incomplete such pool shows on "
            "every node)", gates=("DRAPartitionableDevices",)),
    Variant(DRA_COUNTER_SLICES_OWN_NODES, 37, "dynamic-resource-allocation master after v0.37.0-alpha.2",
            "a ResourceSlice with sharedCounters reaches the nodes its node selection names, as any slice"),
    Variant(DRA_ROLLBACK_CANDIDATE, 36, "kubernetes#140431 (v1.36.3: rollbackDevice)",
            "a candidate device rejected (taint, constraint, capacity) gives back the counters it took"),
    Variant(DRA_COUNTERS_BY_POOL_ID, 37, "kubernetes#140435",
            "shared counters are kept per (driver, pool) (v1.36: per pool name, mixing two drivers' same-named pools)"),
    Variant(DRA_DISTINCT_PER_DEVICE, 37, "kubernetes#140600",
            "distinctAttribute compares every device of a request (v1.36: the last one per request)"),
    Variant(DRA_SHARE_SPARES_COUNTERS, 37, "kubernetes#140437",
            "a share without consumed capacity already held spares a multi-allocatable device's counters"),
    Variant(DRA_ALL_MODE_CAPACITY, 37, "kubernetes#140769",
            "allocationMode All fails when a matching device lacks the capacity asked for (v1.36: leaves it out)"),
    Variant(DRA_MILLI_RANGES, 37, "kubernetes#140161",
            "capacity request-policy ranges are rounded in milli-units (v1.36: whole units, Quantity.Value())"),
    Variant(DRA_LIST_INTERSECTION_RESTORE, 37, "kubernetes#140325",
            "a list-type matchAttribute restores its intersection when the search backtracks",
            gates=("DRAListTypeAttributes",)),
    Variant(DRA_CONFIG_ONCE, 37, "kubernetes#139731, kubernetes#139732",
            "a claim's configuration is copied once, and one that applies to every request names none"),
    Variant(DRA_LIST_VALUES_IN_CEL, 37, "dynamic-resource-allocation master (getAttributeValue)",
            "CEL converts list-type attributes whatever DRAListTypeAttributes says (v1.36: an error without it)"),
    Variant(DRA_CEL_ERROR_NAMES_DEVICE, 37, "kubernetes#136709",
            "a CEL runtime error of a selector names the device"),
)
_VARIANT_BY_NAME = {v.name: v for v in VARIANTS}


@dataclass(frozen=True)
class KubeVersion:
    """One Kubernetes minor as kubefit reproduces it, with its feature gates resolved."""

    minor: int
    gates: tuple[tuple[str, bool], ...] = ()  # every gate the version knows, resolved (defaults + overrides)
    overrides: tuple[tuple[str, bool], ...] = ()  # what the user set (`--feature-gates`)
    variants: frozenset[str] = field(default=frozenset(), compare=False)

    @property
    def name(self) -> str:
        """`1.36`."""
        return f"1.{self.minor}"

    @property
    def patch(self) -> str:
        """The patch release reproduced, `v1.36.3`."""
        return PATCHES[self.minor]

    def has(self, variant: str) -> bool:
        """Whether this version (with its gates) behaves as `variant` says."""
        if variant not in _VARIANT_BY_NAME:
            raise KeyError(variant)
        return variant in self.variants

    def gate(self, name: str) -> bool:
        """The gate's value in this version (False for a gate the version does not know)."""
        return dict(self.gates).get(name, False)

    def describe(self) -> dict:
        """What a result says of the version it answers for (`inputs.kubeVersion`)."""
        out: dict = {"minor": self.name, "patch": self.patch}
        if self.overrides:
            out["featureGates"] = dict(self.overrides)
        return out


def gate_table() -> list[tuple[str, list[str]]]:
    """Each gate with its default per supported minor (`true`, `false`, `true (locked)`, `—` if unknown)."""
    rows = []
    for name in sorted(GATES):
        cells = []
        for minor in PATCHES:
            spec = GATES[name].get(minor)
            cells.append("—" if spec is None else str(spec[0]).lower() + (" (locked)" if spec[1] else ""))
        rows.append((name, cells))
    return rows


def supported() -> str:
    """`1.34, 1.35, 1.36, 1.37`: the list every refusal names."""
    return ", ".join(f"1.{m}" for m in PATCHES)


_VERSION_TEXT = re.compile(r"v?1\.(\d+)(?:\.(\d+))?")


def parse_minor(text: str, *, field_name: str = "--kube-version") -> int:
    """`1.36`, `v1.36` or the reproduced patch `v1.36.3` → 36; anything else is refused with the list."""
    raw = str(text).strip()
    match = _VERSION_TEXT.fullmatch(raw)
    minor = int(match.group(1)) if match else None
    if minor in PATCHES and (match.group(2) is None or f"v1.{minor}.{match.group(2)}" == PATCHES[minor]):
        return minor
    if minor in PATCHES:
        raise InputError(f"unsupported Kubernetes version {raw!r}: kubefit reproduces 1.{minor} at "
                         f"{PATCHES[minor]} (give 1.{minor}); supported: {supported()}", field=field_name)
    raise InputError(f"unsupported Kubernetes version {raw!r}; supported: {supported()}", field=field_name)


def parse_gate_overrides(text: str | Mapping[str, bool] | None) -> dict[str, bool]:
    """`Name=true,Other=false` (kube-scheduler's `--feature-gates`) → {name: bool}; bad values refused."""
    if text is None or isinstance(text, Mapping):
        return {str(k): bool(v) for k, v in (text or {}).items()}
    out: dict[str, bool] = {}
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        name, sep, value = part.partition("=")
        name = name.strip()
        if not sep or value.strip().lower() not in ("true", "false"):
            raise InputError(f'invalid argument "{text}" for "--feature-gates" flag: '
                             + (f"missing bool value for {name}" if not sep else
                                f"invalid value of {name}={value.strip()}, err: strconv.ParseBool: parsing "
                                f'"{value.strip()}": invalid syntax'), field="--feature-gates")
        out[name] = value.strip().lower() == "true"
    return out


def resolve(kube_version: str | int | None = None, feature_gates: str | Mapping[str, bool] | None = None, *,
            scenario_version: str | None = None) -> KubeVersion:
    """The version to answer for: `kube_version`, else `$KUBEFIT_KUBE_VERSION`, else the minor of the version
    a snapshot recorded (`scenario_version`, any patch of a supported minor), else the newest; with
    `feature_gates` applied as kube-scheduler's `--feature-gates` applies them (unknown gates and locked
    gates refused with its messages)."""
    if isinstance(kube_version, int):
        minor = kube_version if kube_version in PATCHES else parse_minor(f"1.{kube_version}")
    elif kube_version not in (None, ""):
        minor = parse_minor(str(kube_version))
    elif os.environ.get(ENV):
        minor = parse_minor(os.environ[ENV], field_name=ENV)
    else:
        recorded = release_minor(scenario_version)
        minor = recorded if recorded in PATCHES else DEFAULT_MINOR
    return for_minor(minor, parse_gate_overrides(feature_gates))


def resolve_each(text: str | None, feature_gates: str | Mapping[str, bool] | None = None) -> list[KubeVersion]:
    """The versions a list names (`1.34,1.37`; `all`: every supported one), each `resolve`d with the gates;
    none named: the one `resolve` answers for (`config validate --kube-version`, `check --kube-version`)."""
    if text is not None and str(text).strip().lower() == "all":
        return [resolve(minor, feature_gates) for minor in PATCHES]
    names = [t.strip() for t in str(text or "").split(",") if t.strip()] or [None]
    return [resolve(name, feature_gates) for name in names]


def release_minor(git_version: str | None) -> int | None:
    """The minor of a cluster's `gitVersion` (`v1.36.5`, `v1.36.3-gke.1200`, `v1.35.0+k3s1`), or None.

    >>> release_minor("v1.36.3-gke.1200"), release_minor("1.35.0+k3s1"), release_minor("devel")
    (36, 35, None)
    """
    match = re.match(r"v?1\.(\d+)(?:\.\d+)?(?:[-+].*)?$", str(git_version or "").strip())
    return int(match.group(1)) if match else None


def scenario_note(version: KubeVersion, recorded: str | None, chosen: bool) -> str | None:
    """What to tell when a scenario records its cluster's version: that the answer is for it (`chosen`), or
    for which version instead (`--kube-version`, the environment, or an unsupported recorded version)."""
    if not recorded:
        return None
    if chosen and release_minor(recorded) == version.minor:
        return (f"the scenario was taken from a Kubernetes {recorded} cluster: answered as kube-scheduler "
                f"{version.patch} (another version: --kube-version)")
    if release_minor(recorded) not in PATCHES:
        return (f"the scenario was taken from a Kubernetes {recorded} cluster, a version kubefit does not "
                f"reproduce ({supported()}): answered as kube-scheduler {version.patch}")
    return (f"the scenario was taken from a Kubernetes {recorded} cluster; answered as kube-scheduler "
            f"{version.patch}, as asked")


def for_minor(minor: int, overrides: Mapping[str, bool] | None = None) -> KubeVersion:
    """The `KubeVersion` of a supported minor with `overrides` set on its gates."""
    gates = {name: spec[minor][0] for name, spec in GATES.items() if minor in spec}
    for name, value in (overrides or {}).items():
        spec = GATES.get(name, {}).get(minor)
        if spec is None:
            raise InputError(f'invalid argument "{name}={str(value).lower()}" for "--feature-gates" flag: '
                             f"unrecognized feature gate: {name} (Kubernetes 1.{minor}; `kubefit version "
                             f"--feature-gates` lists each version's gates)", field="--feature-gates")
        default, locked = spec
        if locked and value != default:
            raise InputError(f'invalid argument "{name}={str(value).lower()}" for "--feature-gates" flag: '
                             f"cannot set feature gate {name} to {str(value).lower()}, feature is locked to "
                             f"{str(default).lower()}", field="--feature-gates")
        gates[name] = bool(value)
    _check_dependencies(minor, gates)
    variants = frozenset(v.name for v in VARIANTS if minor >= v.since and all(gates.get(g) for g in v.gates))
    return KubeVersion(minor, tuple(sorted(gates.items())), tuple(sorted((overrides or {}).items())), variants)


def _check_dependencies(minor: int, gates: Mapping[str, bool]) -> None:
    """`featureGate.Set`'s last check: a gate on whose dependencies are not all on is refused, with its message."""
    errors = []
    for name in sorted(DEPENDENCIES):
        needed = DEPENDENCIES[name].get(minor, ())
        off = [dep for dep in needed if not gates.get(dep, False)]
        if gates.get(name, False) and off:
            errors.append(f"{name} is enabled, but depends on features that are disabled: [{' '.join(off)}]")
    if errors:
        raise InputError(f'invalid argument for "--feature-gates" flag: {"; ".join(errors)}', field="--feature-gates")


def default_version() -> KubeVersion:
    """The version answered for when nothing names one: `$KUBEFIT_KUBE_VERSION`, else the newest."""
    return resolve()
