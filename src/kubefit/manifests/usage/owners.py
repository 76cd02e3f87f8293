"""Which workload a pod belongs to, as the VPA finds it, and the usage of each workload's containers gathered.

A pod's workload is its topmost well-known controller (kubernetes/autoscaler `vertical-pod-autoscaler/pkg/target/
controller_fetcher` `FindTopMostWellKnownOrScalable`, what `GetMatchingVPA` compares a VPA's `targetRef` with):
its controller (the owner reference with `controller: true`, or the workload kubefit expanded it from), a
ReplicaSet's own controller (a Deployment), a Job's (a CronJob). A ReplicaSet the files do not hold is taken for
its Deployment's when the pod's `pod-template-hash` label ends its name, as the Deployment controller names it.

Usage names pods that may be gone (a 30-day window spans rollouts): a pod the scenario does not hold is
attributed by its name to a workload of its namespace that would have created it (`<deployment>-<hash>-<5>`,
`<statefulset>-<ordinal>`, `<daemonset/job/replicaset>-<5>`), and a series may name its workload itself
(`prometheus` owner labels). Usage of no workload of the scenario, or of a container its pods do not have, is
named in a warning and ignored.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from kubefit.api.core import Pod
from kubefit.manifests.controllers import controller_of
from kubefit.manifests.documents import Document
from kubefit.manifests.usage.model import CPU, MEMORY, SERIES, ContainerUsage, UsageData

POD_TEMPLATE_HASH = "pod-template-hash"
Workload = tuple[str, str, str]  # (namespace, kind, name)
_SUFFIX5 = r"[bcdfghjklmnpqrstvwxz2456789]{5}"  # k8s.io/apimachinery/pkg/util/rand alphanums
_DEPLOYMENT_POD = re.compile(rf"^(?P<owner>.+)-[a-z0-9]{{1,10}}-{_SUFFIX5}$")
_GENERATED_POD = re.compile(rf"^(?P<owner>.+)-{_SUFFIX5}$")
_ORDINAL_POD = re.compile(r"^(?P<owner>.+)-(?:0|[1-9][0-9]*)$")


def label(workload: Workload) -> str:
    """`namespace/Kind/name`, as messages name a workload."""
    return f"{workload[0]}/{workload[1]}/{workload[2]}"


class Workloads:
    """The scenario's workloads, to find a pod's (see the module's docstring)."""

    def __init__(self, workloads: Iterable[Document], pods: Iterable[Pod]) -> None:
        self.docs: dict[Workload, Document] = {}
        for doc in workloads:
            self.docs[(_namespace(doc), doc.kind, doc.name)] = doc
        self.pods = {(p.namespace, p.name): p for p in pods}
        self.kinds_in: dict[str, set[tuple[str, str]]] = {}
        for ns, kind, name in self.docs:
            self.kinds_in.setdefault(ns, set()).add((kind, name))

    def of(self, pod: Pod) -> Workload | None:
        """The pod's workload, None when it declares no controller."""
        owner = controller_of(pod)
        if owner is None:
            return None
        return self.top(pod.namespace, owner, pod.labels.get(POD_TEMPLATE_HASH))

    def top(self, namespace: str, owner: tuple[str, str], template_hash: str | None = None) -> Workload:
        """The topmost well-known controller above `owner` (a ReplicaSet's Deployment, a Job's CronJob)."""
        kind, name = owner
        seen = 0
        while kind in ("ReplicaSet", "Job") and seen < 4:
            seen += 1
            doc = self.docs.get((namespace, kind, name))
            if doc is not None:
                parent = _controller_ref(doc.body)
                if parent is None:
                    break
                kind, name = parent
                continue
            if kind == "ReplicaSet" and template_hash and name.endswith(f"-{template_hash}"):
                kind, name = "Deployment", name[: -len(template_hash) - 1]
            break
        return namespace, kind, name

    def by_name(self, namespace: str, pod: str) -> Workload | None:
        """The workload of `namespace` that would have named a pod `pod`, or None."""
        known = self.kinds_in.get(namespace, set())
        for pattern, kinds in ((_DEPLOYMENT_POD, ("Deployment",)), (_ORDINAL_POD, ("StatefulSet",)),
                               (_GENERATED_POD, ("DaemonSet", "Job", "ReplicaSet", "ReplicationController"))):
            m = pattern.match(pod)
            if m is None:
                continue
            for kind in kinds:
                if (kind, m["owner"]) in known:
                    return self.top(namespace, (kind, m["owner"]))
        m = _GENERATED_POD.match(pod)  # a Deployment's ReplicaSet `<d>-<hash>` given as owner name
        if m is not None:
            rs = m["owner"]
            dep = _DEPLOYMENT_POD.match(rs + "-bbbbb")
            if dep is not None and ("Deployment", dep["owner"]) in known:
                return namespace, "Deployment", dep["owner"]
        return None

    def owner_of(self, usage: ContainerUsage) -> Workload | None:
        """The workload a container's usage belongs to: its pod's in the scenario, else the one its series names,
        else the one whose pods are named so."""
        pod = self.pods.get((usage.namespace, usage.pod)) if usage.pod else None
        if pod is not None:
            return self.of(pod)
        if usage.owner is not None:
            kind, name = usage.owner
            if kind == "ReplicaSet" and (usage.namespace, kind, name) not in self.docs:
                by = self.by_name(usage.namespace, f"{name}-bbbbb")
                if by is not None:
                    return by
            return self.top(usage.namespace, (kind, name))
        return self.by_name(usage.namespace, usage.pod or "")


@dataclass
class ContainerSeries:
    """A workload container's usage gathered over its pods: every sample of each resource (float64 arrays, cores
    and bytes), the pods they came from, the checkpoint histograms (a VPA's), and what kind of data it is."""

    cpu: list[np.ndarray] = field(default_factory=list)
    memory: list[np.ndarray] = field(default_factory=list)
    pods: set[str] = field(default_factory=set)
    histograms: dict = field(default_factory=dict)
    measured: str = SERIES

    def values(self, resource: str) -> np.ndarray:
        """Every sample of `resource`, one array."""
        parts = self.cpu if resource == CPU else self.memory
        if not parts:
            return np.empty(0)
        return parts[0] if len(parts) == 1 else np.concatenate(parts)


@dataclass
class Attributed:
    """Usage per workload and container name, and what could not be attributed (for the warnings)."""

    series: dict[Workload, dict[str, ContainerSeries]] = field(default_factory=dict)
    unknown_pods: list[str] = field(default_factory=list)
    unknown_containers: list[str] = field(default_factory=list)
    unsplit: list[str] = field(default_factory=list)  # aggregates that could not be divided among pods
    by_name: int = 0


def attribute(data: UsageData, workloads: Workloads,
              containers_of: dict[Workload, dict[str, dict[str, float]]]) -> Attributed:
    """Each container's usage added to its workload's (`containers_of`: each workload's container names and their
    requests, cores and bytes); the rest counted for the warnings. An aggregate's sums (`ContainerUsage.summed`)
    are divided by the average number of pods: its request average over one pod's request."""
    out = Attributed()
    for usage in data.containers:
        workload = workloads.owner_of(usage)
        if workload is None or workload not in containers_of:
            out.unknown_pods.append(f"{usage.namespace}/{usage.pod or '/'.join(usage.owner or ())}")
            continue
        if usage.pod and (usage.namespace, usage.pod) not in workloads.pods:
            out.by_name += 1
        if usage.container not in containers_of[workload]:
            out.unknown_containers.append(f"{label(workload)} container {usage.container!r}")
            continue
        into = out.series.setdefault(workload, {}).setdefault(usage.container, ContainerSeries())
        into.measured = usage.measured
        requests = containers_of[workload][usage.container]
        for resource in (CPU, MEMORY):
            samples = getattr(usage, resource)
            if samples is None or not len(samples):
                continue
            values = samples.values
            if usage.summed is not None:
                pods = (usage.summed.get(resource) or 0.0) / requests.get(resource, 0.0) if requests.get(
                    resource) else 0.0
                if pods <= 0:
                    out.unsplit.append(f"{label(workload)} container {usage.container!r} {resource}")
                    continue
                values = values / pods
            (into.cpu if resource == CPU else into.memory).append(values)
        into.histograms.update(usage.histograms)
        into.pods.add(usage.pod or "")
    return out


def _namespace(doc: Document) -> str:
    meta = doc.body.get("metadata") if isinstance(doc.body.get("metadata"), dict) else {}
    return str(meta.get("namespace") or "default")


def _controller_ref(body: dict) -> tuple[str, str] | None:
    for ref in (body.get("metadata") or {}).get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller") is True:
            return str(ref.get("kind")), str(ref.get("name"))
    return None


def unknown_note(what: list[str], kind: str) -> str | None:
    """One warning for usage that names no workload or container of the scenario (ignored)."""
    if not what:
        return None
    shown = ", ".join(sorted(set(what))[:3])
    more = len(set(what)) - 3
    return (f"usage of {len(set(what))} {kind} not in the scenario ignored: {shown}"
            + (f" and {more} more" if more > 0 else ""))
