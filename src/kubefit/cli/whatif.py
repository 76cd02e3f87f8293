"""What-if verbs and options: `plan` (nodes to add from templates) and `--cordon/--drain/--remove NODE…`."""

from __future__ import annotations

import gc
from typing import Annotated

import typer

from kubefit.cli import FilesOption, OutputFormat, OutputOption, RecursiveOption, app, warn, warn_ignored
from kubefit.errors import InputError
from kubefit.load import (
    Scenario,
    collector_paused,
    decode_node,
    load_scenario,
    manifest_files,
    read_documents,
)
from kubefit.report.output import emit
from kubefit.scheduler.nodeactions import NodeActions, apply_node_actions
from kubefit.scheduler.scenario import Prepared, prepare

CordonOption = Annotated[list[str] | None, typer.Option(
    "--cordon", help="Mark these nodes unschedulable first (their pods stay); names separated by spaces or commas.")]
DrainOption = Annotated[list[str] | None, typer.Option(
    "--drain", help="Cordon these nodes and queue their pods again (DaemonSet and mirror pods stay), "
    "as kubectl drain --ignore-daemonsets.")]
RemoveOption = Annotated[list[str] | None, typer.Option(
    "--remove", help="Delete these nodes; their pods (but DaemonSet pods) are queued again.")]


def node_actions(cordon: list[str] | None, drain: list[str] | None, remove: list[str] | None) -> NodeActions:
    """The options' node names (several per option: spaces or commas)."""
    def split(values: list[str] | None) -> list[str]:
        return [n.strip() for v in values or [] for n in v.split(",") if n.strip()]
    return NodeActions(split(cordon), split(drain), split(remove))


def load_prepared(files: list[str], verb: str, recursive: bool = False, actions: NodeActions | None = None, *,
                  progress=None) -> tuple[Scenario, Prepared, list]:
    """Load the scenario, apply the node actions, compile it; tell the user what to know.

    Returns the scenario, its prepared form and the pods the actions evicted into the queue.
    """
    with collector_paused():
        scenario = load_scenario(files, progress, recursive=recursive)
        warn_ignored(scenario, verb, config=True, members=True)
        evicted: list = []
        if actions:
            scenario, evicted = apply_node_actions(scenario, actions)
        prepared = prepare(scenario)
        for note in prepared.notes:
            warn(note)
        gc.freeze()  # before the collector resumes: the command ends with the scenario alive, no collection
        # need ever walk it (on 150k pods the first one after loading alone took 0.5 s, the engine's 2 s)
    return scenario, prepared, evicted


def evictions(data: dict, actions: NodeActions, evicted: list) -> dict:
    """What the node actions did and where each evicted pod went (None: still pending)."""
    placed = {s["pod"]: s["node"] for s in data["steps"]}
    moves = [{"pod": p.name, "from": p.raw.get("spec", {}).get("nodeName") or "", "to": placed.get(p.name)}
             for p in evicted]
    return {**actions.to_dict(), "evicted": moves, "allPlaced": all(m["to"] is not None for m in moves)}


# --------------------------------------------------------------------------- plan

def load_templates(paths: list[str]):
    """Node manifests to copy: every object of the files must be a Node (its cost in a label)."""
    from kubefit.scheduler.plan import Template, template_cost

    templates: list[Template] = []
    for path in paths:
        for file in manifest_files(path):
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


@app.command()
def plan(
    files: FilesOption,
    node_template: Annotated[list[str], typer.Option(
        "--node-template", help="Node manifest(s) to add copies of; several: a cost each in the label "
        "kubefit.io/cost (default 1).")],
    max_nodes: Annotated[int | None, typer.Option(
        "--max-nodes", min=0, help="At most this many nodes of each template (default: one per queued pod).")] = None,
    output: OutputOption = OutputFormat.table,
    tie_break: Annotated[str, typer.Option("--tie-break", help="random (seeded) or first.")] = "random",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the random tie-break.")] = 0,
    recursive: RecursiveOption = False,
    cordon: CordonOption = None,
    drain: DrainOption = None,
    remove: RemoveOption = None,
) -> None:
    """The fewest nodes of the templates to add so every pending pod that can fit is scheduled (simulated)."""
    from kubefit.report.whatif import plan_table
    from kubefit.scheduler.plan import plan as run_plan

    if tie_break not in ("random", "first"):
        raise InputError(f"must be random or first, got {tie_break!r}", field="--tie-break")
    templates = load_templates(node_template)
    actions = node_actions(cordon, drain, remove)
    scenario, prepared, evicted = load_prepared(files, "plan", recursive, actions)
    result = run_plan(scenario, prepared.config, templates, max_nodes=max_nodes, tie_break=tie_break, seed=seed)
    data = result.to_dict()
    if actions:
        data["nodeActions"] = evictions(data["simulation"], actions, evicted)
    emit(data, output, lambda console: plan_table(console, data))
