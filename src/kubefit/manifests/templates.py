"""Node templates for `plan`: Node manifests to copy, each with its cost (the `kubefit.io/cost` label)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

from kubefit.api.core import Node
from kubefit.errors import InputError
from kubefit.manifests.documents import manifest_files, read_documents
from kubefit.manifests.load import decode_node

COST_LABEL = "kubefit.io/cost"  # what one node of a template costs (plan; consolidate's --order cost)


@dataclass
class Template:
    """A Node manifest to copy, and what one copy costs."""

    node: Node
    cost: Decimal = Decimal(1)

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


def load_templates(paths: Sequence[str | Path]) -> list[Template]:
    """The templates of the files (folders: their manifests); every object must be a Node, names unique."""
    templates: list[Template] = []
    for path in paths:
        for file in manifest_files(str(path)):
            for doc in read_documents(file, allow_empty=False):
                if doc.kind != "Node":
                    raise InputError(f"a node template must be a Node, got {doc.kind or 'no kind'}",
                                     file=doc.source, obj=doc.label, field="kind")
                node = decode_node(doc, [])
                templates.append(Template(node, template_cost(node)))
    names = [t.name for t in templates]
    for t in templates:
        if names.count(t.name) > 1:
            raise InputError(f"two node templates named {t.name!r}; names must be unique", file=t.node.source,
                             obj=f"Node/{t.name}", field="metadata.name")
    return templates
