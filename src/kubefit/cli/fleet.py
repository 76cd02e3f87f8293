"""Fleet verbs over Karmada objects: `estimate` (available replicas per cluster) and `schedule`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from kubefit import verbs
from kubefit.cli import (
    FilesOption,
    OutputFormat,
    OutputOption,
    ReportOption,
    app,
    check_report_path,
    keep,
    warn,
    write_report,
)
from kubefit.report.output import emit

if TYPE_CHECKING:
    from rich.console import Console

    from kubefit.multicluster.fleet import FleetSchedule

RequestOption = Annotated[str | None, typer.Option(
    "--request", help="Per-replica request, e.g. cpu=3,memory=20Gi (overrides the binding's).")]
GatesOption = Annotated[str | None, typer.Option(
    "--feature-gates", help="Karmada feature gates, e.g. CustomizedClusterResourceModeling=false.")]


@app.command()
def estimate(
    files: FilesOption,
    request: RequestOption = None,
    feature_gates: GatesOption = None,
    member: Annotated[list[str] | None, typer.Option(
        "--member", help="NAME=FILE: a member's nodes and pods, for the exact node-level count.")] = None,
    explain: Annotated[bool, typer.Option("--explain", help="Show the arithmetic behind each number.")] = False,
    output: OutputOption = OutputFormat.table,
    report: ReportOption = None,
) -> None:
    """Available replicas per member cluster, as Karmada's general estimator computes them."""
    from rich.table import Table

    check_report_path(report)
    result = verbs.estimate(files, request=request, members=member or [], feature_gates=feature_gates,
                            explain=explain, warn=warn)
    estimates, exact, members = result.estimates, result.exact, bool(member)
    data = result.to_dict()
    write_report(result, report, data)

    def table(console: Console) -> None:
        t = Table(title="available replicas (Karmada general estimator)")
        for col in ("cluster", "path", "allowed pods", "Karmada", *(("exact", "error") if members else ())):
            t.add_column(col, justify="left" if col in ("cluster", "path") else "right")
        for e in estimates:
            row = [e.name, e.path, "" if e.allowed_pods is None else str(e.allowed_pods),
                   str(e.replicas) + (" (overflow)" if e.overflow else "")]
            if members:
                row += [str(exact.get(e.name, "")),
                        "" if e.name not in exact else f"{e.replicas - exact[e.name]:+d}"]
            t.add_row(*row)
        console.print(t)
        if explain:
            for e in estimates:
                console.print(f"[bold]{e.name}[/bold]")
                for step in e.steps:
                    console.print(f"  {step}")

    emit(data, output, table)
    keep(data, result)  # (a fleet of 43,000 clusters: 0.4 s to free at exit)


@app.command()
def schedule(
    files: FilesOption,
    feature_gates: GatesOption = None,
    score: Annotated[list[str] | None, typer.Option(
        "--score", help="NAME=N: a cluster's score, replacing the Score plugins (ClusterLocality, "
                   "ClusterAffinity); clusters not named score 0.")] = None,
    output: OutputOption = OutputFormat.table,
    report: ReportOption = None,
) -> None:
    """Candidates and the replica assignment Karmada's scheduler gives the binding; exit 1 when it fails."""
    check_report_path(report)
    scheduled = verbs.schedule(files, scores=score or [], feature_gates=feature_gates, warn=warn)
    data = scheduled.to_dict()
    write_report(scheduled, report, data)
    emit(data, output, lambda console: _schedule_table(console, scheduled))
    keep(data, scheduled)
    if scheduled.result["error"]:
        raise typer.Exit(1)


def _schedule_table(console: Console, scheduled: FleetSchedule) -> None:
    """Every cluster: the filter that rejected it (and why), or its estimate, score and replicas."""
    from rich.table import Table

    result = scheduled.result
    t = Table(title=f"clusters for {scheduled.binding_source}")
    for col in ("cluster", "filter", "score", "available", "allocatable", "replicas"):
        t.add_column(col, justify="left" if col in ("cluster", "filter") else "right")
    cands = {c["name"]: c for c in result["candidates"]}
    for c in scheduled.fleet.clusters:
        rej = result["filter"].get(c.name)
        cand = cands.get(c.name, {})
        t.add_row(c.name, f"{rej['plugin']}: {rej['reason']}" if rej else "fits",
                  str(result["scores"].get(c.name, "")), str(cand.get("availableReplicas", "")),
                  str(cand.get("allocatableReplicas", "")), str(result["replicas"][c.name]))
    console.print(t)
    for attempt in result.get("affinityAttempts") or []:
        console.print(f"clusterAffinities term {attempt['affinityName']!r}: "
                      f"{attempt['error'] or 'scheduled'}", markup=False)
    if result["error"]:
        console.print(f"[red]scheduling failed:[/red] {result['error']}")
