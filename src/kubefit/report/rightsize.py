"""`rightsize`'s tables: the answer, the requests rewritten, resizes, moves, pods now pending, allocation per
pool, the risk (render only: every figure is in the result's `-o json` dict)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubefit.report.consolidate import ROWS, _shown
from kubefit.report.output import new_table

if TYPE_CHECKING:
    from rich.console import Console


def cpu_text(cores: float | None) -> str:
    """Cores as people read them: millicores below a core."""
    if cores is None:
        return ""
    return f"{round(cores * 1000)}m" if cores < 1 else f"{cores:.3g}"


def bytes_text(amount: float | None) -> str:
    """Bytes in binary units."""
    if amount is None:
        return ""
    for unit, power in (("Gi", 30), ("Mi", 20), ("Ki", 10)):
        if amount >= 1 << power:
            return f"{amount / (1 << power):.3g}{unit}"
    return f"{amount:.0f}"


def percent(share: float | None) -> str:
    return "-" if share is None else f"{100 * share:.1f}%"


def _arrow(before: dict, after: dict, resource: str) -> str:
    b, a = before.get(resource), after.get(resource)
    return f"{b or '-'} → {a or '-'}" if b != a else str(a or "-")


def headline(console: Console, data: dict[str, Any]) -> None:
    """Nodes before and after, allocation of the cluster today and right-sized, what was read."""
    today, after = data["today"]["allocation"]["cluster"], data["after"]["allocation"]["cluster"]
    line = f"nodes [bold]{data['nodesBefore']} → {data['nodesAfter']}[/bold]"
    if "nodesFreedByRightsizing" in data:
        line += (f" (consolidating today's requests: {data['baseline']['nodesAfter']}; right-sizing frees "
                 f"{data['nodesFreedByRightsizing']})")
    console.print(line)
    moved = ", ".join(f"{r} {today[r]['percent']}% → {after[r]['percent']}%" for r in ("cpu", "memory")
                      if today[r]["percent"] is not None)
    console.print(f"requested {moved} (today → right-sized, before consolidation)")
    usage = data["usage"]
    window = usage.get("window")
    console.print(f"{len(data['changes'])} workload(s) rewritten from {', '.join(usage['formats']) or 'no usage'}"
                  + (f" ({usage['samples']:,} samples, {window['start']} → {window['end']})" if window else "")
                  + f"; {len(data['moves'])} pod(s) recreated, {len(data['resizes'])} resize(s) judged by the kubelet,"
                  f" {len(data['pending'])} pod(s) now pending")


def rightsize_table(console: Console, data: dict[str, Any]) -> None:
    """The answer, then the tables."""
    headline(console, data)
    changes(console, data)
    resizes(console, data)
    moves(console, data)
    pending(console, data)
    pools(console, data)
    risk(console, data)
    consolidation(console, data)


def changes(console: Console, data: dict[str, Any]) -> None:
    rows = []
    for ch in data["changes"]:
        for c in ch["containers"]:
            req, lim = c["requests"], c["limits"]
            rows.append((f"{ch['namespace']}/{ch['kind']}/{ch['name']}", c["container"], ch["updateMode"],
                         _arrow(req["before"], req["after"], "cpu"), _arrow(req["before"], req["after"], "memory"),
                         _arrow(lim["before"], lim["after"], "cpu"), _arrow(lim["before"], lim["after"], "memory"),
                         str(ch["pods"]), ", ".join(c.get("capped", []))))
    if not rows:
        console.print("no request changes")
        return
    t = new_table("Requests rewritten")
    for col in ("workload", "container", "mode", "cpu request", "memory request", "cpu limit", "memory limit",
                "pods", "capped"):
        t.add_column(col, justify="right" if col == "pods" else "left")
    for row in _shown(rows, "containers", console):
        t.add_row(*row)
    console.print(t)


def resizes(console: Console, data: dict[str, Any]) -> None:
    if not data["resizes"]:
        return
    t = new_table("In-place resizes, as the kubelet admits them")
    for col in ("pod", "node", "kubelet", "then", "why"):
        t.add_column(col)
    for r in _shown(data["resizes"], "resizes", console):
        then = "resized in place" if r["decision"] == "InPlace" else (
            f"recreated as {r['recreatedAs']}" + (" (after 5 minutes)" if r["decision"] == "Deferred" else "")
            if r["recreatedAs"] else "left as it is")
        t.add_row(r["pod"], r["node"], r["decision"], then, r["message"])
    console.print(t)


def moves(console: Console, data: dict[str, Any]) -> None:
    if not data["moves"]:
        return
    t = new_table("Pods recreated with the new requests")
    for col in ("pod", "replacement", "from", "to"):
        t.add_column(col)
    for m in _shown(data["moves"], "recreated pods", console):
        t.add_row(m["pod"], m["replacement"] or "none", m["from"], m["to"] or m.get("notCreated") or "pending")
    console.print(t)


def pending(console: Console, data: dict[str, Any]) -> None:
    if not data["pending"]:
        return
    t = new_table("Pods the right-sized cluster leaves pending")
    for col in ("pod", "ran on", "why"):
        t.add_column(col)
    for p in _shown(data["pending"], "pending pods", console):
        t.add_row(p["pod"], p["ranOn"] or "", p["message"])
    console.print(t)


def pools(console: Console, data: dict[str, Any]) -> None:
    today, after = data["today"]["allocation"]["pools"], data["after"]["allocation"]["pools"]
    t = new_table("Requested per node pool, today → right-sized")
    for col in ("pool", "nodes", "cpu", "memory"):
        t.add_column(col, justify="left" if col == "pool" else "right")
    for pool in sorted(set(today) | set(after))[:ROWS]:
        b, a = today.get(pool) or {}, after.get(pool) or {}

        def cell(r: str, b: dict = b, a: dict = a) -> str:
            return f"{(b.get(r) or {}).get('percent')}% → {(a.get(r) or {}).get('percent')}%"
        t.add_row(pool, str(b.get("nodes", a.get("nodes", 0))), cell("cpu"), cell("memory"))
    console.print(t)


def risk(console: Console, data: dict[str, Any]) -> None:
    rows = [r for r in data["risk"] if (r["cpu"].get("usage") or r["memory"].get("usage"))]
    if not rows:
        return
    t = new_table("Risk over the usage window: samples above the request (and the memory limit)")
    for col in ("workload", "container", "cpu p95 / max", "cpu > request", "memory p95 / max", "memory > request",
                "memory > limit (OOM)"):
        t.add_column(col, justify="left" if col in ("workload", "container") else "right")
    for r in _shown(rows, "containers", console):
        cpu, mem = r["cpu"], r["memory"]
        cu, mu = cpu.get("usage") or {}, mem.get("usage") or {}
        t.add_row(r["workload"], r["container"], f"{cpu_text(cu.get('p95'))} / {cpu_text(cu.get('max'))}",
                  f"{percent(cpu.get('overRequestBefore'))} → {percent(cpu.get('overRequestAfter'))}",
                  f"{bytes_text(mu.get('p95'))} / {bytes_text(mu.get('max'))}",
                  f"{percent(mem.get('overRequestBefore'))} → {percent(mem.get('overRequestAfter'))}",
                  f"{percent(mem.get('overLimitBefore'))} → {percent(mem.get('overLimitAfter'))}")
    console.print(t)


def consolidation(console: Console, data: dict[str, Any]) -> None:
    c = data.get("consolidation")
    if not c:
        return
    runs = c["verification"]["simulations"]
    console.print(f"right-sized cluster: nodes {c['nodesBefore']} → {c['nodesAfter']} "
                  f"(removable: {', '.join(c['removable']) or 'none'}; {len(c['moves'])} pod(s) move; checked with "
                  f"simulate --remove, {runs} run{'s' if runs != 1 else ''}); no consolidation keeps fewer than "
                  f"{c['lowerBound']}")
