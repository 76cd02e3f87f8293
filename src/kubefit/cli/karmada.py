"""Karmada cluster resource modeling verbs: `summary` and `models defaults|validate|classify`.

Adding a verb: write a function decorated with `@app.command()` (top level, like `summary`) or
`@models_app.command()` (under `kubefit models`), compute with a `kubefit.multicluster`
function (`multicluster/member.py` loads the files) and print with `emit(data, output, table)`. The fleet verbs
`estimate` and `schedule` live in `cli/fleet.py`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from kubefit.cli import FilesOption, OutputFormat, OutputOption, app, keep, warn
from kubefit.multicluster.fleet import parse_gates
from kubefit.multicluster.member import (
    classify_nodes,
    member_summary,
    validate_models,
)
from kubefit.multicluster.models import default_models, to_json
from kubefit.report.output import emit

if TYPE_CHECKING:
    from rich.console import Console

models_app = typer.Typer(help="Cluster resource models: defaults, validation, node classification.",
                         no_args_is_help=True)
app.add_typer(models_app, name="models")

GatesOption = Annotated[str | None, typer.Option(
    "--feature-gates", help="Karmada feature gates, e.g. CustomizedClusterResourceModeling=false.")]


# --------------------------------------------------------------------------- summary

@app.command()
def summary(files: FilesOption, output: OutputOption = OutputFormat.table,
            feature_gates: GatesOption = None) -> None:
    """A member's nodes and pods → resourceSummary and nodeSummary, as Karmada's status controller sets them."""
    from rich.table import Table

    result = member_summary(files, parse_gates(feature_gates), warn)

    def table(console: Console) -> None:
        rs = result["resourceSummary"]
        names = sorted({n for key in ("allocatable", "allocated", "allocating") for n in rs.get(key) or {}})
        t = Table(title="resourceSummary")
        t.add_column("resource")
        for key in ("allocatable", "allocated", "allocating"):
            t.add_column(key, justify="right")
        for name in names:
            t.add_row(name, *((rs.get(key) or {}).get(name, "-") for key in ("allocatable", "allocated", "allocating")))
        console.print(t)
        if rs.get("allocatableModelings"):
            _modelings_table(console, rs["allocatableModelings"])
        ns = result["nodeSummary"]
        console.print(f"nodeSummary: {ns['readyNum']} of {ns['totalNum']} nodes Ready")

    emit(result, output, table)


# --------------------------------------------------------------------------- models

def _models_table(console: Console, models: list[dict[str, Any]], title: str) -> None:
    from rich.table import Table

    t = Table(title=title)
    t.add_column("grade", justify="right")
    names = [r["name"] for r in models[0]["ranges"]] if models else []
    for name in names:
        t.add_column(f"{name} [min, max)")
    for m in models:
        t.add_row(str(m["grade"]), *(f"[{r['min']}, {r['max']})" for r in m["ranges"]))
    console.print(t)


def _modelings_table(console: Console, modelings: list[dict[str, int]]) -> None:
    from rich.table import Table

    t = Table(title="allocatableModelings")
    t.add_column("grade", justify="right")
    t.add_column("nodes", justify="right")
    for m in modelings:
        t.add_row(str(m["grade"]), str(m["count"]))
    console.print(t)


@models_app.command()
def defaults(output: OutputOption = OutputFormat.table) -> None:
    """The 9 default grades Karmada gives a Cluster without spec.resourceModels."""
    data = {"resourceModels": to_json(default_models())}
    emit(data, output, lambda c: _models_table(c, data["resourceModels"], "default resourceModels"))


@models_app.command()
def validate(files: FilesOption, output: OutputOption = OutputFormat.table) -> None:
    """Karmada's verdict on creating each Cluster (exit 1 when refused); warnings for silently repaired rules."""
    checked = validate_models(files, warn)
    verdicts, data = checked.verdicts, checked.to_dict()
    if output != OutputFormat.table:
        for _, v in verdicts:
            for w in v.warnings:
                warn(w)

    def table(console: Console) -> None:
        for c, v in verdicts:
            state = "[green]valid[/green]" if v.valid else "[red]invalid[/red]"
            console.print(f"Cluster {c.name or '(unnamed)'}: {state}")
            for e in v.errors:
                console.print(f"  error: {e}", markup=False)
            for w in v.warnings:
                console.print(f"  warning: {w}", markup=False)
            _models_table(console, to_json(v.resource_models), "resourceModels after PrepareForCreate")

    emit(data, output, table)
    keep(data, checked)
    if not data["valid"]:
        raise typer.Exit(1)


@models_app.command()
def classify(files: FilesOption, output: OutputOption = OutputFormat.table) -> None:
    """Classify a member's nodes into the Cluster's grades → status.resourceSummary.allocatableModelings."""
    modelings = classify_nodes(files, warn)
    data = {"allocatableModelings": modelings}
    emit(data, output, lambda c: _modelings_table(c, modelings or []))
