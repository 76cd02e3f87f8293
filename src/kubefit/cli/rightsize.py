"""`kubefit rightsize`: the cluster today and with requests from real usage, and the nodes it frees.

The work is `kubefit.verbs.rightsize`; here: options, progress, rendering."""

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
    keep,
    warn,
    write_report,
)
from kubefit.cli.consolidate import Order
from kubefit.cli.progress import progress_bars
from kubefit.cli.requests import with_requests_options
from kubefit.cli.simulate import SeedOption, TieBreak, TieBreakOption
from kubefit.errors import InputError
from kubefit.report.output import emit


@app.command()
@with_requests_options
def rightsize(
    files: FilesOption,
    consolidate: Annotated[bool, typer.Option(
        "--consolidate/--no-consolidate", help="Also find the nodes the right-sized cluster can do without "
        "(consolidate on it, verified by simulate --remove).")] = True,
    baseline: Annotated[bool, typer.Option(
        "--baseline", help="Also consolidate today's cluster: the nodes right-sizing frees beyond what "
        "consolidation alone frees.")] = False,
    pool_label: Annotated[str | None, typer.Option(
        "--pool-label", help="The node label naming a node's pool (default: karpenter.sh/nodepool, GKE's, EKS's, "
        "AKS's, then node.kubernetes.io/instance-type).")] = None,
    order: Annotated[Order, typer.Option("--order", help="Consolidation candidates' order, as consolidate's.")
                     ] = Order.utilization,
    utilization_threshold: Annotated[float | None, typer.Option(
        "--utilization-threshold", min=0, max=1, help="As consolidate's.")] = None,
    max_nodes: Annotated[int | None, typer.Option("--max-nodes", min=0, help="Remove at most this many nodes.")
                         ] = None,
    force: Annotated[bool, typer.Option("--force", help="As consolidate's.")] = False,
    skip_kube_system_check: Annotated[bool, typer.Option("--skip-kube-system-check", help="As consolidate's.")
                                      ] = False,
    report: ReportOption = None,
    output: OutputOption = OutputFormat.table,
    tie_break: TieBreakOption = TieBreak.random,
    seed: SeedOption = 0,
    recursive: RecursiveOption = False,
    kube_version: KubeVersionOption = None,
    feature_gates: SchedulerGatesOption = None,
    admission: AdmissionOption = True,
    gangs_as_workloads: GangsAsWorkloadsOption = False,
    requests: Any = None,
) -> None:
    """If these requests from real usage were applied, how many nodes go, which pods move or stay pending, and what
    do we risk? (--requests-from vpa or usage)"""
    from kubefit.report.rightsize import rightsize_table

    check_report_path(report)
    if requests is None:
        raise InputError("says where the new requests come from: --requests-from vpa or usage",
                         field="--requests-from")
    with progress_bars(files) as (loading, _tick):
        result = verbs.rightsize(files, requests, consolidate=consolidate, baseline=baseline, pool_label=pool_label,
                                 order=order.value, utilization_threshold=utilization_threshold,
                                 max_nodes=max_nodes, force=force, skip_kube_system_check=skip_kube_system_check,
                                 tie_break=tie_break.value, seed=seed, recursive=recursive, loading=loading,
                                 warn=warn, kube_version=kube_version, feature_gates=feature_gates,
                                 admission=admission, gangs_as_workloads=gangs_as_workloads)
    data = result.to_dict()
    write_report(result, report, data)
    emit(data, output, lambda console: rightsize_table(console, data))
    keep(data, result)
