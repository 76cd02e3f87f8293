"""Verbs over one cluster: `score` (one pod, every node, why) and `demo` (the docs' worked example)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kubefit.cli import (
    AdmissionOption,
    FilesOption,
    GangsAsWorkloadsOption,
    KubeVersionOption,
    OutputFormat,
    OutputOption,
    RecursiveOption,
    SchedulerGatesOption,
    app,
    warn,
)
from kubefit.report.output import emit
from kubefit.report.scheduler import score_table

# The examples, shipped as package data: `src/kubefit/examples` links to the repository's examples/ (an
# editable install reads them there), a wheel holds a copy.
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@app.command()
def version(
    feature_gates: Annotated[bool, typer.Option(
        "--feature-gates", help="Also list kube-scheduler's feature gates with each version's default.")] = False,
) -> None:
    """Print kubefit's version and the versions of the systems it reproduces."""
    from importlib.metadata import version as pkg_version

    from kubefit.k8s.version import PATCHES, default_version, gate_table
    from kubefit.told import KARMADA_VERSION

    default = default_version()
    print(f"kubefit {pkg_version('kubefit')}")
    print("kube-scheduler (--kube-version): " + ", ".join(
        f"1.{minor} ({patch}{', default' if minor == default.minor else ''})" for minor, patch in PATCHES.items()))
    print(f"Karmada: {KARMADA_VERSION} (vendors Kubernetes v1.36)")
    if feature_gates:
        width = max(len(name) for name, _ in gate_table())
        print(f"\n{'feature gate':<{width}}  " + "  ".join(f"{f'1.{m}':<13}" for m in PATCHES).rstrip())
        for name, cells in gate_table():
            print(f"{name:<{width}}  " + "  ".join(f"{c:<13}" for c in cells).rstrip())


def run_score(files: list[str], pod: str | None, output: OutputFormat, explain: bool, detail: bool,
              scoring: str | None = None, recursive: bool = False, admission: bool = True,
              kube_version: str | None = None, feature_gates: str | None = None, at_turn: bool = False,
              gangs_as_workloads: bool = False) -> int:
    from kubefit import verbs

    data = verbs.score(files, pod, scoring=scoring, detail=detail, explain=explain, warn=warn, recursive=recursive,
                       admission=admission, kube_version=kube_version, feature_gates=feature_gates, at_turn=at_turn,
                       gangs_as_workloads=gangs_as_workloads)
    emit(data, output, lambda console: score_table(console, data, data.get("explain")))
    return 0


@app.command()
def score(
    files: FilesOption,
    pod: Annotated[str | None, typer.Option("--pod", help="Pending pod to score (name or namespace/name); default: the first in queue order.")] = None,
    output: OutputOption = OutputFormat.table,
    explain: Annotated[bool, typer.Option("--explain", help="Per node and resource: allocatable, requested, utilization, score, weight.")] = False,
    detail: Annotated[bool, typer.Option("--detail", help="Add the failing plugin, raw scores, per-plugin filter verdicts and PreFilter node sets.")] = False,
    scoring: Annotated[str | None, typer.Option("--scoring", help="v1.34 (0..100, today's kube-scheduler) or legacy (the v1.16 0..10 scale the old docs describe); default: legacy for a Policy file, v1.34 otherwise.")] = None,
    recursive: RecursiveOption = False,
    admission: AdmissionOption = True,
    kube_version: KubeVersionOption = None,
    feature_gates: SchedulerGatesOption = None,
    at_turn: Annotated[bool, typer.Option("--at-turn", help="Score the pod at its turn in simulate's queue: the "
                                          "pending pods queued before it scheduled first, as simulate does "
                                          "(random tie-break, seed 0).")] = False,
    gangs_as_workloads: GangsAsWorkloadsOption = False,
) -> None:
    """Where would this pod go, and why: every node's filter verdict, each plugin's score, the total."""
    run_score(files, pod, output, explain, detail, scoring, recursive, admission, kube_version, feature_gates,
              at_turn, gangs_as_workloads)


@app.command()
def demo(output: OutputOption = OutputFormat.table) -> None:
    """Score the "Resource Bin Packing" docs' worked example (bundled), explained resource by resource."""
    docs = EXAMPLES / "docs-bin-packing"
    run_score([str(docs / "cluster.yaml"), str(docs / "requested-to-capacity-ratio.yaml")], None, output, True, False)
