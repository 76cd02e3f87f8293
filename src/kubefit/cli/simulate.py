"""Verbs over a whole workload: `simulate` (every pending pod, optionally under several configurations)
and `capacity` (how many more copies of one pod fit)."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from kubefit.cli import FilesOption, OutputFormat, OutputOption, RecursiveOption, app, warn
from kubefit.cli.whatif import CordonOption, DrainOption, RemoveOption, evictions, load_prepared, node_actions
from kubefit.errors import InputError
from kubefit.load import Scenario
from kubefit.report.output import emit
from kubefit.scheduler.config import SchedulerConfiguration
from kubefit.scheduler.state import ClusterState
from kubefit.verbs import find_pod

PROGRESS_MIN_PODS = 2000  # shorter runs finish before a bar is worth drawing
LOADING_MIN_BYTES = 16 << 20  # smaller files load in well under a second


class TieBreak(StrEnum):
    random = "random"
    first = "first"


TieBreakOption = Annotated[TieBreak, typer.Option("--tie-break", help="Among nodes sharing the best total: "
                                                  "random (seeded, like kube-scheduler) or the first in node order.")]
SeedOption = Annotated[int, typer.Option("--seed", help="Seed of the random tie-break.")]


def _prepare(files: list[str], verb: str, recursive: bool = False) -> tuple[Scenario, SchedulerConfiguration,
                                                                          ClusterState, list[str]]:
    """Load the scenario and its configuration, compile nodes and bound pods; tell the user what to know
    (on stderr, and returned for the result's `warnings`)."""
    with _loading_progress(files) as tick:
        scenario, prepared, _ = load_prepared(files, verb, recursive, progress=tick)
    return scenario, prepared.config, prepared.state, list(prepared.notes)


@contextmanager
def _loading_progress(files: list[str]):
    """On a terminal, while large files (together LOADING_MIN_BYTES or more) load: a bar per file."""
    size = sum(os.path.getsize(f) for f in files if f != "-" and os.path.isfile(f))
    if not sys.stderr.isatty() or size < LOADING_MIN_BYTES:
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    with Progress(TextColumn("loading {task.description}"), BarColumn(), MofNCompleteColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        tasks: dict[str, int] = {}

        def update(path: str, done: int, total: int) -> None:
            if path not in tasks:
                tasks[path] = bar.add_task(path, total=total)
            bar.update(tasks[path], completed=done, total=total)
        yield update


@contextmanager
def _progress(total: int, runs: int = 1):
    """A rich progress bar on stderr when it is a terminal and the run is long; else a no-op callback."""
    if not sys.stderr.isatty() or total * runs < PROGRESS_MIN_PODS:
        yield lambda *_args: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        tasks: dict[str, int] = {}

        def update(*args) -> None:
            label, done = args if len(args) == 2 else ("scheduling", args[0])
            if label not in tasks:
                tasks[label] = bar.add_task(str(label), total=total)
            bar.update(tasks[label], completed=done)
        yield update


@app.command()
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
        "leave; waiting pods are retried when capacity frees. Metrics over time; --plot draws them.")] = False,
) -> None:
    """Schedule every pending pod in queue order, binding each before the next: placement and packing."""
    from kubefit.report import simulation as report
    from kubefit.report.whatif import actions_table
    from kubefit.scheduler.compare import candidates
    from kubefit.scheduler.compare import compare as run_compare
    from kubefit.scheduler.simulate import simulate as run

    if plot:
        _check_plot_path(plot)
    actions = node_actions(cordon, drain, remove)
    with _loading_progress(files) as tick:
        scenario, prepared, evicted = load_prepared(files, "simulate", recursive, actions, progress=tick)
    config, state, notes = prepared.config, prepared.state, list(prepared.notes)
    queue = scenario.pending_pods
    specs = [s.strip() for spec in compare or [] for s in spec.split(",") if s.strip()]
    if timeline:
        if specs:
            raise InputError("--timeline and --compare cannot be combined; run one timeline per configuration",
                             field="--timeline")
        _timeline(scenario, config, state, queue, output, tie_break.value, seed, plot, notes)
        return
    if not specs:
        with _progress(len(queue)) as tick:
            result = run(state, config, queue, tie_break=tie_break.value, seed=seed, progress=tick)
        result.label = "scenario"
        if plot:
            _plot([result], plot)
        data = result.to_dict()
        data["warnings"] = notes
        if actions:
            data["nodeActions"] = evictions(data, actions, evicted)
        emit(data, output, lambda console: (report.simulation_table(console, data), actions_table(console, data)))
        if actions and not data["nodeActions"]["allPlaced"]:
            raise typer.Exit(1)  # the what-if was a check: some evicted pod fits nowhere
        return
    cands = candidates(config, specs)
    for cand in cands[1:]:
        for note in cand.notes:
            warn(note)
    with _progress(len(queue), len(cands)) as tick:
        results = run_compare(scenario.nodes, scenario.pods, queue, cands, tie_break=tie_break.value, seed=seed,
                              progress=tick, objects=scenario.objects)
    if plot:
        _plot(results, plot)
    from kubefit.scheduler.compare import comparison_to_dict

    data = comparison_to_dict(results)
    data["warnings"] = notes + [n for cand in cands[1:] for n in cand.notes]
    emit(data, output, lambda console: report.comparison_table(console, data))


def _check_plot_path(path: str) -> None:
    """`--plot out.txt` is a usage error before any work: the extension names one of matplotlib's formats."""
    from matplotlib.backend_bases import FigureCanvasBase

    formats = FigureCanvasBase.get_supported_filetypes()
    extension = Path(path).suffix.lstrip(".").lower()
    if extension and extension not in formats:  # none: matplotlib writes a PNG
        raise typer.BadParameter(f"{path!r} has extension {extension!r}; supported: {', '.join(sorted(formats))}",
                                 param_hint="'--plot'")


def _timeline(scenario: Scenario, config: SchedulerConfiguration, state: ClusterState, queue, output,
              tie_break: str, seed: int, plot: str | None, notes: list[str]) -> None:
    """`simulate --timeline`: the event-driven replay, as a table of metrics over time, JSON series, a plot."""
    from kubefit.report.timeline import plot_timeline, timeline_table
    from kubefit.scheduler.timeline import timeline as run_timeline
    from kubefit.scheduler.timeline import timeline_warnings

    with _progress(len(queue)) as tick:
        result = run_timeline(state, config, queue, scenario.bound_pods, tie_break=tie_break, seed=seed,
                              progress=tick)
    data = result.to_dict()
    data["warnings"] = notes + timeline_warnings(config, queue, scenario.bound_pods)
    for note in data["warnings"][len(notes):]:
        warn(note)
    if plot:
        try:
            plot_timeline(data, plot)
        except OSError as exc:
            raise InputError(f"cannot write the plot: {exc}", file=plot) from None
    emit(data, output, lambda console: timeline_table(console, data))


def _plot(results, path: str) -> None:
    from kubefit.report.plots import plot_allocation

    try:
        plot_allocation(results, path)
    except OSError as exc:
        raise InputError(f"cannot write the plot: {exc}", file=path) from None


@app.command()
def capacity(
    files: FilesOption,
    pod: Annotated[str | None, typer.Option("--pod", help="Pod to copy (name or namespace/name); "
                                            "default: the first pending pod in queue order.")] = None,
    max_copies: Annotated[int | None, typer.Option("--max", min=1, help="Stop after this many copies.")] = None,
    output: OutputOption = OutputFormat.table,
    tie_break: TieBreakOption = TieBreak.first,
    seed: SeedOption = 0,
    recursive: RecursiveOption = False,
    check: Annotated[bool, typer.Option("--check", help="Place the copies one by one through the profile even "
                                        "where the count is computed (same answer, slower).")] = False,
) -> None:
    """How many more copies of a pod fit (cluster-capacity): computed, or placed one by one through the profile."""
    from kubefit.report import simulation as report
    from kubefit.scheduler.capacity import estimate_capacity

    scenario, config, state, notes = _prepare(files, "capacity", recursive)
    result = estimate_capacity(state, config, find_pod(scenario, pod), limit=max_copies, tie_break=tie_break.value,
                               seed=seed, replay=check)
    data = result.to_dict()
    data["warnings"] = notes
    emit(data, output, lambda console: report.capacity_table(console, data))
