"""Karmada cluster resource modeling verbs: `summary` and `models defaults|validate|classify`.

Adding a verb: write a function decorated with `@app.command()` (top level, like `summary`) or
`@models_app.command()` (under `kubefit models`), load the files with `_load`, compute with a
`kubefit.multicluster` function and print with `emit(data, output, table)`. The fleet verbs
`estimate` and `schedule` live in `cli/fleet.py`.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from kubefit.api.karmada import Cluster, decode_cluster
from kubefit.cli import FilesOption, OutputFormat, OutputOption, app, warn, warn_ignored
from kubefit.errors import InputError
from kubefit.load import Scenario, load_scenario
from kubefit.multicluster.models import (
    allocatable_modelings,
    default_models,
    to_json,
    validate_cluster,
)
from kubefit.multicluster.summary import overflow_resources, resource_summary
from kubefit.report.output import emit
from kubefit.resourcenames import BASIC_RESOURCES, is_scalar

models_app = typer.Typer(help="Cluster resource models: defaults, validation, node classification.",
                         no_args_is_help=True)
app.add_typer(models_app, name="models")

GatesOption = Annotated[str | None, typer.Option(
    "--feature-gates", help="Karmada feature gates, e.g. CustomizedClusterResourceModeling=false.")]
KNOWN_GATES = ("CustomizedClusterResourceModeling", "SchedulingOvercommitProtection")
DEFAULT_GATES = {"CustomizedClusterResourceModeling": True, "SchedulingOvercommitProtection": False}


def parse_feature_gates(text: str | None) -> dict[str, bool]:
    """`Name=bool,…` → Karmada's gates (defaults filled in); unknown names and bad values are errors."""
    gates = dict(DEFAULT_GATES)
    for item in filter(None, (p.strip() for p in (text or "").split(","))):
        name, sep, value = item.partition("=")
        if not sep or value.strip().lower() not in ("true", "false"):
            raise InputError(f"expected Name=true|false, got {item!r}", field="--feature-gates")
        if name.strip() not in KNOWN_GATES:
            raise InputError(f"unknown feature gate {name.strip()!r} (known: {', '.join(KNOWN_GATES)})",
                             field="--feature-gates")
        gates[name.strip()] = value.strip().lower() == "true"
    return gates


def _load(files: list[str]) -> tuple[Scenario, list[Cluster]]:
    """The scenario of the files and its Karmada Clusters (decoded)."""
    scenario = load_scenario(files)
    clusters = [decode_cluster(d, require_name=False) for d in scenario.fleet_objects("Cluster")]
    return scenario, clusters


def _one_cluster(clusters: list[Cluster], files: list[str]) -> Cluster:
    if len(clusters) != 1:
        raise InputError(f"expected exactly one Cluster (cluster.karmada.io/v1alpha1), found {len(clusters)}",
                         file=", ".join(files))
    return clusters[0]


def _warn_overflow(scenario: Scenario) -> None:
    names = overflow_resources(scenario.nodes, scenario.pods)
    if names:
        warn(f"{', '.join(names)}: quantities of 2^62 base units (cpu: millicores) or more; Karmada's int64 "
             f"arithmetic wraps silently there, so its numbers for these resources are not meaningful")


def _warn_dropped_requests(scenario: Scenario) -> None:
    """Pod requests Karmada's accounting drops (not cpu/memory/ephemeral-storage/pods/scalar), and
    nodes without status.allocatable (Karmada does not fall back to capacity)."""
    for node in scenario.nodes:
        if (node.raw.get("status") or {}).get("allocatable") is None:
            warn(f"{node.source}: Node/{node.name}: no status.allocatable; Karmada counts nothing for this node")
    dropped: dict[str, int] = {}
    for pod in scenario.pods:
        spec = pod.raw.get("spec") or {}
        for c in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
            for name in ((c.get("resources") or {}).get("requests") or {}):
                if name not in BASIC_RESOURCES and not is_scalar(name):
                    dropped[name] = dropped.get(name, 0) + 1
    for name, n in sorted(dropped.items()):
        warn(f"request {name!r} ({n} container(s)) is not counted by Karmada's resourceSummary "
             f"(only cpu, memory, ephemeral-storage, pods and extended/hugepages resources are)")


# --------------------------------------------------------------------------- summary

@app.command()
def summary(files: FilesOption, output: OutputOption = OutputFormat.table,
            feature_gates: GatesOption = None) -> None:
    """A member's nodes and pods → resourceSummary and nodeSummary, as Karmada's status controller sets them."""
    gates = parse_feature_gates(feature_gates)
    scenario, clusters = _load(files)
    warn_ignored(scenario, "summary", keep=("Cluster",), members=True)
    if len(clusters) > 1:
        raise InputError(f"summary describes one member cluster; found {len(clusters)} Cluster objects",
                         file=", ".join(files))
    _warn_dropped_requests(scenario)
    _warn_overflow(scenario)
    result = resource_summary(scenario.nodes, scenario.pods, clusters[0] if clusters else None,
                              customized_modeling=gates["CustomizedClusterResourceModeling"])

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
    t = Table(title=title)
    t.add_column("grade", justify="right")
    names = [r["name"] for r in models[0]["ranges"]] if models else []
    for name in names:
        t.add_column(f"{name} [min, max)")
    for m in models:
        t.add_row(str(m["grade"]), *(f"[{r['min']}, {r['max']})" for r in m["ranges"]))
    console.print(t)


def _modelings_table(console: Console, modelings: list[dict[str, int]]) -> None:
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
    scenario, clusters = _load(files)
    warn_ignored(scenario, "models validate", keep=("Cluster",))
    if not clusters:
        raise InputError("no Cluster (cluster.karmada.io/v1alpha1) in the files", file=", ".join(files))
    verdicts = [(c, validate_cluster(c)) for c in clusters]
    if len(verdicts) == 1:
        data = verdicts[0][1].as_dict()
    else:
        data = {"valid": all(v.valid for _, v in verdicts),
                "errors": [f"{c.name}: {e}" for c, v in verdicts for e in v.errors],
                "warnings": [f"{c.name}: {w}" for c, v in verdicts for w in v.warnings],
                "clusters": {c.name: v.as_dict() for c, v in verdicts}}
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
    if not data["valid"]:
        raise typer.Exit(1)


@models_app.command()
def classify(files: FilesOption, output: OutputOption = OutputFormat.table) -> None:
    """Classify a member's nodes into the Cluster's grades → status.resourceSummary.allocatableModelings."""
    scenario, clusters = _load(files)
    warn_ignored(scenario, "models classify", keep=("Cluster",), members=True)
    cluster = _one_cluster(clusters, files)
    if not cluster.resource_models:
        warn(f"Cluster {cluster.name}: spec.resourceModels is empty, so Karmada reports no allocatableModelings "
             f"(the API server would have filled in the defaults: see `kubefit models defaults`)")
    _warn_dropped_requests(scenario)
    _warn_overflow(scenario)
    modelings = allocatable_modelings(cluster, scenario.nodes, scenario.pods)
    if modelings is None and cluster.resource_models:
        warn(f"Cluster {cluster.name}: the models' resource names disagree (InitSummary fails), so Karmada "
             f"reports no allocatableModelings")
    data = {"allocatableModelings": modelings}
    emit(data, output, lambda c: _modelings_table(c, modelings or []))
