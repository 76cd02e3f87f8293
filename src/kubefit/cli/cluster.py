"""Verbs that bring real clusters in: `kubefit snapshot` (a live cluster) and `kubefit import` (traces)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml

from kubefit.cli import app, warn
from kubefit.errors import InputError

try:  # the C emitter writes a 9k-object trace in well under a second
    _Dumper: type = yaml.CSafeDumper
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _Dumper = yaml.SafeDumper

import_app = typer.Typer(help="Turn a public cluster trace into a scenario file.", no_args_is_help=True)
app.add_typer(import_app, name="import")

ScenarioOut = Annotated[str | None, typer.Option(
    "-o", "--output-file", help="Write the scenario here (.json: a kind: List; else multi-document YAML); "
                                "default stdout.")]


def write_scenario(documents: list[dict[str, Any]], path: str | None) -> None:
    """Objects → multi-document YAML (or a JSON `kind: List` for a .json path) on `path` or stdout."""
    if path and path.endswith(".json"):
        text = json.dumps({"apiVersion": "v1", "kind": "List", "items": documents}, indent=1) + "\n"
    else:
        text = yaml.dump_all(documents, Dumper=_Dumper, sort_keys=False, default_flow_style=False)
    if not path or path == "-":
        sys.stdout.write(text)
        return
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror or exc}", file=path) from None


@import_app.command("alibaba-gpu")
def import_alibaba_gpu(
    nodes: Annotated[str, typer.Argument(help="Node list, e.g. openb_node_list_gpu_node.csv.")],
    pods: Annotated[str, typer.Argument(help="Pod list, e.g. openb_pod_list_default.csv.")],
    output: ScenarioOut = None,
    dra: Annotated[bool, typer.Option("--dra", help="GPUs as Dynamic Resource Allocation devices: a "
                                                    "DeviceClass, one ResourceSlice per GPU node and one "
                                                    "ResourceClaim per GPU pod (not nvidia.com/gpu).")] = False,
) -> None:
    """Alibaba GPU trace (cluster-trace-gpu-v2023) → nodes and the queue of pending pods."""
    from kubefit.manifests.importers.alibaba import import_alibaba_gpu as read_trace

    trace = read_trace(nodes, pods, dra=dra)
    for message in trace.warnings:
        warn(message)
    write_scenario(trace.documents(), output)
    if output:
        devices = f", {len(trace.devices)} DRA objects" if trace.devices else ""
        print(f"wrote {len(trace.nodes)} nodes{devices} and {len(trace.pods)} pods to {output}", file=sys.stderr)


@app.command("snapshot")
def snapshot(
    kubeconfig: Annotated[str | None, typer.Option("--kubeconfig", help="Path to the kubeconfig file.")] = None,
    context: Annotated[str | None, typer.Option("--context", help="The kubeconfig context to use.")] = None,
    output: ScenarioOut = None,
) -> None:
    """Nodes, storage objects, PDBs, non-terminal pods, namespaces, services, pod controllers, LimitRanges,
    ResourceQuotas (with their status), RuntimeClasses, PriorityClasses and DRA objects of a live cluster → a scenario (pending
    pods stay pending)."""
    from kubefit.manifests.snapshot import CLUSTER_KINDS, DRA_KINDS, POLICY_KINDS
    from kubefit.manifests.snapshot import snapshot as read_cluster

    cluster_kinds = {entry[4] for entry in CLUSTER_KINDS}
    dra_kinds = {entry[4] for entry in DRA_KINDS}
    policy_kinds = {entry[4] for entry in POLICY_KINDS}

    documents = read_cluster(kubeconfig, context)
    write_scenario(documents, output)
    if output:
        nodes = sum(1 for d in documents if d["kind"] == "Node")
        pods = sum(1 for d in documents if d["kind"] == "Pod")
        pending = sum(1 for d in documents if d["kind"] == "Pod" and not d["spec"].get("nodeName"))
        cluster = sum(1 for d in documents if d["kind"] in cluster_kinds)
        dra = sum(1 for d in documents if d["kind"] in dra_kinds)
        policy = sum(1 for d in documents if d["kind"] in policy_kinds)
        others = len(documents) - nodes - pods - cluster - dra - policy
        more = f", {others} storage objects and disruption budgets" if others else ""
        more += f", {cluster} namespaces, services and controllers" if cluster else ""
        more += f", {policy} LimitRanges, ResourceQuotas, RuntimeClasses and PriorityClasses" if policy else ""
        more += f", {dra} device classes, resource slices, claims and claim templates" if dra else ""
        print(f"wrote {nodes} nodes{more} and {pods} pods ({pending} pending) to {output}",
              file=sys.stderr)
