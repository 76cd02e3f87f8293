"""`kubefit check`: assertions on the verbs' answers for CI, with the exit codes CI reads (0 all hold, 1 one
does not, 2 bad input) and its reports (JUnit XML, SARIF, TAP, GitHub Actions annotations, job summary and step
outputs, HTML).

The work is `kubefit.verbs.check`; here: options and where each output goes."""

from __future__ import annotations

import os
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from kubefit import verbs
from kubefit.cli import (
    GangsAsWorkloadsOption,
    RecursiveOption,
    ReportOption,
    SchedulerGatesOption,
    app,
    check_report_path,
    warn,
    write_report,
)
from kubefit.cli.requests import with_requests_options
from kubefit.errors import InputError
from kubefit.report.output import emit


class CheckOutput(str, Enum):  # noqa: UP042 - typer and emit() compare by value
    table = "table"
    json = "json"
    yaml = "yaml"
    junit = "junit"
    sarif = "sarif"
    github = "github"
    tap = "tap"


class FailOn(str, Enum):  # noqa: UP042 - typer compares by value
    error = "error"
    warning = "warning"


SUMMARY_FILE = "kubefit-check-summary.md"  # written beside the step's other files ($RUNNER_TEMP) for `outputs.summary`


def _writable(path: str | None, option: str) -> None:
    """An output file's folder exists (checked before any work)."""
    if path is not None and not Path(path).resolve().parent.is_dir():
        raise InputError(f"cannot write {option}: no such folder", file=path)


def _write(path: str, text: str, option: str) -> None:
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write {option}: {exc.strerror or exc}", file=path) from None


@app.command()
@with_requests_options
def check(
    files: Annotated[list[str] | None, typer.Option(
        "-f", "--filename", help="The candidate scenario: file(s) or folder(s), YAML, JSON or kind: List; '-' is "
        "stdin (kustomize build | kubefit check -f -); default: the expectation file's files.")] = None,
    baseline: Annotated[list[str] | None, typer.Option(
        "--baseline", help="The scenario before the change: files or folders, or a git ref (origin/main: the -f "
        "files as they are at that commit); what --max-pending baseline and --max-pod-moves compare with.")] = None,
    expect: Annotated[str | None, typer.Option(
        "--expect", help="A SchedulingExpectations file (apiVersion kubefit.io/v1alpha1) listing the assertions.")] = None,
    max_pending: Annotated[str | None, typer.Option(
        "--max-pending", help="simulate: at most N pods left pending, or 'baseline': no more than the baseline.")] = None,
    fully_placed: Annotated[list[str] | None, typer.Option(
        "--fully-placed", help="simulate: every pod of this workload (deployment/web, shop/deployment/web) or this "
        "pod bound.")] = None,
    max_nodes_added: Annotated[int | None, typer.Option(
        "--max-nodes-added", help="plan: at most N nodes of the --node-template(s) to add, and no pod that cannot "
        "fit on any count of them.")] = None,
    allow_cannot_fit: Annotated[bool, typer.Option(
        "--allow-cannot-fit", help="--max-nodes-added holds although pods fit on no count of the templates.")] = False,
    node_template: Annotated[list[str] | None, typer.Option(
        "--node-template", help="Node manifest(s) plan adds copies of (for --max-nodes-added): one per zone for "
        "workloads spread over zones.")] = None,
    max_nodes: Annotated[int | None, typer.Option(
        "--max-nodes", min=0, help="plan: at most this many nodes of each template (default: one per queued pod).")] = None,
    min_removable_nodes: Annotated[int | None, typer.Option(
        "--min-removable-nodes", help="consolidate: at least N nodes can go.")] = None,
    min_capacity: Annotated[list[str] | None, typer.Option(
        "--min-capacity", help="capacity: POD=N, at least N more copies of this pod or workload fit beside the "
        "scenario's pods (its pending pods placed first, as capacity --place-pending).")] = None,
    min_allocation: Annotated[list[str] | None, typer.Option(
        "--min-allocation", help="simulate: RESOURCE=PERCENT, the cluster's allocation of it at least that.")] = None,
    config_valid: Annotated[bool, typer.Option(
        "--config-valid", help="config validate: kube-scheduler accepts the scenario's configuration.")] = False,
    max_pod_moves: Annotated[int | None, typer.Option(
        "--max-pod-moves", help="simulate: at most N pods placed elsewhere than in the baseline (pods matched by "
        "name, else by workload and ordinal).")] = None,
    claim_zones: Annotated[bool, typer.Option(
        "--claim-zones", help="simulate: every pod using a claim bound to a zoned PersistentVolume runs in its "
        "zone.")] = False,
    strict: Annotated[bool, typer.Option(
        "--strict", help="Fail when kubefit tells a warning about the scenario (what it does not evaluate as the "
        "cluster would).")] = False,
    namespace: Annotated[str | None, typer.Option(
        "-n", "--namespace", help="The namespace of a workload or pod named without one (default: the one "
        "namespace that has it).")] = None,
    fail_on: Annotated[FailOn | None, typer.Option(
        "--fail-on", help="error: only assertions of severity error fail the check (default); warning: those of "
        "severity warning too.")] = None,
    gang_placed: Annotated[list[str] | None, typer.Option(
        "--gang-placed", help="simulate: this pod group (NAMESPACE/NAME) placed whole, every pod of it bound "
        "(GenericWorkload on).")] = None,
    kube_version: Annotated[str | None, typer.Option(
        "--kube-version", help="Judge every assertion on each of these versions: 1.34 … 1.37, several separated "
        "by commas, or all; default: the file's kubeVersions, else the verbs' default.")] = None,
    feature_gates: SchedulerGatesOption = None,
    recursive: RecursiveOption = False,
    output: Annotated[CheckOutput, typer.Option(
        "-o", "--output", help="table for people; json/yaml for programs; junit, sarif (code scanning), github "
        "(workflow commands), tap.")] = CheckOutput.table,
    junit: Annotated[str | None, typer.Option(
        "--junit", help="Also write the outcomes as JUnit XML (a test case per assertion) to FILE.")] = None,
    sarif: Annotated[str | None, typer.Option(
        "--sarif", help="Also write the findings as SARIF 2.1.0 (GitHub code scanning) to FILE.")] = None,
    report: ReportOption = None,
    gangs_as_workloads: GangsAsWorkloadsOption = False,
    workers: Annotated[int | None, typer.Option(
        "--workers", help="With a baseline: read and simulate it on this many local Dask worker processes while "
        "this process does the candidate (default: one after the other here).")] = None,
    dask_scheduler: Annotated[str | None, typer.Option(
        "--dask-scheduler", help="With a baseline: read and simulate it on the Dask cluster of this scheduler, "
        "tcp://HOST:PORT (its workers run this kubefit).")] = None,
    requests: Any = None,
) -> None:
    """Do the scheduling expectations hold? Each assertion reads one verb's answer; exit 0 when all hold, 1 when
    one does not (its evidence printed), 2 on bad input. In GitHub Actions (GITHUB_ACTIONS=true) each failure is
    also an annotation at the manifest line that causes it, a Markdown summary is appended to
    $GITHUB_STEP_SUMMARY, and the step's outputs to $GITHUB_OUTPUT."""
    from kubefit.checks.expectations import from_options
    from kubefit.report.check import check_table

    check_report_path(report)
    _writable(junit, "--junit")
    _writable(sarif, "--sarif")
    given = from_options(max_pending=max_pending, fully_placed=fully_placed or [], max_nodes_added=max_nodes_added,
                         min_removable_nodes=min_removable_nodes, min_capacity=min_capacity or [],
                         min_allocation=min_allocation or [], config_valid=config_valid, max_pod_moves=max_pod_moves,
                         claim_zones=claim_zones, allow_cannot_fit=allow_cannot_fit, strict=strict,
                         gangs_placed=gang_placed or [])
    result = verbs.check(files or [], expect, baseline=baseline or [], assertions=given, node_templates=node_template or [],
                         kube_versions=kube_version, feature_gates=feature_gates, recursive=recursive,
                         namespace=namespace, max_nodes=max_nodes, fail_on=fail_on.value if fail_on else None,
                         warn=warn, requests=requests, gangs_as_workloads=gangs_as_workloads, workers=workers,
                         dask_scheduler=dask_scheduler)
    data = result.to_dict()
    write_report(result, report, data)
    if junit is not None:
        from kubefit.report.junit import junit_xml

        _write(junit, junit_xml(result), "--junit")
    if sarif is not None:
        _write(sarif, _sarif_text(data), "--sarif")
    _render(result, data, output, check_table)
    github(data, sys.stdout if output == CheckOutput.table else sys.stderr, annotate=output != CheckOutput.github)
    if not result.passed:
        raise typer.Exit(1)


def _sarif_text(data: dict) -> str:
    import json

    from kubefit.report.sarif import sarif

    return json.dumps(sarif(data), indent=2, ensure_ascii=False) + "\n"


def _render(result, data: dict, output: CheckOutput, table) -> None:
    """The result on stdout in the `-o` format."""
    if output in (CheckOutput.table, CheckOutput.json, CheckOutput.yaml):
        from kubefit.cli import OutputFormat

        emit(data, OutputFormat(output.value), lambda console: table(console, data))
        return
    if output == CheckOutput.junit:
        from kubefit.report.junit import junit_xml

        text = junit_xml(result)
    elif output == CheckOutput.sarif:
        text = _sarif_text(data)
    elif output == CheckOutput.tap:
        from kubefit.report.tap import tap

        text = tap(data)
    else:
        from kubefit.report.github import annotations

        text = "".join(line + "\n" for line in annotations(data))
    sys.stdout.write(text)


def github(data: dict, stream, *, annotate: bool = True) -> None:
    """In a GitHub Actions step: the annotations (on `stream`: stdout beside the table, stderr beside a machine
    format that must stay whole; the runner reads both), the job summary and the step's outputs. A summary or
    outputs file that cannot be written is a warning: the verdict stays the exit code."""
    from kubefit.report.github import annotations, outputs, step_summary

    if annotate and os.environ.get("GITHUB_ACTIONS") == "true":
        for line in annotations(data):
            print(line, file=stream)
    text = None
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        text = step_summary(data)
        _append(summary, text, "$GITHUB_STEP_SUMMARY")
    out = os.environ.get("GITHUB_OUTPUT")
    if out:
        import tempfile

        text = text or step_summary(data)
        copy = Path(os.environ.get("RUNNER_TEMP") or tempfile.gettempdir()) / SUMMARY_FILE
        written = _append(str(copy), text, "the summary file", mode="w")
        _append(out, outputs(data, str(copy) if written else None), "$GITHUB_OUTPUT")


def _append(path: str, text: str, what: str, mode: str = "a") -> bool:
    try:
        with open(path, mode, encoding="utf-8") as out:
            out.write(text)
        return True
    except OSError as exc:
        warn(f"cannot write {what} ({path}): {exc.strerror or exc}; the check's verdict is unchanged")
        return False
