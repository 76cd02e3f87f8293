"""The report's page of `kubefit rightsize`: nodes before and after, per workload bars of the request against the
usage (p50, p95, max) and the new request, the changes, resizes, moves, pods now pending, allocation per pool
and the risk — drawn from the result's `-o json` dict, nothing computed."""

from __future__ import annotations

from typing import Any

from kubefit.planning.rightsize import Rightsizing
from kubefit.report import svg
from kubefit.report.html import (
    Headline,
    Markup,
    Page,
    figure,
    paragraph,
    pointer,
    renders,
    section,
    table,
    value,
)
from kubefit.report.rightsize import bytes_text, cpu_text, percent

ROWS = 500  # rows listed per table; -o json has them all
CHARTS = 60  # workload containers charted


@renders(Rightsizing)
def rightsize_page(data: dict[str, Any]) -> Page:
    """`kubefit rightsize`."""
    today, after = data["today"]["allocation"]["cluster"], data["after"]["allocation"]["cluster"]
    headline = [Headline("nodes today", data["nodesBefore"], pointer("nodesBefore")),
                Headline("nodes right-sized", data["nodesAfter"], pointer("nodesAfter"), tone="good")]
    if "nodesFreedByRightsizing" in data:
        headline.append(Headline("freed by right-sizing", data["nodesFreedByRightsizing"],
                                 pointer("nodesFreedByRightsizing"), tone="good"))
    for r in ("cpu", "memory"):
        headline += [Headline(f"{r} requested, today", today[r]["percent"],
                              pointer("today", "allocation", "cluster", r, "percent"), " %"),
                     Headline(f"{r} requested, right-sized", after[r]["percent"],
                              pointer("after", "allocation", "cluster", r, "percent"), " %")]
    headline.append(Headline("pods recreated", data["podsRecreated"], pointer("podsRecreated")))
    headline.append(Headline("pods now pending", data["pendingPods"], pointer("pendingPods"),
                             tone="bad" if data["pending"] else ""))
    sections = [_nodes(data), _usage_bars(data), _changes(data), _resizes(data), _moves(data), _pending(data),
                _pools(data), _risk(data)]
    return Page("rightsize", "If the requests followed real usage, how many nodes would go, which pods would move or "
                "stay pending, and what would we risk?", headline, [s for s in sections if s])


def _nodes(data: dict[str, Any]) -> Markup:
    """Node count before and after (and today's own consolidation), as bars."""
    series = [("nodes", [data["nodesBefore"], data["nodesAfter"]])]
    labels = ["today", "right-sized, consolidated"]
    if "baseline" in data:
        labels.insert(1, "today, consolidated")
        series = [("nodes", [data["nodesBefore"], data["baseline"]["nodesAfter"], data["nodesAfter"]])]
    c = data.get("consolidation")
    note = ("The right-sized cluster consolidated as `kubefit consolidate` does (each removal placed by the "
            "scheduler, the answer checked by simulate --remove)." if c else "Not consolidated (--no-consolidate).")
    parts = [figure(svg.bars(labels, series, label="nodes"))]
    if c:
        parts.append(paragraph("Removable: ", ", ".join(c["removable"]) or "none", f"; {len(c['moves'])} pod(s) move; "
                               f"no consolidation keeps fewer than {c['lowerBound']} nodes."))
    return section("Nodes", *parts, anchor="nodes", note=note)


def _usage_bars(data: dict[str, Any]) -> Markup:
    """Per workload container, cpu (millicores) and memory (MiB): today's request, the usage p50 / p95 / max over
    the window, the new request."""
    rows = [r for r in data["risk"] if (r["cpu"].get("usage") or r["memory"].get("usage"))][:CHARTS]
    if not rows:
        return Markup("")
    names = [f"{r['workload']} {r['container']}" for r in rows]
    charts = []
    for resource, scale, unit in (("cpu", 1000, "millicores"), ("memory", 1 / (1 << 20), "MiB")):
        def amount(v: float | None, scale: float = scale) -> int | None:
            return None if v is None else round(v * scale)
        series = [("request today", [amount(r[resource]["requestBefore"]) for r in rows])]
        for stat in ("p50", "p95", "max"):
            series.append((f"usage {stat}", [amount((r[resource].get("usage") or {}).get(stat)) for r in rows]))
        series.append(("new request", [amount(r[resource]["requestAfter"]) for r in rows]))
        charts.append(figure(svg.bars(names, series, label=f"{resource}, {unit}"), f"{resource} ({unit})"))
    return section("Requests against usage", *charts, anchor="usage",
                   note="Per workload container: the request today, the usage over the window (every pod's samples "
                        "together) and the new request.")


def _changes(data: dict[str, Any]) -> Markup:
    rows = []
    for i, ch in enumerate(data["changes"][:ROWS]):
        for c in ch["containers"]:
            req, lim = c["requests"], c["limits"]
            rows.append((f"{ch['namespace']}/{ch['kind']}/{ch['name']}", c["container"], ch["updateMode"],
                         *(f"{req['before'].get(r, '-')} → {req['after'].get(r, '-')}" for r in ("cpu", "memory")),
                         *(f"{lim['before'].get(r, '-')} → {lim['after'].get(r, '-')}" for r in ("cpu", "memory")),
                         value(ch["pods"], pointer("changes", i, "pods")), ", ".join(c.get("capped", []))))
    if not rows:
        return section("Requests rewritten", paragraph("None."), anchor="changes")
    return section("Requests rewritten", table(("workload", "container", "mode", "cpu request", "memory request",
                                                "cpu limit", "memory limit", "pods", "capped"), rows, numeric=(7,)),
                   anchor="changes", note="Per workload and container, as the VPA admission controller (or the usage "
                   "strategy) writes them; how running pods get them is the update mode.")


def _resizes(data: dict[str, Any]) -> Markup:
    if not data["resizes"]:
        return Markup("")
    rows = [(r["pod"], r["node"], r["decision"], r["recreatedAs"] or ("resized in place" if r["decision"] == "InPlace"
                                                                      else "left as it is"), r["message"])
            for r in data["resizes"][:ROWS]]
    return section("In-place resizes", table(("pod", "node", "kubelet", "then", "why"), rows), anchor="resizes",
                   note="InPlaceOrRecreate: the kubelet admits a resize on the pod's node (its allocatable less the "
                        "other pods' requests) or defers it / finds it infeasible; the VPA updater then recreates the "
                        "pod (a deferred one after 5 minutes).")


def _moves(data: dict[str, Any]) -> Markup:
    if not data["moves"]:
        return Markup("")
    rows = [(m["pod"], m["replacement"] or "none", m["from"], m["to"] or m.get("notCreated") or "pending")
            for m in data["moves"][:ROWS]]
    return section("Pods recreated", table(("pod", "replacement", "from", "to"), rows), anchor="moves",
                   note="Each running pod recreated with its new requests and scheduled anew; 'to' is where the "
                        "scheduler puts its replacement.")


def _pending(data: dict[str, Any]) -> Markup:
    if not data["pending"]:
        return Markup("")
    rows = [(p["pod"], p["ranOn"] or "", p["message"]) for p in data["pending"][:ROWS]]
    return section("Pods now pending", table(("pod", "ran on", "why"), rows), anchor="pending",
                   note="Pods today's cluster runs that fit nowhere with their new requests (a recommendation that "
                        "raises a request).")


def _pools(data: dict[str, Any]) -> Markup:
    today, after = data["today"]["allocation"]["pools"], data["after"]["allocation"]["pools"]
    rows = []
    for pool in sorted(set(today) | set(after))[:ROWS]:
        b, a = today.get(pool) or {}, after.get(pool) or {}
        rows.append((pool, b.get("nodes", 0), *(f"{(b.get(r) or {}).get('percent')} % → "
                                               f"{(a.get(r) or {}).get('percent')} %" for r in ("cpu", "memory"))))
    return section("Requested per node pool", table(("pool", "nodes", "cpu", "memory"), rows, numeric=(1,)),
                   anchor="pools", note="Requested / allocatable, today → right-sized (before consolidation).")


def _risk(data: dict[str, Any]) -> Markup:
    rows = []
    for r in data["risk"][:ROWS]:
        cpu, mem = r["cpu"], r["memory"]
        cu, mu = cpu.get("usage") or {}, mem.get("usage") or {}
        rows.append((r["workload"], r["container"], f"{cpu_text(cu.get('p95'))} / {cpu_text(cu.get('max'))}",
                     f"{percent(cpu.get('overRequestBefore'))} → {percent(cpu.get('overRequestAfter'))}",
                     f"{bytes_text(mu.get('p95'))} / {bytes_text(mu.get('max'))}",
                     f"{percent(mem.get('overRequestBefore'))} → {percent(mem.get('overRequestAfter'))}",
                     f"{percent(mem.get('overLimitBefore'))} → {percent(mem.get('overLimitAfter'))}",
                     r.get("note", "")))
    if not rows:
        return Markup("")
    return section("Risk", table(("workload", "container", "cpu p95 / max", "cpu > request", "memory p95 / max",
                                  "memory > request", "memory > limit (OOM)", "note"), rows), anchor="risk",
                   note="Over the usage window, the share of samples above the request (cpu: throttled when the node "
                        "is busy) and above the memory limit (the container would have been OOM-killed), today → "
                        "right-sized.")
