"""Tables for `simulate`, `simulate --compare` and `capacity` (render only: the numbers come computed)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubefit.k8s.quantity import format_quantity
from kubefit.report.output import new_table

if TYPE_CHECKING:
    from rich.console import Console

MAX_STEP_ROWS = 50  # longer workloads show placement and metrics, not every step


def evicted_text(step: dict) -> str:
    """`evicts <victims>` of a preempting step, each victim's replacement named (its controller's new pod)."""
    replaced = step.get("replacedBy") or {}
    return "evicts " + ", ".join(f"{v} (replaced by {replaced[v].split('/', 1)[1]})" if v in replaced else v
                                 for v in step["victims"])


def simulation_table(console: Console, data: dict) -> None:
    """Steps (short runs), placement per node, metrics."""
    steps = data["steps"]
    if len(steps) <= MAX_STEP_ROWS:
        t = new_table("Queue")
        for col in ("#", "pod", "node", "ties / message"):
            t.add_column(col)
        for i, s in enumerate(steps, 1):
            extra = s.get("message") or (", ".join(s["ties"]) + (f" (+{s['tieCount'] - len(s['ties'])})"
                                         if s.get("tieCount") else "") if s.get("ties") else "")
            node = s["node"] or ("[dim]not created[/dim]" if s.get("notCreated") else "[red]pending[/red]")
            if s.get("nominatedNode"):  # PostFilter preempted: the pod is retried next, on that node first
                node = f"[yellow]preempts on {s['nominatedNode']}[/yellow]"
                extra = evicted_text(s)
            elif s.get("nominatedNodeFirst"):
                extra = "nominated node"
            elif s.get("batchHint"):  # opportunistic batching (v1.35+): the previous pod's next node, unscored
                extra = "batch hint"
            if s.get("devices"):  # DynamicResources: what each claim got
                extra = "; ".join(f"{c}: {', '.join(d)}" for c, d in s["devices"].items()) + (f" ({extra})" if extra
                                                                                             else "")
            pod = s["pod"] + (f" [dim](replaces {s['replaces'].split('/', 1)[1]})[/dim]" if s.get("replaces") else "")
            if s.get("podGroup"):  # a pod group's cycle (gates GenericWorkload...): its pods bind together or not
                pod += f" [dim]({s['podGroup'].split('/', 1)[1]}" + (f", cycle {s['cycle']})[/dim]" if s.get("cycle")
                                                                      else ")[/dim]")
                if s["node"] is None and s.get("victims"):
                    extra = evicted_text(s) + (f"; {extra}" if extra else "")
            t.add_row(str(i), pod, node, extra)
        console.print(t)
    created = f", not created [bold]{data['notCreated']}[/bold]" if data.get("notCreated") else ""
    console.print(f"scheduled [bold]{data['scheduled']}[/bold], unschedulable [bold]{data['unschedulable']}[/bold]"
                  + created)
    for group in data.get("podGroups") or ():  # one line each: what became of the group and why
        console.print(group["why"], markup=False, highlight=False)
    final, placement = data["final"], data["placement"]
    t = new_table("Nodes")
    extended = list(dict.fromkeys(r for u in final.values() for r, v in u["requested"].items()
                                  if v and r not in ("cpu", "memory")))  # other resources, where any is in use
    devices = data.get("devices")  # DynamicResources: devices allocated / held by the node's pools
    for col in ("node", "placed", "pods", "cpu (m)", "memory", *extended, *(["devices"] if devices else [])):
        t.add_column(col, justify="right" if col != "node" else "left")
    for node, usage in final.items():
        requested = usage["requested"]
        held = devices.get(node) if devices else None
        t.add_row(node, str(placement.get(node, 0)), str(usage["pods"]), str(requested.get("cpu", 0)),
                  _bytes(requested.get("memory", 0)), *[str(requested.get(r, 0)) for r in extended],
                  *([f"{len(held['allocated'])}/{held['devices']}" if held else ""] if devices else []))
    if len(final) <= 200:
        console.print(t)
        if devices:
            devices_table(console, devices)
    _metrics_table(console, [("", data["metrics"])])


def device_holder(device: dict) -> str:
    """What holds an allocated device: the pods its claims are reserved for (else the claims), admin access
    marked."""
    holders = device.get("pods") or device.get("claims") or []
    return ", ".join(h.split("/", 1)[1] if h.startswith("default/") else h for h in holders)


def counters_text(counters: dict) -> str:
    """A pool's shared counters: per counter set, each counter's free amount of its capacity."""
    return "; ".join(f"{name}: " + ", ".join(f"{c} {v['free']} of {v['capacity']} free" for c, v in values.items())
                     for name, values in counters.items())


def shared_text(device: dict) -> str:
    """A device several claims share: its shares and the capacity they consume of its capacity."""
    capacity = device.get("capacity") or {}
    used = ", ".join(f"{c} {v} of {capacity.get(c, '?')}" for c, v in (device.get("consumedCapacity") or {}).items())
    return f"{device['name']}: {device.get('shares', 0)} share(s)" + (f", {used} consumed" if used else "")


def devices_table(console: Console, devices: dict) -> None:
    """Per node and pool (DynamicResources): devices allocated / in the pool, the free ones, who holds the others
    (`devices[node].pools` of -o json), and where the allocator has them, the pool's shared counters left and
    the shared devices' consumed capacity."""
    pools = [(node, pool) for node, use in devices.items() for pool in use.get("pools", ())]
    more = any(p.get("counters") or any(d.get("shared") for d in p["devices"]) for _n, p in pools)
    t = new_table("Devices")
    for col in ("node", "pool", "allocated", "free", "held by", *(["counters / shared"] if more else [])):
        t.add_column(col, justify="right" if col == "allocated" else "left")
    for node, pool in pools:
        listed = pool["devices"]
        free = [d["name"] for d in listed if not d["allocated"]]
        held = [f"{d['name']}: {device_holder(d)}" + (" (admin access)" if d.get("adminAccess") else "")
                for d in listed if d.get("claims")]
        extra = [counters_text(pool.get("counters") or {}), *(shared_text(d) for d in listed if d.get("shared"))]
        t.add_row(node, f"{pool['driver']}/{pool['pool']}", f"{pool['allocated']}/{len(listed)}",
                  ", ".join(free) or "–", "; ".join(held) or "–",
                  *(["; ".join(e for e in extra if e) or "–"] if more else []))
    console.print(t)


def comparison_table(console: Console, data: dict) -> None:
    """The metrics of every configuration side by side."""
    uncreated = any(c.get("notCreated") for c in data["configurations"])  # OrderedReady pods never created
    rows = [(c["name"], {**c["metrics"], "scheduled": c["scheduled"], "unschedulable": c["unschedulable"],
                         **({"not created": c.get("notCreated", 0)} if uncreated else {})})
            for c in data["configurations"]]
    _metrics_table(console, rows)


def version_comparison_table(console: Console, data: dict, shown: int = 20) -> None:
    """The versions' metrics side by side, then the pods placed differently (the first `shown` of them)."""
    comparison_table(console, data)
    differences = data["differences"]
    labels = [c["name"] for c in data["configurations"]]
    _group_differences_table(console, data.get("groupDifferences", ()), labels)
    if not differences:
        console.print("every pod lands on the same node under every version")
        return
    t = new_table(f"Pods placed differently ({len(differences)})")
    t.add_column("pod")
    for label in labels:
        t.add_column(label)
    for d in differences[:shown]:
        t.add_row(d["pod"], *[d["nodes"][label] or "pending" for label in labels])
    console.print(t)
    if len(differences) > shown:
        console.print(f"… and {len(differences) - shown} more (-o json lists them all)")


def _group_differences_table(console: Console, groups, labels: list[str]) -> None:
    """The pod groups placed differently: per run, pods bound of the group's, and how (one group, pod by pod)."""
    if not groups:
        return
    t = new_table(f"Pod groups placed differently ({len(groups)})")
    t.add_column("pod group")
    for label in labels:
        t.add_column(label)
    for g in groups:
        head = f"{g['podGroup']} (minCount {g['minCount']})" if g.get("minCount") is not None else g["podGroup"]
        t.add_row(head, *[f"{g['runs'][label]['bound']} of {g['pods']} bound, "
                          f"{'as a group' if g['runs'][label]['asGroup'] else 'pod by pod'}" for label in labels])
    console.print(t)


def _metrics_table(console: Console, runs: list[tuple[str, dict]]) -> None:
    t = new_table("Metrics")
    t.add_column("metric")
    for name, _ in runs:
        t.add_column(name or "value", justify="right")

    def row(label: str, get) -> None:
        t.add_row(label, *[_fmt(get(m)) for _, m in runs])
    for key in ("scheduled", "unschedulable", "not created"):
        if key in runs[0][1]:
            row(key, lambda m, k=key: m.get(k))
    if any(m.get("evicted") for _, m in runs):
        row("evicted by preemption", lambda m: m.get("evicted", 0))
    row("nodes used", lambda m: m["nodesUsed"])
    row("empty nodes", lambda m: m["emptyNodes"])
    resources = list(dict.fromkeys(r for _, m in runs for r in m["allocation"]))
    for r in resources:
        row(f"{r} allocated, cluster %", lambda m, r=r: m["allocation"].get(r))
    for r in resources:
        row(f"{r} allocated, used nodes %", lambda m, r=r: m["allocationOfUsedNodes"].get(r))
    reasons = list(dict.fromkeys(x for _, m in runs for x in m["pendingByReason"]))
    for reason in reasons:
        row(f"pending: {reason}", lambda m, x=reason: m["pendingByReason"].get(x, 0))
    console.print(t)
    for name, m in runs:
        if m["stranded"]:
            s = new_table(f"Stranded capacity {name}".rstrip())
            for col in ("pending shape (e.g.)", "requests", "pending", "copies that fit", "copies if pooled"):
                s.add_column(col)
            for item in m["stranded"]:
                s.add_row(item["pod"], ", ".join(f"{k}={format_quantity(k, v)}" for k, v in item["requests"].items()),
                          str(item["pending"]), str(item["copiesThatFit"]), _fmt(item["copiesIfPooled"]))
            console.print(s)


def capacity_table(console: Console, data: dict) -> None:
    """Copies per node, the count and the message that stopped it."""
    group = data.get("podGroup")
    if group is not None:  # copies of a whole pod group: per node, the pods of its copies
        policy = f"gang, minCount {group['minCount']}" if group.get("minCount") is not None else group["policy"]
        t = new_table(f"Copies of pod group {group['podGroup']} ({policy}, {group['pods']} pods)")
    else:
        t = new_table(f"Copies of {data['pod']}")
    t.add_column("node")
    t.add_column("copies" if group is None else "pods of the copies", justify="right")
    for node, n in data["perNode"].items():
        t.add_row(node, str(n))
    console.print(t)
    what = "" if group is None else " of the whole group"
    console.print(f"[bold]{data['count']}[/bold] more cop{'y' if data['count'] == 1 else 'ies'}{what} fit; "
                  f"stopped: {data['stopReason']}: {data['message']}")


def _fmt(value) -> str:
    return "-" if value is None else str(value)


def _bytes(n: int) -> str:
    for unit, size in (("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if abs(n) >= size:
            return f"{n / size:.1f}{unit}"
    return str(n)
