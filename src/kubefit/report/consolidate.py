"""`consolidate`'s table and plot: the nodes that can go, the pods that move, why the others stay (render only)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubefit.report.output import new_table

if TYPE_CHECKING:
    from rich.console import Console

ROWS = 40  # rows per table for people; -o json has them all


def _shown(rows: list, what: str, console: Console) -> list:
    """The first ROWS rows; a line saying how many more `-o json` holds."""
    if len(rows) > ROWS:
        console.print(f"… and {len(rows) - ROWS} more {what} (all of them in -o json)")
    return rows[:ROWS]


def _percent(fraction: float | None) -> str:
    return "" if fraction is None else f"{100 * fraction:.1f}%"


def summary(console: Console, data: dict) -> None:
    """Nodes and cost before and after, what the lower bound is made of, allocation, how the answer was checked."""
    saved = data["costSaved"]
    console.print(f"nodes [bold]{data['nodesBefore']} → {data['nodesAfter']}[/bold], cost {data['costBefore']} → "
                  f"{data['costAfter']}" + (f" (saves {saved})" if saved else "")
                  + f"; no consolidation keeps fewer than {data['lowerBound']} nodes ({_bound(data)})")
    before, after = data["utilization"]["before"], data["utilization"]["after"]
    moved = ", ".join(f"{r} {before[r]:.1f}% → {after.get(r, 0):.1f}%" for r in ("cpu", "memory") if r in before)
    runs = data["verification"]["simulations"]
    console.print(f"allocated {moved}; {data['trials']} removals tried, the answer checked with simulate --remove "
                  f"({runs} run{'s' if runs != 1 else ''})")


def _bound(data: dict) -> str:
    """What the lower bound is made of, in words."""
    parts = data["lowerBoundParts"]
    resource, more = max(parts["byResource"].items(), key=lambda kv: kv[1], default=("cpu", 0))
    words = f"{parts['kept']} that must stay + {more} for the workload's {resource}"
    if parts["antiAffinity"] >= parts["kept"] + more:
        words = f"{parts['antiAffinity']} that a required anti-affinity keeps apart"
    return words


def consolidate_table(console: Console, data: dict) -> None:
    """The answer (nodes and cost before and after, the lower bound), then the removable nodes, the moves,
    the nodes that stay and why."""
    summary(console, data)
    nodes = {n["name"]: n for n in data["nodes"]}
    moved: dict[str, int] = {}
    for move in data["moves"]:
        moved[move["from"]] = moved.get(move["from"], 0) + 1
    if data["removable"]:
        t = new_table("Removable nodes")
        for col in ("node", "cost", "utilization", "pods moved"):
            t.add_column(col, justify="left" if col == "node" else "right")
        rows = [(name, str(nodes[name]["cost"]), _percent(nodes[name]["utilization"]), str(moved.get(name, 0)))
                for name in data["removable"]]
        for row in rows[:ROWS]:
            t.add_row(*row)
        console.print(t)
        _shown(rows, "removable nodes", console)
    if data["moves"]:
        t = new_table("Pods that move")
        for col in ("pod", "replacement", "from", "to"):
            t.add_column(col)
        for m in _shown(data["moves"], "moves", console):
            t.add_row(m["pod"] if "namespace" not in m else f"{m['namespace']}/{m['pod']}", m["replacement"],
                      m["from"], m["to"])
        console.print(t)
    if data["lost"]:
        t = new_table("Pods deleted with their node")
        for col in ("pod", "from", "why"):
            t.add_column(col)
        for gone in _shown(data["lost"], "deleted pods", console):
            t.add_row(gone["pod"], gone["from"], gone["reason"])
        console.print(t)
    if data["blocked"]:
        t = new_table("Nodes that stay")
        t.add_column("node")
        t.add_column("why")
        for name, reason in _shown(list(data["blocked"].items()), "nodes that stay", console):
            t.add_row(name, reason)
        console.print(t)
    if data.get("repack"):
        t = new_table("Repacked from scratch")
        for col in ("configuration", "nodes used", "cost", "scheduled", "pending"):
            t.add_column(col, justify="left" if col == "configuration" else "right")
        for row in data["repack"]:
            t.add_row(row["configuration"], str(row["nodesUsed"]), str(row["cost"]), str(row["scheduled"]),
                      str(row["unschedulable"]))
        console.print(t)


def plot_consolidation(data: dict, path: str) -> None:
    """Two panels, before and after: per node the cpu and memory allocated, nodes in the same order (the fuller
    of cpu and memory today first); a removed node's line drops to nothing after."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    nodes = data["nodes"]

    def percent(n: dict, when: str, resource: str) -> float:
        use, cap = n[when], n["allocatable"][resource]
        return float("nan") if use is None or cap <= 0 else 100.0 * use[resource] / cap

    order = sorted(range(len(nodes)), key=lambda i: -max(percent(nodes[i], "before", "cpu"),
                                                          percent(nodes[i], "before", "memory")))
    x = np.arange(len(nodes))
    fig, axes = plt.subplots(2, 1, figsize=(10, 5.6), sharex=True)
    for ax, when, count in ((axes[0], "before", data["nodesBefore"]), (axes[1], "after", data["nodesAfter"])):
        for resource in ("cpu", "memory"):
            ax.plot(x, [percent(nodes[i], when, resource) for i in order], label=resource, linewidth=1.2,
                    marker="." if len(nodes) <= 60 else None)
        ax.set_title(f"{when}: {count} nodes" + (f" ({len(data['removable'])} removed, lower bound "
                                                  f"{data['lowerBound']})" if when == "after" else ""), fontsize=10)
        ax.set_ylabel("allocated %")
        ax.set_ylim(0, 105)
        ax.grid(alpha=0.3)
        ax.legend(loc="upper right", fontsize=8)
    axes[-1].set_xlabel("nodes, fullest today first")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
