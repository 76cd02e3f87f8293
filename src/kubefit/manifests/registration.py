"""What every kubelet puts on the Node it registers, and the notes for Node manifests written without it.

A kubelet registers its node with `kubernetes.io/hostname`, `kubernetes.io/os` and `kubernetes.io/arch`
(and their `beta.` forms) — `initialNode` in pkg/kubelet/kubelet_node_status.go — so every live cluster's
nodes carry them, and install manifests select on them (`nodeSelector: {kubernetes.io/os: linux}` in
ingress-nginx, Argo CD, cert-manager, metrics-server, ...). kubefit takes a Node document as it is written:
when none of the scenario's nodes has such a label and a pod selects on it, every node fails NodeAffinity
for that pod, which is not what the cluster described would do; the note names the label and the pods
(kubefit cannot guess a node's operating system or architecture, so it adds nothing).

It also reports `pods` in `status.allocatable` (its `--max-pods`, 110 by default): a Node document without it
holds no pod at all (NodeResourcesFit: "Too many pods"), which a note says too.
"""

from __future__ import annotations

from collections.abc import Iterable

from kubefit.api.core import Node, Pod
from kubefit.k8s.resourcenames import PODS

KUBELET_LABELS = ("kubernetes.io/os", "kubernetes.io/arch", "beta.kubernetes.io/os", "beta.kubernetes.io/arch")


def _selected_keys(pod: Pod) -> set[str]:
    """The label keys the pod's nodeSelector and required node affinity (matchExpressions) select on."""
    keys = set(pod.node_selector or ())
    required = (((pod.affinity or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    for term in required.get("nodeSelectorTerms") or ():
        for expression in (term or {}).get("matchExpressions") or ():
            if isinstance(expression, dict) and isinstance(expression.get("key"), str):
                keys.add(expression["key"])
    return keys


def missing_kubelet_labels_note(pods: Iterable[Pod], nodes: list[Node], whose: str = "the scenario's nodes"
                                ) -> str | None:
    """The warning when pods select on a kubelet label that none of `nodes` carries (None: no such pod, or no
    node at all)."""
    if not nodes:
        return None
    missing = [k for k in KUBELET_LABELS if not any(k in n.labels for n in nodes)]
    if not missing:
        return None
    selecting: dict[str, list[str]] = {}
    seen: dict[tuple[int, int], set[str]] = {}  # pods of one spec share their decoded selector and affinity
    for pod in pods:
        shape = (id(pod.node_selector), id(pod.affinity))
        keys = seen.get(shape)
        if keys is None:
            keys = seen[shape] = _selected_keys(pod).intersection(missing)
        for key in sorted(keys):
            selecting.setdefault(key, []).append(pod.created_by or f"Pod/{pod.name}")
    if not selecting:
        return None
    owners = list(dict.fromkeys(o for found in selecting.values() for o in found))
    shown = ", ".join(owners[:3]) + (f" and {len(owners) - 3} more" if len(owners) > 3 else "")
    return (f"{whose} have no {', '.join(selecting)} label, which every kubelet sets on its node: pods selecting "
            f"on it ({shown}) fit none of them; add the labels the cluster's nodes carry (e.g. kubernetes.io/os: "
            f"linux, kubernetes.io/arch: amd64) to the Node documents")


def missing_pods_note(nodes: list[Node], whose: str = "the scenario's nodes") -> str | None:
    """The warning for nodes whose allocatable has no `pods` (None when every node has it); nodes with no
    allocatable at all are warned about when decoded."""
    lacking = [n.name for n in nodes if n.allocatable and PODS not in n.allocatable]
    if not lacking:
        return None
    shown = ", ".join(lacking[:3]) + (f" and {len(lacking) - 3} more" if len(lacking) > 3 else "")
    return (f"{len(lacking)} of {whose} ({shown}) have no pods in status.allocatable, which every kubelet reports "
            f"(its --max-pods, 110 by default): no pod fits them (Too many pods); add pods: \"110\"")


def registration_notes(pods: Iterable[Pod], nodes: list[Node], whose: str = "the scenario's nodes") -> list[str]:
    """The notes on `nodes` lacking what every kubelet registers that change where `pods` can go."""
    return [n for n in (missing_pods_note(nodes, whose), missing_kubelet_labels_note(pods, nodes, whose)) if n]
