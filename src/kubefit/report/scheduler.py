"""Render one scheduling cycle (`kubefit score`) as the golden JSON contract or a rich table."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubefit.report.output import new_table
from kubefit.scheduler.framework import CycleResult
from kubefit.scheduler.plugins.base import CODE_NAMES, SUCCESS, FilterOutcome
from kubefit.scheduler.postfilter import fit_error
from kubefit.scheduler.state import ClusterState

if TYPE_CHECKING:
    from rich.console import Console


def cycle_to_dict(result: CycleResult, state: ClusterState, *, detail: bool = False) -> dict[str, Any]:
    """The `kubefit score -o json` object: the fields of the golden `expect`, same meaning."""
    if result.pre_enqueue is not None:
        plugin, status = result.pre_enqueue
        return {"pod": result.pod.key, "preEnqueue": {"code": CODE_NAMES[status.code], "reasons": list(status.reasons),
                                                      "plugin": plugin}}
    names = state.node_names
    feasible = [names[int(i)] for i in result.feasible]
    filt: dict[str, dict[str, Any]] = {}
    for i, name in enumerate(names):
        entry: dict[str, Any] = {"code": result.code_name(i), "reasons": result.reasons.get(i, [])}
        if detail and result.failed_plugin[i]:
            entry["plugin"] = result.failed_plugin[i]
        filt[name] = entry
    out: dict[str, Any] = {
        "pod": result.pod.key,
        "filter": filt,
        "feasible": feasible,
        "score": {p: dict(zip(feasible, map(int, v), strict=True)) for p, v in result.scores.items()},
        "skippedScorePlugins": sorted(result.skipped_score_plugins),  # a set upstream; sorted
        "total": dict(zip(feasible, map(int, result.total), strict=True)) if len(result.feasible) else {},
        "best": [names[int(i)] for i in result.best],
    }
    if detail:
        out["scoreRaw"] = {p: dict(zip(feasible, map(int, v), strict=True)) for p, v in result.raw_scores.items()}
        out["skippedFilterPlugins"] = sorted(result.skipped_filter_plugins)  # a set upstream; sorted
        out["preFilterNodeNames"] = result.pre_filter_node_names
        out["filterByPlugin"] = {plugin: _plugin_statuses(plugin, o, names)
                                 for plugin, o in result.filter_by_plugin.items()}
        out["weights"] = dict(result.weights)
    if not len(result.feasible):
        out["message"] = fit_error(result, result.post_filter)
        if result.post_filter is not None:
            nominated = result.post_filter.nominated_node
            out["postFilter"] = {"nominatedNode": None if nominated is None else names[nominated],
                                 "victims": result.post_filter.victim_keys()}
    return out


def _plugin_statuses(plugin: str, outcome: FilterOutcome, names: list[str]) -> dict[str, dict[str, Any]]:
    """One Filter plugin alone on every node: code, reasons, and the plugin's name where it fails."""
    out: dict[str, dict[str, Any]] = {}
    for i, name in enumerate(names):
        code = int(outcome.codes[i])
        entry: dict[str, Any] = {"code": CODE_NAMES[code], "reasons": outcome.reasons(i)}
        if code != SUCCESS:
            entry["plugin"] = plugin
        out[name] = entry
    return out


def score_table(console: Console, data: dict[str, Any], explain: dict[str, Any] | None = None) -> None:
    """Per node: verdict, reasons, each plugin's score, the weighted total; best nodes marked."""
    if "preEnqueue" in data:
        gate = data["preEnqueue"]
        console.print(f"pod {data['pod']} gets no scheduling cycle: {gate['plugin']}: {', '.join(gate['reasons'])}")
        return
    plugins = list(data["score"])
    version = (data.get("inputs") or {}).get("kubeSchedulerVersion")
    table = new_table(f"kubefit score — pod {data['pod']}")
    table.add_column("node", style="bold")
    table.add_column("filter")
    for p in plugins:
        table.add_column(p, justify="right")
    table.add_column("total", justify="right", style="bold")
    best = set(data["best"])
    for node, verdict in data["filter"].items():
        if verdict["code"] == "Success":
            row = [f"{node} ★" if node in best else node, "[green]fits[/green]"]
            row += [str(data["score"][p].get(node, "")) for p in plugins]
            row.append(str(data["total"].get(node, "")))
        else:
            reasons = ", ".join(verdict["reasons"])
            row = [node, f"[red]{verdict['code']}[/red]: {reasons}"] + [""] * len(plugins) + [""]
        table.add_row(*row)
    console.print(table)
    if data["skippedScorePlugins"]:
        console.print(f"skipped score plugins (PreScore Skip): {', '.join(data['skippedScorePlugins'])}")
    if data.get("message"):
        console.print(f"[red]{data['message']}[/red]")
        post = data.get("postFilter") or {}
        if post.get("nominatedNode"):
            console.print(f"preemption: nominated node {post['nominatedNode']}, evicting {', '.join(post['victims'])}")
    elif data["best"]:
        console.print(f"best: {', '.join(data['best'])}" + (f" (kube-scheduler {version})" if version else ""))
        for node in data["best"]:  # DynamicResources: the devices Reserve would allocate there
            for claim, devices in (data.get("deviceAllocations") or {}).get(node, {}).items():
                console.print(f"  {node}: claim {claim}: {', '.join(devices)}")
    if explain:
        explain_tables(console, explain)


def explain_tables(console: Console, explain: dict[str, Any]) -> None:
    """The docs' worked example, computed: one table per feasible node and plugin."""
    for node, plugins in explain.items():
        for plugin, d in plugins.items():
            t = new_table(f"{node} · {plugin}")
            if plugin == "NodeResourcesFit":
                for col in ("resource", "allocatable", "requested before", "requested after", "utilization %",
                            "score", "weight"):
                    t.add_column(col, justify="right" if col != "resource" else "left")
                for r in d["resources"]:
                    if not r["allocatable"]:
                        t.add_row(r["resource"], "—", "", "", "", "dropped", str(r["weight"]))
                        continue
                    score = str(r["score"]) if r["counted"] else f"{r['score']} (not counted)"
                    t.add_row(r["resource"], str(r["allocatable"]), str(r["requestedBefore"]), str(r["requested"]),
                              str(r["utilization"]), score, str(r["weight"]))
                console.print(t)
                console.print(f"  weighted average: {d['formula']}")
            elif "scoreWithoutPod" in d:  # v1.36+: the balance with and without the pod
                for col in ("resource", "allocatable", "requested before", "fraction before", "requested after",
                            "fraction after"):
                    t.add_column(col)
                for r in d["resources"]:
                    t.add_row(r["resource"], str(r["allocatable"]), str(r["requestedBefore"]),
                              f"{r['fractionBefore']:.4f}", str(r["requested"]), f"{r['fraction']:.4f}")
                console.print(t)
                console.print(f"  score: {d['formula']}")
            else:
                for col in ("resource", "allocatable", "requested after", "fraction"):
                    t.add_column(col)
                for r in d["resources"]:
                    t.add_row(r["resource"], str(r["allocatable"]), str(r["requested"]), f"{r['fraction']:.4f}")
                console.print(t)
                console.print(f"  score: {d['formula']} = {d['score']}")
