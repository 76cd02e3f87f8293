"""What the page's tables show, cut from the verbs' results: rows, sorted, filtered and one page at a time.

Every number comes from a verb's `-o json` dict (`SimulationResult.to_dict`, `kubefit score --detail
--explain`) or the final `ClusterState` it returned; nothing here decides where a pod goes. Long tables
are paged on the server so a 5,000-node cluster sends the browser 50 rows, not 5,000.
"""

from __future__ import annotations

from typing import Any

from kubefit.errors import InputError
from kubefit.k8s.labels import SelectorError, parse_selector

MAX_PAGE = 500  # rows one request may ask for


def page_of(rows: list[Any], page: int, size: int) -> dict[str, Any]:
    """Rows `page*size ...` of `rows`, with the total and the page asked for."""
    size = max(1, min(size, MAX_PAGE))
    pages = max(1, -(-len(rows) // size))
    page = max(0, min(page, pages - 1))
    return {"total": len(rows), "page": page, "pages": pages, "size": size,
            "rows": rows[page * size:(page + 1) * size]}


def selector(text: str) -> Any:
    """A kubectl `-l` selector (`a=b,c!=d,e,!f`, `in`/`notin` not needed by the page) as kubefit's `Selector`;
    a malformed one is an `InputError` naming it."""
    exprs: list[dict[str, Any]] = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        if "!=" in part:
            key, value = part.split("!=", 1)
            exprs.append({"key": key.strip(), "operator": "NotIn", "values": [value.strip()]})
        elif "=" in part:
            key, value = part.split("=", 1)
            exprs.append({"key": key.strip().rstrip("="), "operator": "In", "values": [value.strip()]})
        elif part.startswith("!"):
            exprs.append({"key": part[1:].strip(), "operator": "DoesNotExist"})
        else:
            exprs.append({"key": part, "operator": "Exists"})
    try:
        return parse_selector({"matchExpressions": exprs})
    except SelectorError as exc:
        raise InputError(str(exc), field="selector") from None


def resources(data: dict[str, Any]) -> list[str]:
    """The resources the node bars show: cpu, memory, pods, then every extended resource some node has."""
    seen: dict[str, None] = {"cpu": None, "memory": None, "pods": None}
    for alloc in data["allocatable"].values():
        for name, value in alloc.items():
            if value and name != "ephemeral-storage":
                seen.setdefault(name, None)
    return list(seen)


def drivers(data: dict[str, Any]) -> list[str]:
    """The DRA drivers whose devices some node's ResourceSlices hold (simulate's `devices`), in name order:
    one bar each, as the report's devices section draws them."""
    return sorted({d for use in (data.get("devices") or {}).values() for d in use["drivers"]})


DEVICES = "devices:"  # a sort key naming a driver's device bar (no resource name holds a colon)


def node_rows(run: Any) -> list[dict[str, Any]]:
    """Per node of the run: labels, the what-if marks, per resource `[requested, allocatable]`, pods bound,
    per DRA driver `[devices allocated, devices in its pools]` (made once per run)."""
    if "nodes" not in run.views:
        run.views["nodes"] = _node_rows(run)
    return run.views["nodes"]


def _node_rows(run: Any) -> list[dict[str, Any]]:
    data, state, edits = run.data, run.result.state, run.edits
    names = resources(data)
    marks = {n: kind for kind in ("cordon", "drain", "remove") for n in getattr(edits, kind)}
    removed = set(edits.remove)
    devices = data.get("devices") or {}
    rows = []
    for node in state.nodes:
        if node.name in removed or node.name not in data["final"]:
            continue
        final, alloc = data["final"][node.name], data["allocatable"][node.name]
        used = {r: [final["pods"] if r == "pods" else final["requested"].get(r, 0), alloc.get(r, 0)] for r in names}
        held = devices.get(node.name) or {"drivers": {}, "allocated": []}
        rows.append({"name": node.name, "labels": dict(node.labels), "unschedulable": bool(node.unschedulable),
                     "action": marks.get(node.name), "resources": used, "pods": final["pods"],
                     "devices": {d: [c["allocated"], c["devices"]] for d, c in held["drivers"].items()},
                     "allocatedDevices": held["allocated"]})
    return rows


def sort_nodes(rows: list[dict[str, Any]], key: str, descending: bool) -> list[dict[str, Any]]:
    """By name, pods, a resource's allocated fraction or a driver's (`devices:<driver>`; the bar's length)."""
    if key == "name":
        return sorted(rows, key=lambda r: r["name"], reverse=descending)
    column, name = ("devices", key[len(DEVICES):]) if key.startswith(DEVICES) else ("resources", key)

    def fraction(row: dict[str, Any]) -> float:
        used, alloc = row[column].get(name, [0, 0])
        return used / alloc if alloc else -1.0

    return sorted(rows, key=lambda r: (fraction(r), r["name"]), reverse=descending)


def pod_rows(run: Any) -> list[dict[str, Any]]:
    """The queue in order: each step as `-o json` has it, with the pod's ns/name key and its position (made
    once per run)."""
    if "pods" not in run.views:
        run.views["pods"] = [{"position": i, "key": step.pod.key, **raw}
                             for i, (step, raw) in enumerate(zip(run.result.steps, run.data["steps"], strict=True))]
    return run.views["pods"]


def filter_pods(rows: list[dict[str, Any]], status: str, text: str) -> list[dict[str, Any]]:
    """`status`: all, placed, pending; `text`: part of the pod's ns/name or node."""
    if status == "placed":
        rows = [r for r in rows if r.get("node")]
    elif status == "pending":
        rows = [r for r in rows if not r.get("node")]
    if text:
        rows = [r for r in rows if text in r["key"] or text in (r.get("node") or "")]
    return rows


def node_pods(run: Any, name: str) -> dict[str, Any]:
    """The pods bound on `name` after the run, those the run placed marked, and the DRA devices allocated
    from its pools (driver/pool/device, as simulate's `devices` names them) with its pools device by device
    (`devices[node].pools`: allocated or free, who holds each, capacities)."""
    state = run.result.state
    if name not in state.node_index:
        raise InputError(f"no node named {name!r}", field="node")
    node = state.nodes[state.node_index[name]]
    placed = run.where
    pods = [{"key": p.key, "placed": placed.get(p.key) == name, "priority": p.priority}
            for p in state.pods[state.node_index[name]]]
    held = (run.data.get("devices") or {}).get(name) or {}
    return {"name": name, "labels": dict(node.labels), "unschedulable": bool(node.unschedulable),
            "taints": [f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}" for t in node.taints],
            "pods": pods, "devices": held.get("allocated", []), "pools": held.get("pools", [])}


def decision(score: dict[str, Any], step: dict[str, Any] | None, page: int, size: int, text: str) -> dict[str, Any]:
    """`kubefit score --detail --explain` of one pod as the decision page: the cycle's summary, and per node
    (feasible ones by total, best first, then the filtered ones) the filter verdict with kube-scheduler's
    reason, each plugin's raw, normalized and weighted score, the total and the explain arithmetic."""
    if "preEnqueue" in score:
        return {"pod": score["pod"], "preEnqueue": score["preEnqueue"], "step": step, "nodes": page_of([], 0, size)}
    total, weights, best = score["total"], score.get("weights", {}), set(score["best"])
    explain = score.get("explain") or {}
    rows = []
    for name, verdict in score["filter"].items():
        if text and text not in name:
            continue
        plugins = {p: {"raw": score.get("scoreRaw", {}).get(p, {}).get(name), "score": values[name],
                       "weight": weights.get(p), "weighted": values[name] * weights.get(p, 0)}
                   for p, values in score["score"].items() if name in values}
        rows.append({"node": name, "code": verdict["code"], "reasons": verdict["reasons"],
                     "plugin": verdict.get("plugin"), "scores": plugins, "total": total.get(name),
                     "best": name in best, "explain": explain.get(name)})
    rows.sort(key=lambda r: (r["total"] is None, -(r["total"] or 0)))
    keep = ("pod", "feasible", "best", "weights", "skippedScorePlugins", "skippedFilterPlugins", "message",
            "postFilter", "warnings")
    out = {k: score[k] for k in keep if k in score}
    out["feasible"] = len(score["feasible"])
    out["plugins"] = list(score["score"])
    out["ties"] = len(score["best"]) > 1
    out["step"] = step
    out["nodes"] = page_of(rows, page, size)
    return out


def group_of(data: dict[str, Any], step: dict[str, Any] | None) -> dict[str, Any] | None:
    """The pod group record (simulate's `podGroups`) of the group whose cycle the step is part of: the group's
    decision beside its pod's; None for a pod of no group."""
    name = (step or {}).get("podGroup")
    if name is None:
        return None
    return next((g for g in data.get("podGroups", ()) if f"{g['namespace']}/{g['name']}" == name), None)


def moved(before: Any, after: Any) -> dict[str, Any]:
    """What the last change did: pods now elsewhere, pending now, placed now, and the metrics before/after."""
    if before is None:
        return {"moved": [], "nowPending": [], "nowPlaced": [], "before": None, "after": after.data["metrics"]}
    old, new = before.where, after.where
    moves = [{"pod": k, "from": old[k], "to": n} for k, n in new.items() if k in old and old[k] and n and old[k] != n]
    pending = [k for k, n in new.items() if n is None and old.get(k) is not None]
    placed = [k for k, n in new.items() if n is not None and k in old and old[k] is None]
    return {"moved": moves[:500], "movedCount": len(moves), "nowPending": pending[:500],
            "nowPendingCount": len(pending), "nowPlaced": placed[:500], "nowPlacedCount": len(placed),
            "before": before.data["metrics"], "after": after.data["metrics"]}


def refused_drains(actions: dict[str, Any] | None) -> list[str]:
    """Each drain kubectl refuses, said where the page says what moved: the node stays cordoned (`kubectl drain`
    cordons first: simulate's `nodeActions.cordoned`) and keeps its pods."""
    if not actions:
        return []
    cordoned = set(actions.get("cordoned") or ())
    return [f"drain of {node} refused ({why}): {node} {'stays cordoned and ' if node in cordoned else ''}keeps its "
            f"pods" for node, why in (actions.get("refused") or {}).items()]
