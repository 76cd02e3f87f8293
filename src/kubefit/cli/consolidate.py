"""`kubefit consolidate`: which nodes today's workload can do without.

The work is `kubefit.verbs.consolidate`; here: options, progress over the candidates, rendering and the plot."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

import typer

from kubefit import verbs
from kubefit.cli import (
    FilesOption,
    GangsAsWorkloadsOption,
    KubeVersionOption,
    OutputFormat,
    OutputOption,
    RecursiveOption,
    ReportOption,
    SchedulerGatesOption,
    app,
    check_report_path,
    keep,
    warn,
    write_report,
)
from kubefit.cli.progress import progress_bars
from kubefit.cli.requests import with_requests_options
from kubefit.cli.simulate import (
    SeedOption,
    TieBreak,
    TieBreakOption,
    check_plot_path,
    write_plot,
)
from kubefit.report.output import emit

PROGRESS_MIN_CANDIDATES = 50  # fewer are tried before a bar is worth drawing


class Order(StrEnum):
    utilization = "utilization"
    cost = "cost"


@app.command()
@with_requests_options
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
    report: ReportOption = None,
    output: OutputOption = OutputFormat.table,
    tie_break: TieBreakOption = TieBreak.random,
    seed: SeedOption = 0,
    recursive: RecursiveOption = False,
    kube_version: KubeVersionOption = None,
    feature_gates: SchedulerGatesOption = None,
    workers: Annotated[int | None, typer.Option(
        "--workers", help="With --repack: repack under each configuration on this many local Dask worker "
        "processes; default: one after the other in this process.")] = None,
    dask_scheduler: Annotated[str | None, typer.Option(
        "--dask-scheduler", help="With --repack: repack under each configuration on the Dask cluster of this "
        "scheduler, tcp://HOST:PORT (its workers run this kubefit).")] = None,
    gangs_as_workloads: GangsAsWorkloadsOption = False,
    requests: Any = None,
) -> None:
    """Which nodes can today's workload do without? Each removal is checked by the profile placing the moved pods."""
    from kubefit.report.consolidate import consolidate_table, plot_consolidation

    if plot:
        check_plot_path(plot)
    check_report_path(report)
    specs = [s.strip() for spec in compare or [] for s in spec.split(",") if s.strip()]
    with progress_bars(files, minimum=PROGRESS_MIN_CANDIDATES) as (loading, tick):
        progress = None if tick is None else (lambda done, total: tick("candidates tried", done, total))
        result = verbs.consolidate(files, config=config, strategy=strategy, order=order.value,
                                   utilization_threshold=utilization_threshold, max_nodes=max_nodes, force=force,
                                   skip_kube_system_check=skip_kube_system_check, repack=repack, compare=specs,
                                   tie_break=tie_break.value, seed=seed, recursive=recursive, progress=progress,
                                   loading=loading, warn=warn, kube_version=kube_version,
                                   feature_gates=feature_gates, workers=workers, dask_scheduler=dask_scheduler,
                                   requests=requests, gangs_as_workloads=gangs_as_workloads)
    data = result.to_dict()
    if plot:
        write_plot(plot_consolidation, data, plot)
    write_report(result, report, data)
    emit(data, output, lambda console: consolidate_table(console, data))
    keep(data, result)
