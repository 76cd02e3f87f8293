"""Node templates for `plan`: Node manifests to copy, each with its cost (the `kubefit.io/cost` label)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

from kubefit.api.core import Node
from kubefit.api.dra import ResourceSlice
from kubefit.errors import InputError
from kubefit.manifests.documents import manifest_files, read_documents
from kubefit.manifests.dra import decode_resource_slice
from kubefit.manifests.load import decode_node

COST_LABEL = "kubefit.io/cost"  # what one node of a template costs (plan; consolidate's --order cost)


@dataclass
class Template:
    """A Node manifest to copy, what one copy costs, and the ResourceSlices its devices come with (DRA)."""

    node: Node
    cost: Decimal = Decimal(1)
    slices: tuple = ()  # ResourceSlices naming the template node (spec.nodeName): copied with each node

    @property
    def name(self) -> str:
        return self.node.name


def template_cost(node: Node) -> Decimal:
    """The `kubefit.io/cost` label of a template (default 1): a non-negative decimal number."""
    raw = node.labels.get(COST_LABEL)
    if raw is None:
        return Decimal(1)
    try:
        cost = Decimal(raw)
    except InvalidOperation:
        cost = Decimal(-1)
    if not cost.is_finite() or cost < 0:
        raise InputError(f"must be a non-negative number, got {raw!r}", file=node.source, obj=f"Node/{node.name}",
                         field=f"metadata.labels.{COST_LABEL}")
    return cost


def copy_names(template: str, count: int, taken: set[str]) -> list[str]:
    """`count` names for copies of the node `template`: `<template>-<i>`, skipping the names in `taken` (the
    cluster's and the copies made before; each new name is added to it)."""
    names: list[str] = []
    i = 0
    while len(names) < count:
        i += 1
        name = f"{template}-{i}"
        if name not in taken:
            taken.add(name)
            names.append(name)
    return names


def _selection_field(s: ResourceSlice) -> str:
    """The node selection field a slice uses (`exactly one of nodeName, nodeSelector, allNodes,
    perDeviceNodeSelection`)."""
    if s.node_name is not None:
        return "spec.nodeName"
    if s.all_nodes:
        return "spec.allNodes"
    return "spec.perDeviceNodeSelection" if s.per_device_node_selection else "spec.nodeSelector"


def _slice_problem(s: ResourceSlice, templates: dict[str, Template]) -> str:
    """Why a template file's ResourceSlice is no template node's: only node-local slices (`spec.nodeName` naming a
    template node) come with a new node, as cluster-autoscaler copies only those (`SanitizedNodeResourceSlices`:
    `can't sanitize slice ... because it isn't node-local`)."""
    names = ", ".join(templates) or "none"
    if s.node_name is None:
        return (f"a node template's ResourceSlice must be node-local, spec.nodeName naming a template node (one of "
                f"{names}): devices reachable from other nodes ({_selection_field(s)}) do not come with a new node")
    return f"a node template's ResourceSlice must name a template node in spec.nodeName (one of {names}), got " \
           f"{s.node_name!r}"


def renamed_for(text: str, template: str, node: str) -> str:
    """A template slice's name or pool name for the copy `node`: the template's name in it replaced by the copy's,
    else `-<node>` appended (a driver's pool names are unique, as cluster-autoscaler's `SanitizedNodeResourceSlices`
    appends a suffix to every pool and slice name)."""
    return text.replace(template, node) if template in text else f"{text}-{node}"


def load_templates(paths: Sequence[str | Path]) -> list[Template]:
    """The templates of the files (folders: their manifests): Nodes, names unique, each with the
    ResourceSlices that name it in `spec.nodeName` (the devices a copy of it brings)."""
    templates: list[Template] = []
    slices = []
    for path in paths:
        for file in manifest_files(str(path)):
            for doc in read_documents(file, allow_empty=False):
                if doc.kind == "ResourceSlice":
                    slices.append(decode_resource_slice(doc, []))
                    continue
                if doc.kind != "Node":
                    raise InputError(f"a node template must be a Node (or a ResourceSlice of one), got "
                                     f"{doc.kind or 'no kind'}", file=doc.source, obj=doc.label, field="kind")
                node = decode_node(doc, [])
                templates.append(Template(node, template_cost(node)))
    by_name = {t.name: t for t in templates}
    for s in slices:
        owner = by_name.get(s.node_name or "")
        if owner is None:
            raise InputError(_slice_problem(s, by_name), file=s.meta.source, obj=f"ResourceSlice/{s.meta.name}",
                             field=_selection_field(s))
        owner.slices = (*owner.slices, s)
    names = [t.name for t in templates]
    for t in templates:
        if names.count(t.name) > 1:
            raise InputError(f"two node templates named {t.name!r}; names must be unique", file=t.node.source,
                             obj=f"Node/{t.name}", field="metadata.name")
    return templates
