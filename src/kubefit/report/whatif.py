"""Tables for the what-if verbs: `plan` and the `--cordon/--drain/--remove` part of `simulate` (render only)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubefit.report.output import new_table

if TYPE_CHECKING:
    from rich.console import Console


def actions_table(console: Console, data: dict) -> None:
    """Where each evicted pod went, and the answer (all placed or not)."""
    actions = data.get("nodeActions")
    if not actions:
        return
    done = ", ".join(f"{verb} {' '.join(actions[verb])}" for verb in ("cordon", "drain", "remove") if verb in actions)
    t = new_table(f"Evicted by: {done}")
    for col in ("pod", "from", "to"):
        t.add_column(col)
    for move in actions["evicted"]:
        t.add_row(move["pod"], move["from"], move["to"] or "[red]pending[/red]")
    if actions["evicted"]:
        console.print(t)
    placed = sum(1 for m in actions["evicted"] if m["to"] is not None)
    verdict = "yes" if actions["allPlaced"] else "no"
    console.print(f"evicted pods placed: [bold]{placed}/{len(actions['evicted'])}[/bold] — all fit: {verdict}")


def plan_table(console: Console, data: dict) -> None:
    """Nodes to add per template and their cost, the placement on the planned nodes, what cannot fit."""
    t = new_table("Nodes to add")
    for col in ("template", "cost each", "add"):
        t.add_column(col, justify="left" if col == "template" else "right")
    costs = {tpl["name"]: tpl["cost"] for tpl in data["templates"]}
    for name, count in data["add"].items():
        t.add_row(name, str(costs[name]), str(count))
    console.print(t)
    console.print(f"total cost [bold]{data['cost']}[/bold]; pending before {data['pendingBefore']}, scheduled "
                  f"after {data['scheduled']} (verified by simulating the planned cluster, "
                  f"{data['simulations']} simulations)")
    added = set(data["nodesAdded"])
    if added:
        console.print("placed on new nodes: " + ", ".join(f"{n} {c}" for n, c in data["placement"].items()
                                                          if n in added))
    if data["cannotFit"]:
        t = new_table("Cannot fit on any count of the templates")
        t.add_column("pod")
        t.add_column("why")
        for row in data["cannotFit"]:
            t.add_row(row["pod"], row["message"])
        console.print(t)
    actions_table(console, data)
