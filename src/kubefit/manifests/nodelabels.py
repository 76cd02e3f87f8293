"""The labels every kubelet puts on its Node, and the note for Node manifests written without them.

A kubelet registers its node with `kubernetes.io/hostname`, `kubernetes.io/os` and `kubernetes.io/arch`
(and their `beta.` forms) — `initialNode` in pkg/kubelet/kubelet_node_status.go — so every live cluster's
nodes carry them, and install manifests select on them (`nodeSelector: {kubernetes.io/os: linux}` in
ingress-nginx, Argo CD, cert-manager, metrics-server, ...). kubefit takes a Node document as it is written:
when none of the scenario's nodes has such a label and a pod selects on it, every node fails NodeAffinity
for that pod, which is not what the cluster described would do; the note names the label and the pods
(kubefit cannot guess a node's operating system or architecture, so it adds nothing).
"""

from __future__ import annotations

from collections.abc import Iterable

from kubefit.api.core import Node, Pod

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
    for pod in pods:
        for key in sorted(_selected_keys(pod).intersection(missing)):
            selecting.setdefault(key, []).append(pod.created_by or f"Pod/{pod.name}")
    if not selecting:
        return None
    owners = list(dict.fromkeys(o for found in selecting.values() for o in found))
    shown = ", ".join(owners[:3]) + (f" and {len(owners) - 3} more" if len(owners) > 3 else "")
    return (f"{whose} have no {', '.join(selecting)} label, which every kubelet sets on its node: pods selecting "
            f"on it ({shown}) fit none of them; add the labels the cluster's nodes carry (e.g. kubernetes.io/os: "
            f"linux, kubernetes.io/arch: amd64) to the Node documents")
