"""Cluster-wide objects beyond Nodes and Pods, as the scheduler's plugins read them, and their store.

`ClusterObjects` holds every such object of a scenario by kind (`objects.of("Service")`), in document
order; each kind has its decoder in a loader module (`kubefit.manifests.cluster`, `kubefit.manifests.storage`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ObjectMeta:
    """What the plugins read of any object's metadata."""

    name: str
    namespace: str = ""  # "" for cluster-scoped kinds
    uid: str = ""
    labels: dict[str, str] = field(default_factory=dict, hash=False, compare=False)
    source: str = ""  # the file it came from

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


@dataclass(frozen=True)
class Namespace:
    """v1 Namespace: its labels feed `namespaceSelector` of pod (anti-)affinity terms."""

    meta: ObjectMeta


@dataclass(frozen=True)
class Service:
    """v1 Service: `spec.selector` (a map; None or empty selects no pod for the scheduler)."""

    meta: ObjectMeta
    selector: dict[str, str] | None = field(default=None, hash=False, compare=False)


@dataclass(frozen=True)
class Controller:
    """A ReplicaSet, StatefulSet (apps/v1; `spec.selector` a LabelSelector) or ReplicationController
    (v1; `spec.selector` a map), read by PodTopologySpread's system-default constraints."""

    kind: str
    meta: ObjectMeta
    selector: dict[str, Any] | None = field(default=None, hash=False, compare=False)  # as given


@dataclass(frozen=True)
class ApiServer:
    """What the API server does with the objects a run creates (the claims the resourceclaim controller makes for
    new pods): whether admission runs (`--no-admission`: no), whether the pods being created are charged to their
    ResourceQuotas only when they arrive (a timeline), and the feature gates of the version answered for that
    change what it admits (DRAExtendedResource: the claim evaluator's extra names; DRAAdminAccess)."""

    admission: bool = True
    quota_at_arrival: bool = False
    extended_resource: bool = False
    admin_access: bool = True


@dataclass
class ClusterObjects:
    """Every cluster object of a scenario beyond Nodes and Pods, by kind, in document order, and the API server
    in front of them (`api_server`)."""

    by_kind: dict[str, list[Any]] = field(default_factory=dict)
    api_server: ApiServer = field(default_factory=ApiServer, compare=False)
    # per kind: (namespace, name) → the first object of that kind so named (`named`, built on first use)
    _named: dict[str, dict[tuple[str, str], Any]] = field(default_factory=dict, repr=False, compare=False)
    # (namespace, key, value) → (document position, Service) whose selector's first pair that is (`services_selecting`)
    _service_pairs: dict[tuple[str, str, str], list[tuple[int, Service]]] | None = field(
        default=None, repr=False, compare=False)

    def add(self, kind: str, obj: Any) -> None:
        self.by_kind.setdefault(kind, []).append(obj)
        self._named.pop(kind, None)
        if kind == "Service":
            self._service_pairs = None

    def replace_kind(self, kind: str, objs: list[Any]) -> None:
        """The objects of one kind are now `objs` (a version's API server dropped some, a translation is undone)."""
        self.by_kind[kind] = objs
        self._named.pop(kind, None)
        if kind == "Service":
            self._service_pairs = None

    def services_selecting(self, namespace: str, labels: dict[str, str]) -> list[Service]:
        """The Services of `namespace` whose non-empty `spec.selector` the labels satisfy (every pair), in
        document order; each is looked up by its selector's first pair, indexed once."""
        if self._service_pairs is None:
            self._service_pairs = {}
            for position, svc in enumerate(self.of("Service")):
                if svc.selector:
                    key, value = next(iter(svc.selector.items()))
                    self._service_pairs.setdefault((svc.meta.namespace, key, value), []).append((position, svc))
        found = [hit for key, value in labels.items() for hit in self._service_pairs.get((namespace, key, value), ())]
        return [svc for _position, svc in sorted(found, key=lambda hit: hit[0])
                if all(labels.get(k) == v for k, v in svc.selector.items())]

    def named(self, kind: str, namespace: str, name: str) -> Any | None:
        """The first object of one kind (document order) with that namespace and name; None: there is none."""
        index = self._named.get(kind)
        if index is None:
            index = self._named[kind] = {}
            for obj in self.of(kind):
                index.setdefault((obj.meta.namespace, obj.meta.name), obj)
        return index.get((namespace, name))

    def of(self, kind: str) -> list[Any]:
        """The objects of one kind (an empty list when the scenario has none)."""
        return self.by_kind.get(kind, [])

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        for kind, items in self.by_kind.items():
            for obj in items:
                yield kind, obj

    def __len__(self) -> int:
        return sum(len(v) for v in self.by_kind.values())
