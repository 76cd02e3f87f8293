"""`kubefit check`: assertions on the verbs' answers for CI, with the exit codes CI reads (0 all hold, 1 one
does not, 2 bad input) and its reports (JUnit XML, GitHub Actions annotations and job summary, HTML).

The work is `kubefit.verbs.check`; here: options and where each output goes."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from kubefit import verbs
from kubefit.cli import (
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
from kubefit.errors import InputError
from kubefit.report.output import emit


def _writable(path: str | None, option: str) -> None:
    """An output file's folder exists (checked before any work)."""
    if path is not None and not Path(path).resolve().parent.is_dir():
        raise InputError(f"cannot write {option}: no such folder", file=path)


def _append(path: str, text: str, option: str) -> None:
    try:
        with open(path, "a", encoding="utf-8") as out:
            out.write(text)
    except OSError as exc:
        raise InputError(f"cannot write {option}: {exc.strerror or exc}", file=path) from None


@app.command()
def check(
    files: Annotated[list[str] | None, typer.Option(
        "-f", "--filename", help="The candidate scenario: file(s) or folder(s), YAML, JSON or kind: List (default: "
        "the expectation file's files).")] = None,
    baseline: Annotated[list[str] | None, typer.Option(
        "--baseline", help="The scenario before the change (files or folders): what --max-pending baseline and "
        "--max-pod-moves compare with.")] = None,
    expect: Annotated[str | None, typer.Option(
        "--expect", help="A SchedulingExpectations file (apiVersion kubefit.io/v1alpha1) listing the assertions.")] = None,
    max_pending: Annotated[str | None, typer.Option(
        "--max-pending", help="simulate: at most N pods left pending, or 'baseline': no more than the baseline.")] = None,
    fully_placed: Annotated[list[str] | None, typer.Option(
        "--fully-placed", help="simulate: every pod of this workload (deployment/web) or this pod bound.")] = None,
    max_nodes_added: Annotated[int | None, typer.Option(
        "--max-nodes-added", help="plan: at most N nodes of the --node-template(s) to add.")] = None,
    node_template: Annotated[list[str] | None, typer.Option(
        "--node-template", help="Node manifest(s) plan adds copies of (for --max-nodes-added).")] = None,
    min_removable_nodes: Annotated[int | None, typer.Option(
        "--min-removable-nodes", help="consolidate: at least N nodes can go.")] = None,
    min_capacity: Annotated[list[str] | None, typer.Option(
        "--min-capacity", help="capacity: POD=N, at least N more copies of this pod or workload fit.")] = None,
    min_allocation: Annotated[list[str] | None, typer.Option(
        "--min-allocation", help="simulate: RESOURCE=PERCENT, the cluster's allocation of it at least that.")] = None,
    config_valid: Annotated[bool, typer.Option(
        "--config-valid", help="config validate: kube-scheduler accepts the scenario's configuration.")] = False,
    max_pod_moves: Annotated[int | None, typer.Option(
        "--max-pod-moves", help="simulate: at most N pods placed elsewhere than in the baseline.")] = None,
    claim_zones: Annotated[bool, typer.Option(
        "--claim-zones", help="simulate: every pod using a claim bound to a zoned PersistentVolume runs in its "
        "zone.")] = False,
    gang_placed: Annotated[list[str] | None, typer.Option(
        "--gang-placed", help="simulate: this pod group (NAMESPACE/NAME) placed whole, every pod of it bound "
        "(GenericWorkload on).")] = None,
    kube_version: Annotated[str | None, typer.Option(
        "--kube-version", help="Judge every assertion on each of these versions: 1.34 … 1.37, several separated "
        "by commas, or all; default: the file's kubeVersions, else the verbs' default.")] = None,
    feature_gates: SchedulerGatesOption = None,
    recursive: RecursiveOption = False,
    output: OutputOption = OutputFormat.table,
    junit: Annotated[str | None, typer.Option(
        "--junit", help="Also write the outcomes as JUnit XML (a test case per assertion) to FILE.")] = None,
    report: ReportOption = None,
) -> None:
    """Do the scheduling expectations hold? Each assertion reads one verb's answer; exit 0 when all hold, 1 when
    one does not (its evidence printed), 2 on bad input. In GitHub Actions (GITHUB_ACTIONS=true) each failure is
    also an ::error annotation, and a Markdown summary is appended to $GITHUB_STEP_SUMMARY."""
    from kubefit.checks.expectations import from_options
    from kubefit.report.check import check_table

    check_report_path(report)
    _writable(junit, "--junit")
    given = from_options(max_pending=max_pending, fully_placed=fully_placed or [], max_nodes_added=max_nodes_added,
                         min_removable_nodes=min_removable_nodes, min_capacity=min_capacity or [],
                         min_allocation=min_allocation or [], config_valid=config_valid, max_pod_moves=max_pod_moves,
                         claim_zones=claim_zones, gangs_placed=gang_placed or [])
    result = verbs.check(files or [], expect, baseline=baseline or [], assertions=given, node_templates=node_template or [],
                         kube_versions=kube_version, feature_gates=feature_gates, recursive=recursive, warn=warn)
    data = result.to_dict()
    write_report(result, report, data)
    if junit is not None:
        from kubefit.report.junit import junit_xml

        try:
            Path(junit).write_text(junit_xml(result), encoding="utf-8")
        except OSError as exc:
            raise InputError(f"cannot write --junit: {exc.strerror or exc}", file=junit) from None
    emit(data, output, lambda console: check_table(console, data))
    github(data, sys.stdout if output == OutputFormat.table else sys.stderr)
    if not result.passed:
        raise typer.Exit(1)


def github(data: dict, stream) -> None:
    """In a GitHub Actions step: the annotations (on `stream`: stdout beside the table, stderr beside -o json so
    that the JSON stays whole; the runner reads both) and the job summary."""
    from kubefit.report.github import annotations, step_summary

    if os.environ.get("GITHUB_ACTIONS") == "true":
        for line in annotations(data):
            print(line, file=stream)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        _append(summary, step_summary(data), "$GITHUB_STEP_SUMMARY")
