"""Fleet verbs over Karmada objects: `estimate` (available replicas per cluster) and `schedule`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from kubefit.cli import FilesOption, OutputFormat, OutputOption, app, warn
from kubefit.multicluster.fleet import estimate_fleet, load_fleet, parse_gates, schedule_fleet
from kubefit.report.output import emit

if TYPE_CHECKING:
    from rich.console import Console

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
) -> None:
    """Available replicas per member cluster, as Karmada's general estimator computes them."""
    from rich.table import Table

    gates = parse_gates(feature_gates)
    result = estimate_fleet(load_fleet(files, warn), request, member or [], gates, explain=explain, warn=warn)
    estimates, exact, members = result.estimates, result.exact, bool(member)
    data = result.to_dict()

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


@app.command()
def schedule(
    files: FilesOption,
    feature_gates: GatesOption = None,
    score: Annotated[list[str] | None, typer.Option(
        "--score", help="NAME=N: the scheduler's score of a cluster (default 0).")] = None,
    output: OutputOption = OutputFormat.table,
) -> None:
    """Candidates and the replica assignment Karmada's scheduler gives the binding; exit 1 when it fails."""
    from rich.table import Table

    gates = parse_gates(feature_gates)
    scheduled = schedule_fleet(load_fleet(files, warn), score or [], gates, warn=warn)
    result = scheduled.result

    def table(console: Console) -> None:
        t = Table(title=f"candidates for {scheduled.binding_source}")
        for col in ("cluster", "available", "allocatable"):
            t.add_column(col, justify="left" if col == "cluster" else "right")
        for c in result["candidates"]:
            t.add_row(c["name"], str(c["availableReplicas"]), str(c["allocatableReplicas"]))
        console.print(t)
        if result["error"]:
            console.print(f"[red]scheduling failed:[/red] {result['error']}")
        else:
            a = Table(title="spec.clusters")
            a.add_column("cluster")
            a.add_column("replicas", justify="right")
            for c in result["clusters"]:
                a.add_row(c["name"], str(c["replicas"]))
            console.print(a)

    emit(result, output, table)
    if result["error"]:
        raise typer.Exit(1)
