"""`kubefit tune`: the scheduler configuration that packs a workload best, searched on Dask workers.

The work is `kubefit.verbs.tune`; this module parses the options, draws the trials' progress, writes the
configuration file and renders the result."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
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
from kubefit.cli.simulate import SeedOption, TieBreak, TieBreakOption
from kubefit.cli.whatif import CordonOption, DrainOption, RemoveOption, node_names
from kubefit.errors import InputError
from kubefit.report.output import emit


@contextmanager
def _trials_progress() -> Iterator[Any]:
    """On a terminal, a bar of the trials done (the verb's `progress` callback); in a pipe, nothing."""
    if not sys.stderr.isatty():
        yield None
        return
    from kubefit.cli.progress import progress_display

    with progress_display() as bar:
        task = bar.add_task("trials", total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)


@app.command()
def tune(
    files: FilesOption,
    objective: Annotated[str, typer.Option(
        "--objective", help="What to minimise: pending (pods left unschedulable), nodes (nodes used, pending pods "
        "first), stranded (pending pods that pooled free capacity would hold), gpu-fragmentation (free GPUs "
        "where the workload's GPU pods do not fit, the FGD paper's measure).")] = "pending",
    trials: Annotated[int, typer.Option("--trials", help="Configurations to try, the baselines included.")] = 50,
    seed: SeedOption = 0,
    batch: Annotated[int, typer.Option("--batch", help="Trials asked of the sampler at a time and run in "
                                       "parallel; the answer depends on it and the seed, not on the workers.")] = 8,
    space: Annotated[str | None, typer.Option("--space", help="YAML search space (strategies, resources, shape, "
                                              "pluginWeights); default: all of them.")] = None,
    tie_break: TieBreakOption = TieBreak.random,
    repeats: Annotated[int | None, typer.Option("--repeats", help="Seeds per trial with --tie-break random "
                                                "(default 3): the value is their mean.")] = None,
    validate: Annotated[list[str] | None, typer.Option(
        "--validate", help="Hold-out workload file(s): the tuned configuration and the baselines re-scored "
        "there.")] = None,
    dask_scheduler: Annotated[str | None, typer.Option(
        "--dask-scheduler", help="tcp://HOST:PORT of a running Dask scheduler (its workers import kubefit); "
        "default: a local cluster.")] = None,
    workers: Annotated[int | None, typer.Option(
        "--workers", help="Local Dask worker processes (default: this machine's cores).")] = None,
    write_config: Annotated[str | None, typer.Option(
        "--write-config", help="Write the tuned configuration here, as v1 YAML ready to apply.")] = None,
    output: OutputOption = OutputFormat.table,
    recursive: RecursiveOption = False,
    cordon: CordonOption = None,
    drain: DrainOption = None,
    remove: RemoveOption = None,
    report: ReportOption = None,
    kube_version: KubeVersionOption = None,
    feature_gates: SchedulerGatesOption = None,
    gangs_as_workloads: GangsAsWorkloadsOption = False,
) -> None:
    """The scheduler configuration that packs this workload best: strategies, weights and shapes, each
    judged by exact simulation, on this machine or a Dask cluster."""
    from kubefit.report.tune import config_yaml, tune_table

    check_report_path(report)
    with _trials_progress() as progress:
        result = verbs.tune(files, objective, trials=trials, seed=seed, batch=batch, space=space,
                            tie_break=tie_break.value, repeats=repeats, validate=validate or [],
                            dask_scheduler=dask_scheduler, workers=workers, recursive=recursive,
                            progress=progress, warn=warn, kube_version=kube_version, feature_gates=feature_gates,
                            cordon=node_names(cordon), drain=node_names(drain), remove=node_names(remove),
                            gangs_as_workloads=gangs_as_workloads)
    data = result.to_dict()
    if write_config:
        try:
            with open(write_config, "w", encoding="utf-8") as fh:
                fh.write(config_yaml(data))
        except OSError as exc:
            raise InputError(f"cannot write the configuration: {exc.strerror or exc}", file=write_config) from None
    write_report(result, report, data)
    emit(data, output, lambda console: tune_table(console, data, write_config))
    keep(data, result)
