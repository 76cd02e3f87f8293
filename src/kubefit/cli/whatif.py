"""What-if verbs and options: `plan` (nodes to add from templates) and `--cordon/--drain/--remove NODE…`.

The work is `kubefit.verbs.plan` and the node actions of `kubefit.verbs.simulate`; here: options and rendering."""

from __future__ import annotations

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
    ReportOption,
    SchedulerGatesOption,
    app,
    check_report_path,
    warn,
    write_report,
)
from kubefit.cli.requests import with_requests_options
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
@with_requests_options
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
    report: ReportOption = None,
    admission: AdmissionOption = True,
    kube_version: KubeVersionOption = None,
    feature_gates: SchedulerGatesOption = None,
    gangs_as_workloads: GangsAsWorkloadsOption = False,
    requests: Any = None,
    workers: Annotated[int | None, typer.Option(
        "--workers", help="Run the plan's simulations on this many local Dask worker processes, side by side "
        "(the counts the search asks next started ahead; the same answer).")] = None,
    dask_scheduler: Annotated[str | None, typer.Option(
        "--dask-scheduler", help="Run the plan's simulations on the Dask cluster of this scheduler, "
        "tcp://HOST:PORT (its workers run this kubefit); one that fails leaves the plan to this process.")] = None,
) -> None:
    """The fewest nodes of the templates to add so every pending pod that can fit is scheduled (simulated)."""
    from kubefit.cli.progress import progress_bars
    from kubefit.report.whatif import plan_table

    check_report_path(report)
    with progress_bars(files) as (loading, progress):  # on a terminal: each simulation of the search said
        result = verbs.plan(files, node_template, max_nodes=max_nodes, tie_break=tie_break, seed=seed,
                            cordon=node_names(cordon), drain=node_names(drain), remove=node_names(remove),
                            recursive=recursive, warn=warn, admission=admission, kube_version=kube_version,
                            feature_gates=feature_gates, requests=requests, workers=workers,
                            dask_scheduler=dask_scheduler, gangs_as_workloads=gangs_as_workloads,
                            progress=progress, loading=loading)
    data = result.to_dict()
    write_report(result, report, data)
    emit(data, output, lambda console: plan_table(console, data))
