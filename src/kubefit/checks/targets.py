"""The workloads and pods `kubefit check` names: `namespace/kind/name` everywhere, resolved against the scenario.

A pod belongs to the workload its controller chain leads to, as `kubectl` shows it: the workload kubefit expanded
it from (`Pod.created_by`), else its controller `ownerReference`, a ReplicaSet owned by a Deployment standing for
that Deployment (`kubectl get deployment` is what a reviewer reads); a pod with neither is its own workload
(`shop/pod/x`). An assertion names a workload as kubectl does (`deployment/web`, `deploy/web`), with its
namespace (`shop/deployment/web`), or a pod (`x`, `shop/x`); without a namespace (and no `-n`) the name must be
found in one namespace only: two are refused with the candidates listed, never merged.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kubefit.errors import InputError
from kubefit.manifests.workloads import workload_name

if TYPE_CHECKING:
    from kubefit.api.core import Pod
    from kubefit.manifests.documents import Document


@dataclass(frozen=True, order=True)
class Workload:
    """A workload as `kubectl` names it, with its namespace (`kind` "Pod" for a pod of no controller)."""

    namespace: str
    kind: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.kind.lower()}/{self.name}"

    @property
    def label(self) -> str:
        """`Kind/name`, as messages about manifests name an object."""
        return f"{self.kind}/{self.name}"


class Owners:
    """The workload of each pod (see the module's docstring), from the scenario's workload documents."""

    def __init__(self, workloads: Iterable[Document]) -> None:
        self.deployment_of: dict[tuple[str, str], str] = {}  # (namespace, ReplicaSet) → its Deployment
        for doc in workloads:
            if doc.kind != "ReplicaSet":
                continue
            meta = doc.body.get("metadata") or {}
            for ref in meta.get("ownerReferences") or []:
                if isinstance(ref, dict) and ref.get("controller") is True and ref.get("kind") == "Deployment":
                    self.deployment_of[(str(meta.get("namespace") or "default"), doc.name)] = str(ref.get("name"))

    def of(self, pod: Pod) -> Workload:
        if pod.created_by:
            kind, _, name = pod.created_by.partition("/")
            return Workload(pod.namespace, kind, name)
        for ref in pod.owner_references:
            if ref.controller and ref.kind not in ("Node", ""):  # a mirror pod's owner is its node: its own
                if ref.kind == "ReplicaSet" and (pod.namespace, ref.name) in self.deployment_of:
                    return Workload(pod.namespace, "Deployment", self.deployment_of[(pod.namespace, ref.name)])
                return Workload(pod.namespace, ref.kind, ref.name)
        return Workload(pod.namespace, "Pod", pod.name)


@dataclass(frozen=True)
class Target:
    """What an assertion names, parsed (`text` as given): a workload (`kind`) or a pod (`kind` None), with a
    namespace or none (any that has it)."""

    text: str
    kind: str | None
    name: str
    namespace: str | None

    @classmethod
    def parse(cls, text: str, namespace: str | None = None) -> Target:
        """`deployment/web`, `shop/deployment/web`, `x`, `shop/x`; `namespace` (`-n`) for a name without one."""
        named = workload_name(text)
        if named is not None:
            ns, kind, name = named
            return cls(text, kind, name, ns or namespace)
        ns, _, name = text.rpartition("/")
        return cls(text, None, name, ns or namespace)

    def matches(self, workload: Workload, pod: Pod | None = None) -> bool:
        if self.namespace is not None and workload.namespace != self.namespace:
            return False
        if self.kind is None:
            return pod is not None and pod.name == self.name
        return (workload.kind, workload.name) == (self.kind, self.name)

    def resolve(self, owners: Owners, pods: Iterable[Pod], where: dict[str, str | None]) -> Workload | None:
        """The one namespace's workload (or pod) this names among `pods`, None when it names none; found in
        several namespaces it is refused with the candidates (`where`: the assertion's file and field)."""
        found: set[Workload] = set()
        for pod in pods:
            workload = owners.of(pod)
            if self.matches(workload, pod):
                found.add(workload if self.kind is not None else Workload(pod.namespace, "Pod", pod.name))
        if len(found) > 1:
            named = ", ".join(self.spelled(w) for w in sorted(found))
            raise InputError(f"{self.text} names pods of several namespaces: give one of {named} (or -n NAMESPACE)",
                             **where)
        return next(iter(found), None)

    def spelled(self, workload: Workload) -> str:
        """How to name `workload` with its namespace (a pod as `namespace/name`)."""
        return f"{workload.namespace}/{workload.name}" if self.kind is None else str(workload)
