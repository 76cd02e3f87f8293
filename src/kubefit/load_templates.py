"""Node templates for `plan`: Node manifests to copy, each with its cost (the `kubefit.io/cost` label)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from kubefit.errors import InputError
from kubefit.load import decode_node, manifest_files, read_documents
from kubefit.scheduler.plan import Template, template_cost


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
