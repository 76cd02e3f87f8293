"""Plugin name → constructor from its (defaulted) args and the cluster's objects; the framework builds a
profile's plugins here (`build`), one registry per Kubernetes version made by `default_registry(version)`.

As kube-scheduler's `registry.go` hands `feature.Features` to each factory, a factory here reads the
version's variants (`kubefit.k8s.version`) once, when it builds its plugin."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from kubefit.api.cluster import ClusterObjects
from kubefit.k8s import declaredfeatures
from kubefit.k8s.version import (
    BALANCED_WITHOUT_POD,
    CSI_DRIVER_REQUIRED_ON_NODE,
    DRA_SCORE,
    DRA_SCORE_ALLOCATED_CLAIMS,
    IMAGE_LOCALITY_IMAGE_VOLUMES,
    IMAGE_LOCALITY_VOLUMES_THRESHOLD,
    NODE_DECLARED_FEATURES,
    STORAGE_CAPACITY_SCORING,
    TAINT_REASON_UNNAMED,
    KubeVersion,
    default_version,
)
from kubefit.scheduler.config import BalancedAllocationArgs, NodeResourcesFitArgs

Factory = Callable[[Any, ClusterObjects], Any]  # (args, objects) -> plugin
EXTRA: dict[str, Factory] = {}  # registered at run time (tests, extensions)


@cache
def default_registry(version: KubeVersion) -> dict[str, Factory]:
    """Every plugin kubefit evaluates in `version`, by its kube-scheduler name."""
    from kubefit.scheduler.plugins.balanced import NodeResourcesBalancedAllocation
    from kubefit.scheduler.plugins.fit import NodeResourcesFit
    from kubefit.scheduler.plugins.imagelocality import ImageLocality
    from kubefit.scheduler.plugins.interpodaffinity import InterPodAffinity
    from kubefit.scheduler.plugins.nodeaffinity import NodeAffinity
    from kubefit.scheduler.plugins.nodedeclaredfeatures import NodeDeclaredFeatures
    from kubefit.scheduler.plugins.nodename import NodeName
    from kubefit.scheduler.plugins.nodeports import NodePorts
    from kubefit.scheduler.plugins.nodeunschedulable import NodeUnschedulable
    from kubefit.scheduler.plugins.schedulinggates import SchedulingGates
    from kubefit.scheduler.plugins.tainttoleration import TaintToleration
    from kubefit.scheduler.plugins.topologyspread import PodTopologySpread

    factories: dict[str, Factory] = {
        "SchedulingGates": lambda args, objects: SchedulingGates(),
        "NodeUnschedulable": lambda args, objects: NodeUnschedulable(),
        "NodeName": lambda args, objects: NodeName(),
        "TaintToleration": lambda args, objects: TaintToleration(names_taint=not version.has(TAINT_REASON_UNNAMED)),
        "NodeAffinity": lambda args, objects: NodeAffinity.from_args(args),
        "NodePorts": lambda args, objects: NodePorts(),
        "NodeResourcesFit": lambda args, objects: NodeResourcesFit(args or NodeResourcesFitArgs(),
                                                                   backed=_backed(version, objects)),
        "PodTopologySpread": PodTopologySpread.from_args,
        "InterPodAffinity": InterPodAffinity.from_args,
        "DynamicResources": lambda args, objects: _dynamic_resources(version, objects),
        "NodeResourcesBalancedAllocation": lambda args, objects: NodeResourcesBalancedAllocation(
            args or BalancedAllocationArgs(), with_and_without=version.has(BALANCED_WITHOUT_POD),
            backed=_backed(version, objects)),
        "ImageLocality": lambda args, objects: ImageLocality(
            counts_image_volumes=version.has(IMAGE_LOCALITY_IMAGE_VOLUMES),
            volumes_in_threshold=version.has(IMAGE_LOCALITY_VOLUMES_THRESHOLD)),
    }
    if version.minor >= 35:  # in the registry from v1.35; without its gate, built disabled (Skip)
        factories["NodeDeclaredFeatures"] = lambda args, objects: NodeDeclaredFeatures(
            registry=declaredfeatures.registry(version.minor), enabled=version.has(NODE_DECLARED_FEATURES),
            maps=version.minor >= 36, names_missing=version.minor == 35)
    factories.update(_storage_factories(version))
    return factories


def _backed(version: KubeVersion, objects) -> frozenset[str]:
    """DRAExtendedResource: the extended resources DeviceClasses back (none without the gate or classes)."""
    if objects is None or not version.gate("DRAExtendedResource") or not objects.of("DeviceClass"):
        return frozenset()
    from kubefit.scheduler.plugins.resource_allocation import backed_resources

    return backed_resources(objects)


def _dynamic_resources(version: KubeVersion, objects):
    """DynamicResources with the version's allocator (`AllocatorFeatures(fts)`, `NewAllocator`'s choice)."""
    from kubefit.scheduler.dra.allocator import choose_rules, version_features
    from kubefit.scheduler.plugins.dynamicresources import DynamicResources

    features = version_features(version)
    return DynamicResources(objects=objects, scores=version.has(DRA_SCORE),
                            scores_by_claim_index=not version.has(DRA_SCORE_ALLOCATED_CLAIMS), features=features,
                            rules=choose_rules(version, features),
                            extended_resources=version.gate("DRAExtendedResource"))


def _storage_factories(version: KubeVersion) -> dict[str, Factory]:
    """The volume plugins, sharing one StorageIndex per set of cluster objects."""
    try:
        from kubefit.scheduler.plugins.nodevolumelimits import NodeVolumeLimits
        from kubefit.scheduler.plugins.volumebinding import DEFAULT_SHAPE, VolumeBinding
        from kubefit.scheduler.plugins.volumerestrictions import VolumeRestrictions
        from kubefit.scheduler.plugins.volumes import StorageIndex
        from kubefit.scheduler.plugins.volumezone import VolumeZone
    except ImportError:  # pragma: no cover - the volume plugins are optional while being built
        return {}

    def storage(objects: ClusterObjects) -> StorageIndex:
        memo = objects.__dict__.setdefault("_memo", {})
        if "storage" not in memo:
            memo["storage"] = StorageIndex.from_objects(objects)
        return memo["storage"]

    def node_pods(state, n):
        return state.pods[n]

    return {
        "VolumeRestrictions": lambda args, objects: VolumeRestrictions(storage(objects), node_pods),
        "NodeVolumeLimits": lambda args, objects: NodeVolumeLimits(
            storage(objects), node_pods, requires_driver=version.has(CSI_DRIVER_REQUIRED_ON_NODE)),
        "VolumeBinding": lambda args, objects: VolumeBinding(storage(objects), shape=(
            _volume_binding_shape(args, DEFAULT_SHAPE) if version.has(STORAGE_CAPACITY_SCORING) else None)),
        "VolumeZone": lambda args, objects: VolumeZone(storage(objects)),
    }


def _volume_binding_shape(args: Any, default: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    """`VolumeBindingArgs.shape` as (utilization, score) points (the defaulted args carry it; args not
    given at all: the default shape)."""
    points = (args or {}).get("shape") if isinstance(args, dict) else None
    if not points:
        return default
    return tuple((int(p.get("utilization") or 0), int(p.get("score") or 0)) for p in points)


def register(name: str, factory: Factory) -> None:
    """Make plugin `name` buildable beyond the default registry."""
    EXTRA[name] = factory


def build(name: str, args: Any, objects: ClusterObjects | None = None,
          version: KubeVersion | None = None) -> Any | None:
    """The plugin object as `version` builds it (None: the default version), or None for a plugin kubefit
    does not evaluate."""
    factory = EXTRA.get(name) or default_registry(version or default_version()).get(name)
    return factory(args, objects if objects is not None else ClusterObjects()) if factory else None
