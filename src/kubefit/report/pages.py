"""The report's page for each result type (`simulate`, `--compare`, `--timeline`, `capacity`, `plan`,
`consolidate`, `tune`, `estimate`, `schedule`): sections drawn from the result's `-o json` dict, nothing computed.

Each function takes that dict and returns a `Page`; `renders(Type)` registers it (see `kubefit.report.html`
for adding one). Long lists are cut for people (`QUEUE_ROWS`, `NAMES_SHOWN`) with the count said;
`-o json` has them whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubefit.k8s.quantity import format_quantity
from kubefit.multicluster.fleet import FleetEstimate, FleetSchedule
from kubefit.planning.consolidate import Consolidation
from kubefit.planning.plan import Plan
from kubefit.planning.tune import TuneResult
from kubefit.report import svg
from kubefit.report.allocation import NodeUse, drawn_resources, node_uses
from kubefit.report.html import (
    Headline,
    Markup,
    Page,
    code,
    details,
    esc,
    figure,
    paragraph,
    pointer,
    renders,
    section,
    table,
    value,
)
from kubefit.report.simulation import device_holder, evicted_text
from kubefit.report.whatif import PLACED_NAMED, added_without_pods
from kubefit.scheduler.capacity import CapacityResult
from kubefit.scheduler.compare import comparison_to_dict
from kubefit.scheduler.simulate import SimulationResult
from kubefit.scheduler.timeline import TimelineResult

BARS_MAX = 300  # up to this many nodes: a bar per node with its name; beyond, sorted profiles
QUEUE_ROWS = 500  # steps (pods) listed; the rest are counted
NAMES_SHOWN = 200  # pods named per group of pending pods
MESSAGES_SHOWN = 50  # groups of pending pods (one per distinct message), the largest first
TIES_SHOWN = 4


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _requests(requests: dict[str, int]) -> str:
    return ", ".join(f"{k}={format_quantity(k, v)}" for k, v in requests.items()) or "none"


def _pod(step: dict[str, Any]) -> str:
    return f"{step['namespace']}/{step['pod']}" if step.get("namespace") else step["pod"]


def _devices(claims: dict[str, list[str]]) -> str:
    """A step's DynamicResources allocation: each claim (its name in the pod) and the devices it got."""
    return "; ".join(f"{claim}: {', '.join(devices)}" for claim, devices in claims.items())


NOT_CREATED = Markup('<span class="not-created">not created</span>')


# --------------------------------------------------------------------------- sections shared by the pages

def allocation_section(runs: Sequence[tuple[str, dict[str, dict]]], allocatable: dict[str, dict[str, int]], *,
                       marked: frozenset[str] = frozenset(), mark: str = "the nodes the plan adds",
                       anchor: str = "allocation") -> Markup:
    """Per-node allocation per resource of each run: named bars up to BARS_MAX nodes, sorted profiles beyond
    (`marked` nodes drawn with a +, which `mark` explains)."""
    resources = drawn_resources(allocatable, [final for _, final in runs])
    if len(allocatable) <= BARS_MAX:
        figures = [figure(svg.allocation_bars(node_uses(final, allocatable), resources, marked=marked,
                                              label=f"{name} per-node allocation".strip()),
                          title=name if len(runs) > 1 else "") for name, final in runs]
        note = ("Requested / allocatable per node and resource, nodes fullest first (the fuller of cpu and "
                "memory); hover a bar for the amounts." + (f" + marks {mark}." if marked else ""))
    else:
        uses = [(name or "allocation", node_uses(final, allocatable)) for name, final in runs]
        figures = [figure(svg.sorted_profile(r, uses)) for r in resources]
        note = (f"{len(allocatable):,} nodes: per resource, every node's requested / allocatable sorted from the "
                "fullest to the emptiest (a curve that reaches 0 sooner leaves more nodes empty).")
    return section("Per-node allocation", Markup(f'<div class="figures">{"".join(figures)}</div>'),
                   anchor=anchor, note=note)


def metrics_table(runs: Sequence[tuple[str, dict[str, Any], str]]) -> Markup:
    """The packing metrics of each run side by side; `runs` are (name, metrics, JSON Pointer of metrics)."""
    rows: list[list[Any]] = []

    def row(label: str, *path: str, absent: Any = "–") -> None:
        cells: list[Any] = [label]
        for _, m, at in runs:
            v: Any = m
            for p in path:
                v = v.get(p) if isinstance(v, dict) else None
            cells.append(absent if v is None else value(v, at + pointer(*path)))
        rows.append(cells)
    row("nodes used", "nodesUsed")
    row("empty nodes", "emptyNodes")
    if any(m.get("evicted") for _, m, _ in runs):
        row("pods evicted by preemption", "evicted")
    resources = list(dict.fromkeys(r for _, m, _ in runs for r in m["allocation"]))
    for r in resources:
        row(f"{r} allocated, cluster %", "allocation", r)
    for r in resources:
        row(f"{r} allocated, used nodes %", "allocationOfUsedNodes", r)
    for reason in dict.fromkeys(x for _, m, _ in runs for x in m["pendingByReason"]):
        row(f"pending: {reason}", "pendingByReason", reason, absent=0)  # no pod pending for it
    names = [name or "value" for name, _, _ in runs]
    return table(("metric", *names), rows, numeric=range(1, len(runs) + 1))


def stranded_section(runs: Sequence[tuple[str, dict[str, Any]]]) -> Markup:
    """Per pending pod shape: pods pending, copies that still fit, copies the free capacity would hold pooled."""
    parts = []
    for name, m in runs:
        if m["stranded"]:
            rows = [(s["pod"], _requests(s["requests"]), s["pending"], s["copiesThatFit"], s["copiesIfPooled"])
                    for s in m["stranded"]]
            parts.append(Markup(f"<h3>{esc(name)}</h3>") if name and len(runs) > 1 else Markup(""))
            parts.append(table(("pending shape (e.g.)", "requests", "pending", "copies that fit",
                                "copies if pooled"), rows, numeric=(2, 3, 4)))
    if not parts:
        return Markup("")
    return section("Stranded capacity", *parts, anchor="stranded",
                   note="Free capacity that no pending pod can use because it is split over nodes: "
                        "'copies if pooled' is what it would hold on one node.")


def pending_section(data: dict[str, Any], at: str = "") -> Markup:
    """Pending pods: counts by reason, then the pods grouped by their FitError message (`at`: where the
    simulation's dict sits in the page's, as a JSON Pointer)."""
    m = data["metrics"]
    if not data["unschedulable"]:
        return Markup("")
    parts = [table(("reason", "pending pods"), [(r, value(n, at + pointer("metrics", "pendingByReason", r)))
                                                for r, n in m["pendingByReason"].items()], numeric=(1,))]
    groups: dict[str, list[str]] = {}
    for s in data["steps"]:
        if s["node"] is None and "nominatedNode" not in s and not s.get("notCreated"):
            groups.setdefault(s.get("message") or "", []).append(_pod(s))
    largest = sorted(groups.items(), key=lambda kv: -len(kv[1]))
    for message, pods in largest[:MESSAGES_SHOWN]:
        names = ", ".join(pods[:NAMES_SHOWN]) + (f" and {len(pods) - NAMES_SHOWN:,} more" if len(pods) > NAMES_SHOWN
                                                 else "")
        parts.append(details(f"{len(pods):,} pod{'s' if len(pods) != 1 else ''}: {message}",
                             paragraph(names, cls="names"), open_=len(groups) <= 3))
    if len(largest) > MESSAGES_SHOWN:
        rest = largest[MESSAGES_SHOWN:]
        parts.append(paragraph(f"… and {len(rest):,} other messages ({sum(len(p) for _, p in rest):,} pods); "
                               "-o json has every pod's message.", cls="note"))
    return section("Pending pods", *parts, anchor="pending",
                   note="By reason (a pod counts once under each reason of its message), then by message.")


def preemption_section(steps: Sequence[dict[str, Any]]) -> Markup:
    """Each PostFilter preemption: the pod, the node nominated, the pods evicted there."""
    rows = [(_pod(s), s["nominatedNode"], ", ".join(s["victims"]),
             ", ".join(f"{r} (for {v})" for v, r in (s.get("replacedBy") or {}).items()) or "none")
            for s in steps if "nominatedNode" in s]
    if not rows:
        return Markup("")
    return section("Preemptions", table(("preemptor", "nominated node", "evicted (victims)", "replaced by"), rows),
                   anchor="preemptions", note="DefaultPreemption in PostFilter; the preemptor is retried next. Each "
                   "victim's controller creates its replacement, queued as any new pod (none: no controller, or "
                   "--no-replace-victims).")


def not_created_section(pods: Sequence[dict[str, Any]]) -> Markup:
    """Pods their StatefulSet never created (podManagementPolicy OrderedReady: a pod before them stayed
    pending); not pending, as a cluster would not show them at all."""
    rows = [(_pod(p), p.get("message", "")) for p in pods]
    if not rows:
        return Markup("")
    return section("Pods not created", table(("pod", "why"), rows[:QUEUE_ROWS]), anchor="not-created",
                   note="OrderedReady: the controller creates a pod only once the one before it runs; these would "
                        "not exist in the cluster (they are not counted as pending).")


def devices_section(data: dict[str, Any], at: str = "") -> Markup:
    """DynamicResources: per node and driver, devices allocated / devices in the node's pools (bars up to
    BARS_MAX nodes, sorted profiles beyond), and the devices each node has allocated."""
    usage = data.get("devices")
    if not usage:
        return Markup("")
    drivers = sorted({d for u in usage.values() for d in u["drivers"]})
    uses = [NodeUse(node, {d: c["allocated"] for d, c in u["drivers"].items()},
                    {d: c["devices"] for d, c in u["drivers"].items()}) for node, u in usage.items()]
    if len(uses) <= BARS_MAX:
        charts = [figure(svg.allocation_bars(uses, drivers, label="per-node device allocation", taken="allocated"))]
    else:
        charts = [figure(svg.sorted_profile(d, [("devices", uses)])) for d in drivers]
    rows = []
    for node, u in list(usage.items())[:QUEUE_ROWS]:
        cells = [Markup(f'{value(c["allocated"], at + pointer("devices", node, "drivers", d, "allocated"))} / '
                        f'{value(c["devices"], at + pointer("devices", node, "drivers", d, "devices"))}')
                 if (c := u["drivers"].get(d)) else "–" for d in drivers]
        rows.append((node, *cells, ", ".join(u["allocated"]) or "none"))
    more = f" The first {QUEUE_ROWS:,} of {len(usage):,} nodes; -o json lists every one." if len(usage) > QUEUE_ROWS else ""
    listed = table(("node", *(f"{d} allocated / devices" for d in drivers), "allocated devices (driver/pool/device)"),
                   rows, numeric=range(1, 1 + len(drivers)))
    return section("Devices (Dynamic Resource Allocation)", Markup(f'<div class="figures">{"".join(charts)}</div>'),
                   listed, per_device_table(usage, at), anchor="devices",
                   note="Per node and driver: devices allocated to claims after the run / devices in the pools the "
                        "node reaches (ResourceSlices); hover a bar for the counts. Then each device: allocated or "
                        "free, who holds it, its capacity." + more)


def per_device_table(usage: dict[str, Any], at: str = "") -> Markup:
    """Each device of each node's pools (`devices[node].pools` of -o json): allocated or free, the pods (or
    claims) holding it, its capacity; the first QUEUE_ROWS devices."""
    rows: list[Sequence[Any]] = []
    for node, use in usage.items():
        for p, pool in enumerate(use.get("pools", ())):
            for d, device in enumerate(pool["devices"]):
                state = value(_yes(device["allocated"]), at + pointer("devices", node, "pools", p, "devices", d,
                                                                      "allocated"))
                held = device_holder(device) + (" (admin access)" if device.get("adminAccess") else "")
                rows.append((node, f"{pool['driver']}/{pool['pool']}/{device['name']}", state, held or "–",
                             device_capacity_text(device)))
    if not rows:
        return Markup("")
    more = len(rows) - QUEUE_ROWS
    shown = table(("node", "device (driver/pool/device)", "allocated", "held by", "capacity"), rows[:QUEUE_ROWS],
                  cls="device-table")
    counters = [(node, f"{pool['driver']}/{pool['pool']}", name, counter, v["consumed"], v["free"], v["capacity"])
                for node, use in usage.items() for pool in use.get("pools", ())
                for name, values in (pool.get("counters") or {}).items() for counter, v in values.items()]
    if counters:  # DRAPartitionableDevices: what the pool's shared counters have left (a MIG GPU's slices)
        shown = Markup(shown + table(("node", "pool", "counter set", "counter", "consumed", "free", "capacity"),
                                     counters[:QUEUE_ROWS], cls="counter-table"))
    return shown if more <= 0 else Markup(shown + paragraph(f"… and {more:,} more devices (-o json lists them all)"))


def device_capacity_text(device: dict[str, Any]) -> str:
    """A device's capacity, what a shared device's claims consume of it, and the counters it draws on."""
    parts = [", ".join(f"{k} {v}" for k, v in (device.get("capacity") or {}).items())]
    if device.get("shared"):
        used = ", ".join(f"{k} {v}" for k, v in (device.get("consumedCapacity") or {}).items())
        parts.append(f"shared: {device.get('shares', 0)} share(s)" + (f", {used} consumed" if used else ""))
    for name, values in (device.get("consumesCounters") or {}).items():
        parts.append(f"consumes {name}: " + ", ".join(f"{k} {v}" for k, v in values.items()))
    return "; ".join(p for p in parts if p) or "–"


def node_actions_section(data: dict[str, Any]) -> Markup:
    """`--cordon/--drain/--remove`: each evicted pod's replacement and where it went, pods lost, drains refused."""
    actions = data.get("nodeActions")
    if not actions:
        return Markup("")
    done = "; ".join(f"{verb} {', '.join(actions[verb])}" for verb in ("cordon", "drain", "remove") if verb in actions)
    rows: list[Sequence[Any]] = [(m["pod"], m["replacement"], m["from"], m["to"] or Markup('<span class="pending">'
                                                                                       "pending</span>"))
                                 for m in actions["evicted"]]
    rows += [(g["pod"], Markup('<span class="pending">none: lost</span>'), g["from"], "") for g in actions["lost"]]
    answer = value(_yes(actions["allPlaced"]), pointer("nodeActions", "allPlaced"))
    parts = [Markup(f"<p>all evicted pods placed: {answer}</p>"), table(("pod", "replacement", "from", "to"), rows)]
    for node, message in actions["refused"].items():
        parts.append(paragraph(f"drain of {node} refused (kubectl drain without --force): {message}", cls="bad"))
    return section(f"Evictions: {done}", *parts, anchor="evictions")


def queue_section(steps: Sequence[dict[str, Any]], *, devices: bool = False) -> Markup:
    """The queue in order: where each pod went, the nodes it tied with, or why it stayed pending (or was
    never created); with `devices` (the run has DRA objects) the devices each pod's claims got."""
    rows = []
    for i, s in enumerate(steps[:QUEUE_ROWS], 1):
        if "nominatedNode" in s:
            node: Any = Markup(f'<span class="pending">preempts on {esc(s["nominatedNode"])}</span>')
            extra = evicted_text(s)
        else:
            node = (s["node"] if s["node"] is not None else NOT_CREATED if s.get("notCreated")
                    else Markup('<span class="pending">pending</span>'))
            ties = s.get("ties") or []
            extra = s.get("message") or (", ".join(ties[:TIES_SHOWN]) + (
                f" (tied with {s.get('tieCount', len(ties)):,} nodes)" if len(ties) > TIES_SHOWN else ""))
        pod = _pod(s) + (f" (replaces {s['replaces']})" if s.get("replaces") else "")  # its controller's new pod
        rows.append((i, pod, node, *([_devices(s.get("devices") or {})] if devices else []), extra))
    note = (f"The first {QUEUE_ROWS:,} of {len(steps):,} pods; -o json lists every one." if len(steps) > QUEUE_ROWS
            else "Pods in queue order; a tie is broken as --tie-break says.")
    headers = ("#", "pod", "node", *(["devices (claim: driver/pool/device)"] if devices else []), "ties / message")
    return section("Queue", table(headers, rows, numeric=(0,)), anchor="queue", note=note)


def groups_section(groups: Sequence[dict[str, Any]], at: str = "") -> Markup:
    """Per pod group (GenericWorkload on) its decision: policy, pods bound of its pods, the cycles it took, the
    PodGroupScheduled condition kube-scheduler wrote, and why, in one line (`GroupRecord.to_dict`)."""
    if not groups:
        return Markup("")
    rows = []
    for i, g in enumerate(groups):
        policy = f"gang, minCount {g['minCount']}" if g.get("minCount") is not None else (g["policy"] or "no PodGroup")
        condition = g.get("condition")
        said = f"{condition['type']}={condition['status']} ({condition['reason']})" if condition else \
            (f"never queued ({g['gatedBy']})" if g.get("gatedBy") else "")
        whole = g["bound"] == g["pods"]
        bound = Markup(f'<span class="{"good" if whole else "pending"}">{esc(g["bound"])} of {esc(g["pods"])}</span>')
        rows.append((f"{g['namespace']}/{g['name']}", policy, bound, g["cycles"], said,
                     value(g["why"], at + pointer("podGroups", i, "why"))))
    return section(f"Pod groups ({len(groups)})", table(("pod group", "policy", "bound", "cycles", "condition",
                                                         "decision"), rows, numeric=(3,)), anchor="pod-groups",
                   note="Each group is one queue entry: its pods are scheduled in one pod group cycle and bind "
                        "together (minCount met) or not at all.")


def nodes_section(final: dict[str, dict], allocatable: dict[str, dict[str, int]],
                  placement: dict[str, int]) -> Markup:
    """Per node (small clusters): pods placed by the run, pods on it, each resource requested / allocatable."""
    if len(final) > BARS_MAX:
        return Markup("")
    resources = drawn_resources(allocatable, [final])
    rows = []
    for name, use in final.items():
        alloc = allocatable.get(name, {})
        requested = {**use["requested"], "pods": use["pods"]}
        rows.append((name, placement.get(name, 0), *(f"{format_quantity(r, requested.get(r, 0))} / "
                                                     f"{format_quantity(r, alloc.get(r, 0))}" for r in resources)))
    return section("Nodes", table(("node", "placed by this run", *(f"{r} requested / allocatable" for r in resources)),
                                  rows, numeric=range(1, 2 + len(resources))), anchor="nodes")


def _allocation_headline(m: dict[str, Any], at: str) -> list[Headline]:
    return [Headline(f"{r} allocated, cluster", m["allocation"][r], at + pointer("allocation", r), " %")
            for r in ("cpu", "memory") if r in m["allocation"]]


# --------------------------------------------------------------------------- the pages

@renders(SimulationResult)
def simulation_page(data: dict[str, Any]) -> Page:
    """`kubefit simulate`: where the pods went, what stays pending and why, how tightly the cluster is packed."""
    m = data["metrics"]
    headline = [Headline("pods scheduled", data["scheduled"], pointer("scheduled"), tone="good"),
                Headline("pods left pending", data["unschedulable"], pointer("unschedulable"),
                         tone="bad" if data["unschedulable"] else ""),
                Headline("nodes used", m["nodesUsed"], pointer("metrics", "nodesUsed")),
                Headline("empty nodes", m["emptyNodes"], pointer("metrics", "emptyNodes")),
                *_allocation_headline(m, "/metrics")]
    if data.get("notCreated"):
        headline.insert(2, Headline("pods not created", data["notCreated"], pointer("notCreated"), tone="bad"))
    if m.get("evicted"):
        headline.append(Headline("pods evicted by preemption", m["evicted"], pointer("metrics", "evicted"), tone="bad"))
    return Page("simulate", "If these pods arrive, where do they land, what stays pending and why, and how tightly "
                "is the cluster packed?", headline, simulation_sections(data))


def simulation_sections(data: dict[str, Any], *, marked: frozenset[str] = frozenset(), at: str = "") -> list[Markup]:
    """A simulation's sections (also the planned cluster's in `plan`, whose dict holds it at `at`)."""
    m, steps = data["metrics"], data["steps"]
    return [node_actions_section(data), allocation_section([("", data["final"])], data["allocatable"], marked=marked),
            groups_section(data.get("podGroups", ()), at), devices_section(data, at), pending_section(data, at),
            not_created_section([s for s in steps if s.get("notCreated")]), stranded_section([("", m)]),
            preemption_section(steps), section("Metrics", metrics_table([("", m, at + pointer("metrics"))]),
                                                anchor="metrics"),
            queue_section(steps, devices="devices" in data),
            nodes_section(data["final"], data["allocatable"], data["placement"])]


def _comparison(results: list[SimulationResult]) -> dict[str, Any]:
    if not all(isinstance(r, SimulationResult) for r in results):
        raise TypeError("a list is reported as a comparison: every item must be a SimulationResult")
    return comparison_to_dict(results)


@renders(list, data=_comparison)
def comparison_page(data: dict[str, Any]) -> Page:
    """`kubefit simulate --compare`: the same workload under each configuration, side by side."""
    configs = data["configurations"]
    headline = []
    for i, c in enumerate(configs):
        at, m = pointer("configurations", i), c["metrics"]
        headline += [Headline("pods pending", c["unschedulable"], at + pointer("unschedulable"),
                              tone="bad" if c["unschedulable"] else "good", group=c["name"]),
                     Headline("nodes used", m["nodesUsed"], at + pointer("metrics", "nodesUsed"), group=c["name"]),
                     Headline("empty nodes", m["emptyNodes"], at + pointer("metrics", "emptyNodes"), group=c["name"])]
        if c.get("notCreated"):
            headline.insert(len(headline) - 2, Headline("pods not created", c["notCreated"], at + pointer("notCreated"),
                                                        tone="bad", group=c["name"]))
    runs = [(c["name"], c["metrics"], pointer("configurations", i, "metrics")) for i, c in enumerate(configs)]
    counts_of = [("scheduled", "scheduled"), ("unschedulable", "unschedulable")]
    if any(c.get("notCreated") for c in configs):
        counts_of.append(("not created", "notCreated"))
    rows = [[label, *(value(c[key], pointer("configurations", i, key)) if key in c else 0
                      for i, c in enumerate(configs))] for label, key in counts_of]
    counts = table(("pods", *(c["name"] for c in configs)), rows, numeric=range(1, len(configs) + 1))
    sections = [section("Metrics side by side", counts, metrics_table(runs), anchor="metrics"),
                allocation_section([(c["name"], c["final"]) for c in configs], data["allocatable"]),
                stranded_section([(c["name"], c["metrics"]) for c in configs])]
    if "differences" in data:  # `--compare-versions`: the same configuration under each Kubernetes version
        sections.insert(1, _differences_section(data))
        sections.insert(1, _group_differences_section(data))
        gates = ((data.get("inputs") or {}).get("options") or {}).get("compareFeatureGates")
        if gates:  # `--compare-feature-gates`: the same version with and without the gates
            return Page("simulate --compare-feature-gates", f"What does turning on {gates} change?", headline,
                        sections)
        return Page("simulate --compare-versions", "What does an upgrade change?", headline, sections)
    return Page("simulate --compare", "How does the same workload pack under each configuration?", headline, sections)


def _differences_section(data: dict[str, Any]) -> Markup:
    """Every pod the versions place differently, its node under each (pending: none)."""
    labels = [c["name"] for c in data["configurations"]]
    rows = [[d["pod"], *(d["nodes"][label] or "pending" for label in labels)] for d in data["differences"]]
    note = "" if rows else "every pod lands on the same node under every version"
    return section(f"Pods placed differently ({len(rows)})", table(("pod", *labels), rows) if rows else "",
                   anchor="differences", note=note)


def _group_differences_section(data: dict[str, Any]) -> Markup:
    """The pod groups the runs place differently: per run, pods bound of the group's, and how it was scheduled."""
    groups = data.get("groupDifferences") or []
    if not groups:
        return Markup("")
    labels = [c["name"] for c in data["configurations"]]
    rows = [[g["podGroup"] + (f" (minCount {g['minCount']})" if g.get("minCount") is not None else ""),
             *(f"{g['runs'][label]['bound']} of {g['pods']} bound, "
               f"{'as a group' if g['runs'][label]['asGroup'] else 'pod by pod'}" for label in labels)]
            for g in groups]
    return section(f"Pod groups placed differently ({len(rows)})", table(("pod group", *labels), rows),
                   anchor="group-differences")


@renders(TimelineResult)
def timeline_page(data: dict[str, Any]) -> Page:
    """`kubefit simulate --timeline`: allocation, running and pending pods, stranded capacity over time."""
    series = data["series"]
    times = series["time"]
    hours = bool(times) and times[-1] > 3 * 3600
    x = [t / 3600 for t in times] if hours else times
    unit = "time (hours)" if hours else "time (s)"
    figures = [figure(svg.line_chart(x, series["allocation"], x_label=unit, y_label="allocated %", y_max=100,
                                     steps=True), "Allocation per resource, % of the cluster's allocatable."),
               figure(svg.line_chart(x, {"running": series["running"], "pending": series["pending"]}, x_label=unit,
                                     y_label="pods", steps=True), "Pods running and waiting.")]
    figures += [figure(svg.line_chart(x, {r: v}, x_label=unit, y_label=f"stranded {r}", steps=True),
                       f"Stranded {r}: free on nodes where no waiting pod fits.")
                for r, v in series["stranded"].items() if any(v)]
    pods = data["pods"]
    grouped = any("podGroup" in p for p in pods)  # pod groups scheduled as groups: each pod's group
    rows = [(p["pod"], *([p.get("podGroup", "")] if grouped else []), p["arrival"],
             p["node"] or (NOT_CREATED if p.get("notCreated") else Markup('<span class="pending">never</span>')),
             p["start"], p["end"], p["attempts"], p.get("message", "")) for p in pods[:QUEUE_ROWS]]
    note = f"The first {QUEUE_ROWS:,} of {len(pods):,} pods; -o json lists every one." if len(pods) > QUEUE_ROWS else ""
    headline = [Headline("pods scheduled", data["scheduled"], pointer("scheduled"), tone="good"),
                Headline("never scheduled", data["unschedulable"], pointer("unschedulable"),
                         tone="bad" if data["unschedulable"] else ""),
                Headline("completed", data["completed"], pointer("completed"))]
    if data.get("notCreated"):
        headline.insert(2, Headline("never created", data["notCreated"], pointer("notCreated"), tone="bad"))
    sections = [section("Over time", Markup(f'<div class="figures">{"".join(figures)}</div>'), anchor="series"),
                section("Pods", table(("pod", *(["pod group"] if grouped else []), "arrival (s)", "node", "start (s)",
                                       "end (s)", "attempts", "message"), rows,
                                      numeric=tuple(i + grouped for i in (1, 3, 4, 5))), anchor="pods", note=note)]
    return Page("simulate --timeline", "How does allocation evolve as pods arrive, run and leave?", headline, sections)


@renders(CapacityResult)
def capacity_page(data: dict[str, Any]) -> Page:
    """`kubefit capacity`: how many more copies of a pod fit, where, and what stopped the count."""
    per_node = data["perNode"]
    group = data.get("podGroup")
    what = data["pod"] if group is None else f"pod group {group['podGroup']} ({group['pods']} pods)"
    headline = [Headline(f"more copies of {what} fit", data["count"], pointer("count"), tone="good")]
    if len(per_node) <= BARS_MAX:
        chart = svg.bars(list(per_node), [("copies", list(per_node.values()))], label="copies per node")
    else:
        copies = sorted(per_node.values(), reverse=True)
        chart = svg.line_chart(list(range(len(copies))), {"copies": copies}, x_label="nodes, most copies first",
                               y_label="copies")
    rows = [(node, value(n, pointer("perNode", node))) for node, n in list(per_node.items())[:QUEUE_ROWS]]
    listed = table(("node", "copies"), rows, numeric=(1,))
    sections = [section("Why the count stops", paragraph(f"{data['stopReason']}: {data['message']}"), anchor="stop"),
                section("Copies per node", figure(chart), details(f"per node, in node order ({len(per_node):,})", listed),
                        anchor="per-node", note="Nodes that take no copy are left out.")]
    return Page("capacity", f"How many more copies of {what} fit?", headline, sections)


@renders(Plan)
def plan_page(data: dict[str, Any]) -> Page:
    """`kubefit plan`: the nodes to add per template, their cost, the planned cluster simulated."""
    headline = [Headline(f"add {name}", n, pointer("add", name), tone="good") for name, n in data["add"].items()]
    headline += [Headline("total cost", data["cost"], pointer("cost")),
                 Headline("pending before", data["pendingBefore"], pointer("pendingBefore"), tone="bad"),
                 *([Headline("not created before", data["notCreatedBefore"], pointer("notCreatedBefore"), tone="bad")]
                   if data.get("notCreatedBefore") else []),
                 Headline("scheduled after", data["scheduled"], pointer("scheduled"), tone="good")]
    costs = {t["name"]: t["cost"] for t in data["templates"]}
    templates = table(("template", "cost each", "add"), [(n, costs[n], c) for n, c in data["add"].items()],
                      numeric=(1, 2))
    added = data["nodesAdded"]
    sections = [section("Nodes to add", templates, _added_nodes(data) if added else Markup(""), anchor="add",
                        note=f"Verified by simulating the planned cluster ({data['simulations']:,} simulations).")]
    if data["cannotFit"]:
        sections.append(section("Cannot fit on any count of the templates",
                                table(("pod", "why"), [(r["pod"], r["message"]) for r in data["cannotFit"]]),
                                anchor="cannot-fit"))
    sim = data["simulation"]
    sections.append(node_actions_section(data))
    sections += simulation_sections({**sim, "nodeActions": None}, marked=frozenset(added), at=pointer("simulation"))
    return Page("plan", "How many nodes of these templates must be added so that every pending pod fits?",
                headline, sections)


def _added_nodes(data: dict[str, Any]) -> Markup:
    """The pods each added node holds in the planned cluster's simulation: open for a few nodes, folded for many
    (a plan may add thousands), its summary saying how many hold none (the table's `placed_on_new_nodes`)."""
    added, placement = data["nodesAdded"], data["placement"]
    empty = added_without_pods(data)
    rows = table(("new node", "pods placed"), [(n, placement.get(n, 0)) for n in added], numeric=(1,))
    summary = f"pods placed per added node ({len(added):,}" + (f"; {empty:,} hold none)" if empty else ")")
    return details(summary, rows, open_=len(added) <= PLACED_NAMED)


@renders(Consolidation)
def consolidation_page(data: dict[str, Any]) -> Page:
    """`kubefit consolidate`: the nodes that can go, the lower bound, allocation before and after, the pods that
    move, the nodes that stay and why, the workload repacked from scratch."""
    saved = data["costSaved"]
    headline = [Headline("nodes today", data["nodesBefore"], pointer("nodesBefore")),
                Headline("nodes after", data["nodesAfter"], pointer("nodesAfter"), tone="good"),
                Headline("no consolidation keeps fewer", data["lowerBound"], pointer("lowerBound")),
                Headline("cost saved", saved, pointer("costSaved"), tone="good" if saved else "")]
    for when in ("before", "after"):
        headline += [Headline(f"{r} allocated, {'today' if when == 'before' else 'after'}", v,
                              pointer("utilization", when, r), " %") for r, v in data["utilization"][when].items()
                     if r in ("cpu", "memory")]
    sections = [_removable_section(data), _bound_section(data), _consolidation_allocation(data),
                _moves_section(data), _blocked_section(data), _repack_section(data)]
    return Page("consolidate", "Which nodes can today's workload do without, each removal checked by the "
                "scheduler's own filters and scores, and how far is that from the fewest nodes possible?",
                headline, sections)


def _removable_section(data: dict[str, Any]) -> Markup:
    """The nodes that can go, in the order they were removed, with the pods each sends elsewhere."""
    at = {n["name"]: i for i, n in enumerate(data["nodes"])}
    moved: dict[str, int] = {}
    for m in data["moves"]:
        moved[m["from"]] = moved.get(m["from"], 0) + 1
    rows = [(name, value(data["nodes"][at[name]]["cost"], pointer("nodes", at[name], "cost")),
             _utilization(data["nodes"][at[name]]["utilization"]), moved.get(name, 0))
            for name in data["removable"][:QUEUE_ROWS]]
    runs = data["verification"]["simulations"]
    note = (f"{len(data['removable']):,} of {data['nodesBefore']:,} nodes, in the order they were removed "
            f"(empty nodes first, then by utilization: the larger of cpu and memory requests / allocatable); "
            f"{data['trials']:,} removals tried, the answer checked by simulate --remove ({runs:,} "
            f"run{'s' if runs != 1 else ''}).")
    if not rows:
        return section("Nodes that can go", paragraph("None."), anchor="removable", note=note)
    return section("Nodes that can go", table(("node", "cost", "utilization today", "pods moved"), rows,
                                              numeric=(1, 2, 3)), anchor="removable", note=note)


def _utilization(fraction: float | None) -> str:
    return "–" if fraction is None else f"{100 * fraction:.1f} %"


def _bound_section(data: dict[str, Any]) -> Markup:
    """What the lower bound is made of: the nodes that must stay, per resource the further nodes the rest of the
    workload needs at least, the nodes a required anti-affinity keeps apart."""
    parts = data["lowerBoundParts"]
    rows = [("nodes that must stay (blocked by a rule that still holds, or running a pinned pod)",
             value(parts["kept"], pointer("lowerBoundParts", "kept")))]
    rows += [(f"+ further nodes for the workload's {r}", value(n, pointer("lowerBoundParts", "byResource", r)))
             for r, n in parts["byResource"].items()]
    rows += [("nodes a required anti-affinity spreads its pods over", value(parts["antiAffinity"],
                                                                 pointer("lowerBoundParts", "antiAffinity"))),
             ("lower bound", value(data["lowerBound"], pointer("lowerBound"))),
             ("nodes after consolidating", value(data["nodesAfter"], pointer("nodesAfter")))]
    return section("The fewest nodes possible", table(("part", "nodes"), rows, numeric=(1,)), anchor="bound",
                   note="No consolidation keeps fewer nodes than the lower bound: the nodes that must stay plus the "
                        "most further nodes a resource needs (a node's room: allocatable less its DaemonSet pods), "
                        "or the nodes a required anti-affinity spreads its pods over when more; 1 at least.")


def _consolidation_allocation(data: dict[str, Any]) -> Markup:
    """Per-node allocation today and after, the removed nodes marked today (and absent after)."""
    def final(when: str) -> dict[str, dict]:
        return {n["name"]: {"requested": {k: v for k, v in n[when].items() if k != "pods"}, "pods": n[when]["pods"]}
                for n in data["nodes"] if n[when] is not None}
    allocatable = {n["name"]: n["allocatable"] for n in data["nodes"]}
    return allocation_section([("today", final("before")), ("after", final("after"))], allocatable,
                              marked=frozenset(data["removable"]), mark="the nodes that can go")


def _moves_section(data: dict[str, Any]) -> Markup:
    """Each pod that changes node (its node today, its node at the end), and the pods deleted with their node."""
    moves, lost = data["moves"], data["lost"]
    if not moves and not lost:
        return Markup("")
    rows: list[Sequence[Any]] = [(_pod(m), m["replacement"], m["from"], m["to"]) for m in moves[:QUEUE_ROWS]]
    rows += [(_pod(g), Markup('<span class="pending">none: deleted</span>'), g["from"], g["reason"])
             for g in lost[:QUEUE_ROWS]]
    shown = min(len(moves), QUEUE_ROWS) + min(len(lost), QUEUE_ROWS)
    more = f" The first {shown:,} of {len(moves) + len(lost):,}; -o json lists every one." if shown < len(
        moves) + len(lost) else ""
    return section("Pods that move", table(("pod", "replacement", "from", "to"), rows), anchor="moves",
                   note="A moved pod is replaced as its controller would (a new name for a ReplicaSet's or Job's pod); "
                        "'to' is where simulate --remove of the nodes that can go puts it." + more)


def _blocked_section(data: dict[str, Any]) -> Markup:
    """The nodes that stay and why (a drainability rule, or no place for a pod that must move)."""
    blocked = list(data["blocked"].items())
    if not blocked:
        return Markup("")
    note = f"The first {QUEUE_ROWS:,} of {len(blocked):,}; -o json lists every one." if len(blocked) > QUEUE_ROWS else ""
    return section("Nodes that stay", table(("node", "why"), blocked[:QUEUE_ROWS]), anchor="blocked", note=note)


def _repack_section(data: dict[str, Any]) -> Markup:
    """`--repack`: the nodes the workload needs scheduled from scratch under each configuration."""
    repack = data.get("repack")
    if not repack:
        return Markup("")
    names = [r["configuration"] for r in repack]
    chart = svg.bars([*names, "lower bound"], [("nodes", [*(r["nodesUsed"] for r in repack), data["lowerBound"]])],
                     label="nodes used, repacked from scratch")
    rows = [(r["configuration"], value(r["nodesUsed"], pointer("repack", i, "nodesUsed")),
             value(r["cost"], pointer("repack", i, "cost")), value(r["scheduled"], pointer("repack", i, "scheduled")),
             value(r["unschedulable"], pointer("repack", i, "unschedulable"))) for i, r in enumerate(repack)]
    return section("Repacked from scratch", figure(chart),
                   table(("configuration", "nodes used", "cost", "scheduled", "pending"), rows, numeric=(1, 2, 3, 4)),
                   anchor="repack", note="Every pod but the DaemonSet and mirror pods queued onto empty nodes: what "
                   "this workload would need had it always been scheduled with that configuration.")


@renders(FleetEstimate)
def estimate_page(data: dict[str, Any]) -> Page:
    """`kubefit estimate`: Karmada's available replicas per member cluster (and the exact count where given)."""
    available, exact = data["availableReplicas"], data.get("exactReplicas") or {}
    headline = [Headline(f"{name}: available replicas", n, pointer("availableReplicas", name))
                for name, n in available.items()]
    series: list[tuple[str, Sequence[int | None]]] = [("Karmada estimate", list(available.values()))]
    if exact:
        series.append(("exact, on the member's nodes", [exact.get(n) for n in available]))
    rows = [(name, value(n, pointer("availableReplicas", name)),
             value(exact[name], pointer("exactReplicas", name)) if name in exact else "–",
             value(data["estimateError"][name], pointer("estimateError", name)) if name in exact else "–",
             _yes(name in (data.get("overflow") or [])))
            for name, n in available.items()]
    sections = [section("Available replicas per cluster", figure(svg.bars(list(available), series,
                                                                          label="available replicas")),
                        table(("cluster", "Karmada", "exact", "error", "int64 overflow"), rows, numeric=(1, 2, 3)),
                        anchor="estimates")]
    if data.get("explain"):
        sections.append(section("The arithmetic", *(details(name, code("\n".join(steps), copy=False), open_=True)
                                                    for name, steps in data["explain"].items()), anchor="explain"))
    return Page("estimate", "How many replicas fit in each member cluster, as Karmada's general estimator says?",
                headline, sections)


@renders(FleetSchedule)
def schedule_page(data: dict[str, Any]) -> Page:
    """`kubefit schedule`: the clusters Karmada's filters keep, their scores and estimates, the division."""
    replicas, candidates = data["replicas"], {c["name"]: c for c in data["candidates"]}
    if data["error"]:
        headline = []
        failure = section("Scheduling failed", paragraph(data["error"], cls="bad"), anchor="error")
    else:
        headline = [Headline(f"{name}: replicas", n, pointer("replicas", name), tone="good" if n else "")
                    for name, n in replicas.items()]
        failure = Markup("")
    rows = []
    for name, n in replicas.items():
        rejected = data["filter"].get(name)
        verdict = (Markup(f'<span class="bad">{esc(rejected["plugin"])}: {esc(rejected["reason"])}</span>')
                   if rejected else "fits")
        cand = candidates.get(name, {})
        rows.append((name, verdict, data["scores"].get(name, "–"), cand.get("availableReplicas", "–"),
                     cand.get("allocatableReplicas", "–"), value(n, pointer("replicas", name))))
    series: list[tuple[str, Sequence[int | None]]] = [
        ("replicas assigned", list(replicas.values())),
        ("available replicas", [candidates[n]["availableReplicas"] if n in candidates else None for n in replicas])]
    sections = [failure, section("Clusters", figure(svg.bars(list(replicas), series, label="division")),
                                 table(("cluster", "filter", "score", "available", "allocatable", "replicas"), rows,
                                       numeric=(2, 3, 4, 5)), anchor="clusters")]
    attempts = data.get("affinityAttempts") or []
    if attempts:
        sections.append(section("clusterAffinities terms tried", table(
            ("term", "outcome"), [(a["affinityName"], a["error"] or "scheduled") for a in attempts]), anchor="affinities"))
    return Page("schedule", "Which member clusters does Karmada's scheduler keep, and how does it divide the replicas?",
                headline, sections)


# --------------------------------------------------------------------------- tune

TRIAL_ROWS = QUEUE_ROWS  # trials listed; -o json has every one
TRIALS_OPEN = 20  # up to this many trials the list is open


def _tune_columns(data: dict[str, Any]) -> list[tuple[str, str]]:
    """(key, title) of a trial's measures shown beside its value: pods pending and nodes used, unless the
    objective is that very number."""
    return [(key, title) for key, title, objective in (("pending", "pods pending", "pending"),
                                                       ("nodesUsed", "nodes used", "nodes"))
            if data["objective"] != objective]


def _trial_value(trial: dict[str, Any], at: str) -> Markup:
    """A trial's value (tagged), with its spread over the seeds when there are several."""
    spread = trial.get("spread")
    return Markup(value(trial["value"], at + pointer("value")) + (esc(f" ± {spread}") if spread else ""))


@renders(TuneResult)
def tune_page(data: dict[str, Any]) -> Page:
    """`kubefit tune`: the tuned configuration against the baselines, the trial history, how long the trials
    took, the configuration to copy, the hold-out."""
    unit, trials, best = data["unit"], data["trials"], data["best"]
    top = data["bestBaseline"]
    headline = [Headline(f"tuned: {unit}", best["value"], pointer("best", "value"), tone="good"),
                Headline(f"best baseline ({top}): {unit}", data["baselines"][top], pointer("baselines", top))]
    if top != "scenario":
        headline.append(Headline(f"the scenario's configuration: {unit}", data["baselines"]["scenario"],
                                 pointer("baselines", "scenario")))
    if data.get("validation"):
        headline.append(Headline(f"hold-out, tuned: {unit}", data["validation"]["best"],
                                 pointer("validation", "best"), tone="good"))
    headline += [Headline("best trial", best["trial"], pointer("best", "trial")),
                 Headline("seconds", data["seconds"], pointer("seconds"))]
    sections = [_tune_baselines(data), _tune_history(data), _tune_best(data), _tune_validation(data),
                _tune_time(data), _tune_trials(data), _tune_search(data)]
    search = "a grid of the whole space" if data["search"] == "grid" else f"Optuna's TPE sampler, seed {data['seed']}"
    return Page("tune", f"Which scheduler configuration packs this workload best? Objective {data['objective']} "
                f"({unit}, lower is better), {len(trials):,} trials by {search}.", headline, sections)


def _tune_baselines(data: dict[str, Any]) -> Markup:
    """The scenario's configuration and the stock strategies beside the tuned one: a bar each and a table."""
    trials, unit = data["trials"], data["unit"]
    named = [*((name, n) for name, n in data["baselineTrials"].items()), ("tuned", data["best"]["trial"])]
    chart = svg.bars([name for name, _ in named], [(unit, [trials[n]["value"] for _, n in named])],
                     label=f"{unit}: baselines and tuned")
    columns = _tune_columns(data)
    rows = [(name, _trial_value(trials[n], pointer("trials", n)),
             *(value(trials[n][key], pointer("trials", n, key)) for key, _ in columns), n, trials[n]["summary"])
            for name, n in named]
    listed = table(("configuration", unit, *(title for _, title in columns), "trial", "what it is"), rows,
                   numeric=range(1, 3 + len(columns)))
    return section("Baselines and the tuned configuration", figure(chart), listed, anchor="baselines",
                   note="Each stock strategy with the scenario's resources, and the scenario's own configuration "
                        "(kube-scheduler's defaults when it has none), simulated on the same seeds first; the tuned "
                        "configuration is the best trial, never worse than any of them.")


def _tune_history(data: dict[str, Any]) -> Markup:
    trials, unit = data["trials"], data["unit"]
    tips = [f"trial {t['number']}: {t['value']}{' ± ' + str(t['spread']) if t.get('spread') else ''} {unit}; "
            f"{t['summary']}" for t in trials]
    marked = {n: "baseline" for n in data["baselineTrials"].values()}
    marked[data["best"]["trial"]] = "best"
    chart = svg.trial_chart([t["value"] for t in trials], [trials[b]["value"] for b in data["bestSoFar"]], tips,
                            marked=marked, y_label=unit)
    return section("Trial history", figure(chart, "Each trial's value (the mean over its seeds), the best so far as "
                                                  "the search ranks them; hover a dot for the configuration."),
                   anchor="history")


def _tune_best(data: dict[str, Any]) -> Markup:
    from kubefit.report.tune import config_yaml

    best = data["best"]
    return section("The tuned configuration", paragraph(best["summary"]), code(config_yaml(data)), anchor="config",
                   note="A v1 KubeSchedulerConfiguration (what --write-config writes): kubefit simulate -f FILE -f "
                        "tuned.yaml runs it, kube-scheduler --config tuned.yaml applies it.")


def _tune_validation(data: dict[str, Any]) -> Markup:
    held = data.get("validation")
    if not held:
        return Markup("")
    pending = data["objective"] != "pending"  # else the value is the pods pending

    def row(name: str, v: Any, at: str, key: str) -> tuple[Any, ...]:
        return (name, value(v, at), *([value(held["pending"][key], pointer("validation", "pending", key))]
                                      if pending else []))
    rows = [row(name, v, pointer("validation", "baselines", name), name) for name, v in held["baselines"].items()]
    rows.append(row("tuned", held["best"], pointer("validation", "best"), "best"))
    return section("Hold-out", table(("configuration", data["unit"], *(["pods pending"] if pending else [])), rows,
                                     numeric=(1, 2)),
                   anchor="holdout", note=f"The tuned configuration and the baselines on {', '.join(held['files'])}, "
                                          "a workload the search never saw.")


def _tune_time(data: dict[str, Any]) -> Markup:
    trials = data["trials"]
    series = {"seconds": [t["seconds"] for t in trials], "CPU seconds": [t["cpuSeconds"] for t in trials]}
    chart = svg.line_chart([t["number"] for t in trials], series, x_label="trial", y_label="seconds",
                           y_max=max(max(v, default=0) for v in series.values()) or 1.0)
    total = Markup(f"<p>{value(data['seconds'], pointer('seconds'))} s in all on "
                   f"{value(data['workers'], pointer('workers'))} Dask worker(s), batches of "
                   f"{value(data['batch'], pointer('batch'))}.</p>")
    return section("How long the trials took", total, figure(chart, "Per trial, its simulations' wall and CPU "
                                                                    "time on its worker (a repeated configuration "
                                                                    "is not simulated again: 0)."), anchor="time")


def _tune_trials(data: dict[str, Any]) -> Markup:
    trials, columns = data["trials"], _tune_columns(data)
    rows = []
    for t in trials[:TRIAL_ROWS]:
        at = pointer("trials", t["number"])
        what = ", ".join(t.get("baselines", []))
        if "duplicateOf" in t:
            what = f"repeats trial {t['duplicateOf']}"
        rows.append((t["number"], _trial_value(t, at), *(t[key] for key, _ in columns),
                     value(t["seconds"], at + pointer("seconds")), t["cpuSeconds"], t["summary"], what))
    note = (f"The first {TRIAL_ROWS:,} of {len(trials):,} trials; -o json lists every one." if len(trials) > TRIAL_ROWS
            else "Click a header to sort.")
    listed = table(("trial", data["unit"], *(title for _, title in columns), "seconds", "CPU seconds", "configuration",
                    "baseline"), rows, numeric=range(0, 4 + len(columns)))
    return section("Trials", details(f"every trial ({len(trials):,})", listed, open_=len(trials) <= TRIALS_OPEN),
                   anchor="trials", note=note)


def _tune_search(data: dict[str, Any]) -> Markup:
    import yaml

    rows = [("objective", f"{data['objective']} ({data['unit']})"), ("search", data["search"]),
            ("seed", value(data["seed"], pointer("seed"))), ("batch", value(data["batch"], pointer("batch"))),
            ("seeds a trial", value(data["repeats"], pointer("repeats"))), ("tie-break", data["tieBreak"]),
            ("Dask workers", value(data["workers"], pointer("workers")))]
    space = code(yaml.safe_dump(data["space"], sort_keys=False, default_flow_style=False))
    return section("The search", table(("setting", "value"), rows), details("the search space", space),
                   anchor="search", note="The answer depends on the seed and the batch, not on the workers.")
