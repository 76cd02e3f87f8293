"""What-if verbs and options: `plan` (nodes to add from templates), `consolidate` (nodes that can go) and
`--cordon/--drain/--remove NODE…`.

The work is `kubefit.verbs.plan`, `kubefit.verbs.consolidate` and the node actions of `kubefit.verbs.simulate`;
here: options and rendering."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from kubefit import verbs
from kubefit.cli import FilesOption, OutputFormat, OutputOption, RecursiveOption, app, keep, warn
from kubefit.errors import InputError
from kubefit.report.output import emit

CordonOption = Annotated[list[str] | None, typer.Option(
    "--cordon", help="Mark these nodes unschedulable first (their pods stay); names separated by spaces or commas.")]
DrainOption = Annotated[list[str] | None, typer.Option(
    "--drain", help="Cordon these nodes and evict their pods, their controllers queueing replacements (DaemonSet "
    "and mirror pods stay), as kubectl drain --ignore-daemonsets: refused for a node with a pod of no controller.")]
RemoveOption = Annotated[list[str] | None, typer.Option(
    "--remove", help="Delete these nodes; their controllers queue replacements of their pods (not of DaemonSet "
    "pods); pods of no controller are lost.")]


def node_names(values: list[str] | None) -> list[str]:
    """An option's node names: several per option, separated by spaces or commas."""
    return [n.strip() for v in values or [] for n in v.split(",") if n.strip()]


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

    result = verbs.plan(files, node_template, max_nodes=max_nodes, tie_break=tie_break, seed=seed,
                        cordon=node_names(cordon), drain=node_names(drain), remove=node_names(remove),
                        recursive=recursive, warn=warn)
    data = result.to_dict()
    emit(data, output, lambda console: plan_table(console, data))


class Order(StrEnum):
    utilization = "utilization"
    cost = "cost"


@app.command()
def consolidate(
    files: FilesOption,
    config: Annotated[str | None, typer.Option(
        "--config", help="Consolidate with this scheduler configuration file instead of the scenario's.")] = None,
    strategy: Annotated[str | None, typer.Option(
        "--strategy", help="The scenario's configuration with this scoring strategy: LeastAllocated, "
        "MostAllocated or RequestedToCapacityRatio.")] = None,
    order: Annotated[Order, typer.Option(
        "--order", help="Candidates: empty nodes first, then ascending utilization; cost: the dearest "
        "(label kubefit.io/cost) first.")] = Order.utilization,
    utilization_threshold: Annotated[float | None, typer.Option(
        "--utilization-threshold", min=0, max=1, help="Only nodes whose utilization (the larger of cpu and "
        "memory requests / allocatable) is below this are candidates (cluster-autoscaler's default: 0.5); "
        "default: every node.")] = None,
    max_nodes: Annotated[int | None, typer.Option("--max-nodes", min=0, help="Remove at most this many nodes.")] = None,
    force: Annotated[bool, typer.Option(
        "--force", help="Delete pods that declare no controller with their node (kubectl drain --force) "
        "instead of keeping the node.")] = False,
    skip_kube_system_check: Annotated[bool, typer.Option(
        "--skip-kube-system-check", help="Let kube-system pods without a PodDisruptionBudget move.")] = False,
    repack: Annotated[bool, typer.Option(
        "--repack", help="Also schedule every pod from scratch onto empty nodes and count the nodes used.")] = False,
    compare: Annotated[list[str] | None, typer.Option(
        "--compare", help="With --repack: also under this strategy or configuration file (several: "
        "separated by spaces or commas).")] = None,
    plot: Annotated[str | None, typer.Option(
        "--plot", help="Write per-node allocation before and after to this PNG.")] = None,
    output: OutputOption = OutputFormat.table,
    tie_break: Annotated[str, typer.Option("--tie-break", help="random (seeded) or first.")] = "random",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the random tie-break.")] = 0,
    recursive: RecursiveOption = False,
) -> None:
    """Which nodes can today's workload do without? Each removal is checked by the profile placing the moved pods."""
    from kubefit.cli.simulate import check_plot_path, progress_bars
    from kubefit.report.consolidate import consolidate_table, plot_consolidation

    if plot:
        check_plot_path(plot)
    specs = [s.strip() for spec in compare or [] for s in spec.split(",") if s.strip()]
    with progress_bars(files, minimum=50) as (loading, tick):
        progress = None if tick is None else (lambda done, total: tick("candidates tried", done, total))
        result = verbs.consolidate(files, config=config, strategy=strategy, order=order.value,
                                   utilization_threshold=utilization_threshold, max_nodes=max_nodes, force=force,
                                   skip_kube_system_check=skip_kube_system_check, repack=repack, compare=specs,
                                   tie_break=tie_break, seed=seed, recursive=recursive, progress=progress,
                                   loading=loading, warn=warn)
    data = result.to_dict()
    if plot:
        try:
            plot_consolidation(data, plot)
        except OSError as exc:
            raise InputError(f"cannot write the plot: {exc}", file=plot) from None
    emit(data, output, lambda console: consolidate_table(console, data))
    keep(data, result)
