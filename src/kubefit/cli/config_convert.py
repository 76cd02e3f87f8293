"""`kubefit config convert`: an old scheduler configuration (v1beta1–3, Policy) as today's v1 YAML."""

from __future__ import annotations

from typing import Annotated

import typer
import yaml

from kubefit.cli.config import config_app, config_document
from kubefit.errors import InputError
from kubefit.manifests.documents import Document
from kubefit.scheduler.config.dialects import out_of_tree_plugins, print_notes, to_v1, without_plugins


def convert_document(doc: Document) -> tuple[str, list[str]]:
    """The v1 YAML text (notes as `# note:` comments on top) and the notes, validated as v1.

    Out-of-tree plugins are kept as given, with a note; the rest is validated as v1 without them."""
    from kubefit.scheduler.config import load_configuration

    body, notes = to_v1(doc)
    foreign = out_of_tree_plugins(body)
    for path, name in foreign:
        notes.append(f"{path}: plugin {name} is not built into kube-scheduler v1.34 (an out-of-tree plugin): kept "
                     "as given; kube-scheduler needs a build that registers it, and kubefit cannot evaluate it")
    checked = without_plugins(body, {name for _, name in foreign})
    load_configuration(Document(body=checked, source=doc.source, index=doc.index))  # refuse what v1 refuses
    head = "".join(f"# note: {n}\n" for n in notes)
    return head + yaml.safe_dump(body, sort_keys=False, default_flow_style=False), notes


def _config_document(path: str) -> Document:
    """The one scheduler configuration in `path` (KubeSchedulerConfiguration or Policy)."""
    doc = config_document(path)
    if doc is None:
        raise InputError("no KubeSchedulerConfiguration or Policy to convert", file=path)
    return doc


@config_app.command("convert")
def convert(
    filename: Annotated[str, typer.Option("-f", "--filename", help="Old configuration: v1beta1–v1beta3 or a legacy Policy.")],
    to: Annotated[str, typer.Option("--to", help="Target version (only v1).")] = "v1",
) -> None:
    """Print the equivalent v1 KubeSchedulerConfiguration; each inexact choice is a `# note:`."""
    if to not in ("v1", "kubescheduler.config.k8s.io/v1"):
        raise InputError(f'unsupported target version "{to}" (supported: v1)', field="--to")
    text, notes = convert_document(_config_document(filename))
    print_notes(notes)
    print(text, end="")
