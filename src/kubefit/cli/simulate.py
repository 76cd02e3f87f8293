"""Verbs over a whole workload: `simulate` (every pending pod, optionally under several configurations,
in time, or after a what-if on the nodes) and `capacity` (how many more copies of one pod fit).

The work is `kubefit.verbs`'; this module parses the options, draws progress and renders the results."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from kubefit import verbs
from kubefit.cli import (
    AdmissionOption,
    FilesOption,
    GangsAsWorkloadsOption,
    KubeVersionOption,
    OutputFormat,
    OutputOption,
    RecursiveOption,
    ReplaceVictimsOption,
    ReportOption,
    SchedulerGatesOption,
    app,
    check_report_path,
    keep,
    warn,
    write_report,
)
from kubefit.cli.progress import loading_progress, progress_bars
from kubefit.cli.requests import with_requests_options
from kubefit.cli.whatif import CordonOption, DrainOption, RemoveOption, node_names
from kubefit.errors import InputError
from kubefit.report.output import emit


class TieBreak(StrEnum):
    random = "random"
    first = "first"


TieBreakOption = Annotated[TieBreak, typer.Option("--tie-break", help="Among nodes sharing the best total: "
                                                  "random (seeded, like kube-scheduler) or the first in node order.")]
SeedOption = Annotated[int, typer.Option("--seed", help="Seed of the random tie-break.")]
SweepWorkersOption = Annotated[int | None, typer.Option(
    "--workers", help="Run the compared configurations (or versions) on this many local Dask worker processes, "
    "at most one per run; default: one after the other in this process.")]
SweepSchedulerOption = Annotated[str | None, typer.Option(
    "--dask-scheduler", help="Run the compared configurations (or versions) on the Dask cluster of this "
    "scheduler, tcp://HOST:PORT (its workers run this kubefit).")]


@app.command()
@with_requests_options
def simulate(
    files: FilesOption,
    output: OutputOption = OutputFormat.table,
    tie_break: TieBreakOption = TieBreak.random,
    seed: SeedOption = 0,
    compare: Annotated[list[str] | None, typer.Option(
        "--compare", help="Also run under this configuration: a strategy (LeastAllocated, MostAllocated, "
        "RequestedToCapacityRatio) or a scheduler config file; several: separated by spaces or commas, "
        "or the option repeated.")] = None,
    plot: Annotated[str | None, typer.Option("--plot", help="Write per-node allocation, sorted, to this PNG.")] = None,
    recursive: RecursiveOption = False,
    cordon: CordonOption = None,
    drain: DrainOption = None,
    remove: RemoveOption = None,
    timeline: Annotated[bool, typer.Option(
        "--timeline", help="Replay in time: pods arrive (kubefit.io/arrival), run for kubefit.io/duration and "
        "leave (a ReplicaSet's, StatefulSet's or DaemonSet's pod is deleted then and replaced by its controller; a "
        "workload's own kubefit.io/duration deletes it with its pods); waiting pods are retried when capacity "
        "frees. Metrics over time; --plot draws them.")] = False,
    report: ReportOption = None,
    admission: AdmissionOption = True,
    replace_victims: ReplaceVictimsOption = True,
    kube_version: KubeVersionOption = None,
    feature_gates: SchedulerGatesOption = None,
    compare_versions: Annotated[str | None, typer.Option(
        "--compare-versions", help="What an upgrade changes: run under each of these Kubernetes versions "
        "(e.g. 1.34,1.37) and show the metrics side by side and every pod placed differently.")] = None,
    compare_feature_gates: Annotated[str | None, typer.Option(
        "--compare-feature-gates", help="What turning feature gates on (or off) changes: run as given and with "
        "these gates too (e.g. GenericWorkload=true,GangScheduling=true), side by side, with every pod and pod "
        "group placed differently.")] = None,
    workers: SweepWorkersOption = None,
    dask_scheduler: SweepSchedulerOption = None,
    gangs_as_workloads: GangsAsWorkloadsOption = False,
    requests: Any = None,
) -> None:
    """Schedule every pending pod in queue order, binding each before the next: placement and packing."""
    from kubefit.report import simulation as tables
    from kubefit.report.whatif import actions_table

    if plot:
        check_plot_path(plot)
    check_report_path(report)
    specs = [s.strip() for spec in compare or [] for s in spec.split(",") if s.strip()]
    if timeline and specs:
        raise InputError("--timeline and --compare cannot be combined; run one timeline per configuration",
                         field="--timeline")
    if compare_versions is not None and (specs or timeline or kube_version):
        raise InputError("--compare-versions runs the scenario's configuration under each version: it cannot be "
                         "combined with --compare, --timeline or --kube-version", field="--compare-versions")
    if compare_feature_gates is not None and (specs or timeline or compare_versions is not None):
        raise InputError("--compare-feature-gates runs the scenario's configuration with and without the gates: it "
                         "cannot be combined with --compare, --timeline or --compare-versions",
                         field="--compare-feature-gates")
    if (workers is not None or dask_scheduler is not None) and not (specs or compare_versions is not None):
        raise InputError("Dask workers run the configurations of --compare or the versions of --compare-versions: "
                         "give one of them", field="--dask-scheduler" if dask_scheduler is not None else "--workers")
    sweep = dict(workers=workers, dask_scheduler=dask_scheduler)
    options: dict[str, Any] = dict(tie_break=tie_break.value, seed=seed, cordon=node_names(cordon),
                                   drain=node_names(drain), remove=node_names(remove), recursive=recursive, warn=warn,
                                   admission=admission, kube_version=kube_version, feature_gates=feature_gates,
                                   requests=requests)
    options["replace_victims"] = replace_victims
    options["gangs_as_workloads"] = gangs_as_workloads
    if timeline:
        return _timeline(files, options, output, plot, report)
    if compare_versions is not None:
        return _compare_versions(files, compare_versions.split(","), {**options, **sweep}, output, plot, report)
    if compare_feature_gates is not None:
        return _compare_gates(files, compare_feature_gates, options, output, plot, report)
    with progress_bars(files, 1 + len(specs)) as (loading, tick):
        if specs:
            # on workers, the runs come back as what -o json reads of them unless the report draws them whole
            results = verbs.compare(files, specs, progress=tick, loading=loading, summaries=report is None,
                                    **options, **sweep)
        else:
            results = [verbs.simulate(files, progress=tick, loading=loading, **options)]
    if specs:
        from kubefit.scheduler.compare import comparison_to_dict

        data = comparison_to_dict(results)
        _plot([(c["name"], c["final"]) for c in data["configurations"]], data["allocatable"], plot)
        write_report(results, report, data)
        emit(data, output, lambda console: tables.comparison_table(console, data))
        keep(data, results)
        return
    data = results[0].to_dict()
    _plot([(results[0].label, data["final"])], data["allocatable"], plot)
    write_report(results[0], report, data)
    emit(data, output, lambda console: (tables.simulation_table(console, data), actions_table(console, data)))
    keep(data, results)
    if "nodeActions" in data and not data["nodeActions"]["allPlaced"]:
        raise typer.Exit(1)  # the what-if was a check: some evicted pod fits nowhere


def _compare_versions(files: list[str], versions: list[str], options: dict[str, Any], output: OutputFormat,
                      plot: str | None, report: str | None) -> None:
    from kubefit.report.simulation import version_comparison_table
    from kubefit.scheduler.compare import version_comparison_to_dict

    options = {k: v for k, v in options.items() if k != "kube_version"}
    with progress_bars(files, len([v for v in versions if v.strip()])) as (loading, tick):
        results = verbs.compare_versions(files, versions, progress=tick, loading=loading, **options)
    data = version_comparison_to_dict(results)
    _plot([(c["name"], c["final"]) for c in data["configurations"]], data["allocatable"], plot)
    write_report(results, report, data)
    emit(data, output, lambda console: version_comparison_table(console, data))
    keep(data, results)


def _compare_gates(files: list[str], gates: str, options: dict[str, Any], output: OutputFormat, plot: str | None,
                   report: str | None) -> None:
    from kubefit.report.simulation import version_comparison_table
    from kubefit.scheduler.compare import version_comparison_to_dict

    with loading_progress(files) as loading:
        results = verbs.compare_feature_gates(files, gates, loading=loading, **options)
    data = version_comparison_to_dict(results)
    _plot([(c["name"], c["final"]) for c in data["configurations"]], data["allocatable"], plot)
    write_report(results, report, data)
    emit(data, output, lambda console: version_comparison_table(console, data))
    keep(data, results)


def check_plot_path(path: str) -> None:
    """`--plot out.txt` is a usage error before any work: the extension names one of matplotlib's formats."""
    from matplotlib.backend_bases import FigureCanvasBase

    formats = FigureCanvasBase.get_supported_filetypes()
    extension = Path(path).suffix.lstrip(".").lower()
    if extension and extension not in formats:  # none: matplotlib writes a PNG
        raise typer.BadParameter(f"{path!r} has extension {extension!r}; supported: {', '.join(sorted(formats))}",
                                 param_hint="'--plot'")


def _timeline(files: list[str], options: dict[str, Any], output: OutputFormat, plot: str | None,
              report: str | None) -> None:
    """`simulate --timeline`: the event-driven replay, as a table of metrics over time, JSON series, a plot."""
    from kubefit.report.timeline import plot_timeline, timeline_table

    with progress_bars(files) as (loading, tick):
        result = verbs.timeline(files, progress=tick, loading=loading, **options)
    data = result.to_dict()
    write_report(result, report, data)
    if plot:
        write_plot(plot_timeline, data, plot)
    emit(data, output, lambda console: timeline_table(console, data))
    keep(data)


def _plot(runs: list[tuple[str, dict]], allocatable: dict, path: str | None) -> None:
    """`--plot`: the per-node allocation of each (label, final) as a PNG (nothing without the option)."""
    if path is None:
        return
    from kubefit.report.plots import plot_allocation

    write_plot(lambda drawn, to: plot_allocation(drawn, allocatable, to), runs, path)


def write_plot(draw: Callable[[Any, str], None], data: Any, path: str) -> None:
    """`draw(data, path)`; a file that cannot be written is bad input (one `error:` line naming it)."""
    try:
        draw(data, path)
    except OSError as exc:
        raise InputError(f"cannot write the plot: {exc}", file=path) from None


@app.command()
@with_requests_options
def capacity(
    files: FilesOption,
    pod: Annotated[str | None, typer.Option("--pod", help="Pod to copy (name or namespace/name), or a workload "
                                            "(deployment/web, statefulset/db, shop/deployment/web: one more replica of its template), "
                                            "or a pod group (podgroup/NAME: one more copy of the whole group; a "
                                            "pod of a group is copied with its group); default: the first pending "
                                            "pod that is not a DaemonSet's.")] = None,
    max_copies: Annotated[int | None, typer.Option("--max", min=1, help="Stop after this many copies.")] = None,
    output: OutputOption = OutputFormat.table,
    tie_break: TieBreakOption = TieBreak.first,
    seed: SeedOption = 0,
    recursive: RecursiveOption = False,
    check: Annotated[bool, typer.Option("--check", help="Place the copies one by one through the profile even "
                                        "where the count is computed (same answer, slower).")] = False,
    report: ReportOption = None,
    admission: AdmissionOption = True,
    place_pending: Annotated[bool, typer.Option("--place-pending", help="Schedule the scenario's pending pods "
                                                "first, as simulate does (an install's own pods), and count the "
                                                "copies beside them; by default beside the bound pods only, as "
                                                "cluster-capacity.")] = False,
    node_template: Annotated[list[str] | None, typer.Option(
        "--node-template", help="Node manifest(s) (with their ResourceSlices, as for plan) to add before counting: "
        "--nodes copies of each.")] = None,
    nodes: Annotated[int, typer.Option("--nodes", min=1, help="Copies of each --node-template to add.")] = 1,
    kube_version: KubeVersionOption = None,
    feature_gates: SchedulerGatesOption = None,
    gangs_as_workloads: GangsAsWorkloadsOption = False,
    requests: Any = None,
) -> None:
    """How many more copies of a pod fit (cluster-capacity): computed, or placed one by one through the profile."""
    from kubefit.report.simulation import capacity_table

    check_report_path(report)
    with loading_progress(files) as loading:
        result = verbs.capacity(files, pod, limit=max_copies, tie_break=tie_break.value, seed=seed, replay=check,
                                recursive=recursive, loading=loading, warn=warn, admission=admission,
                                place_pending=place_pending, kube_version=kube_version, feature_gates=feature_gates,
                                node_templates=node_template or [], nodes=nodes, requests=requests,
                                gangs_as_workloads=gangs_as_workloads)
    data = result.to_dict()
    write_report(result, report, data)
    emit(data, output, lambda console: capacity_table(console, data))
    keep(data, result)
