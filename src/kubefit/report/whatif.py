"""Tables for the what-if verbs: `plan` and the `--cordon/--drain/--remove` part of `simulate` (render only)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubefit.report.output import new_table

if TYPE_CHECKING:
    from rich.console import Console


def actions_table(console: Console, data: dict) -> None:
    """Each evicted pod's replacement and where it went, the pods lost, the drains refused, and the answer."""
    actions = data.get("nodeActions")
    if not actions:
        return
    done = ", ".join(f"{verb} {' '.join(actions[verb])}" for verb in ("cordon", "drain", "remove") if verb in actions)
    t = new_table(f"Evicted by: {done}")
    for col in ("pod", "replacement", "from", "to"):
        t.add_column(col)
    for move in actions["evicted"]:
        t.add_row(move["pod"], move["replacement"], move["from"], move["to"] or "[red]pending[/red]")
    for gone in actions["lost"]:
        t.add_row(gone["pod"], "[red]none: lost[/red]", gone["from"], "")
    if actions["evicted"] or actions["lost"]:
        console.print(t)
    for node, message in actions["refused"].items():
        console.print(f"[red]drain of {node} refused[/red] (kubectl drain without --force): {message}")
    placed = sum(1 for m in actions["evicted"] if m["to"] is not None)
    verdict = "yes" if actions["allPlaced"] else "no"
    console.print(f"evicted pods placed: [bold]{placed}/{len(actions['evicted'])}[/bold], lost "
                  f"{len(actions['lost'])}, drains refused {len(actions['refused'])} — all fit: {verdict}")


def plan_table(console: Console, data: dict) -> None:
    """Nodes to add per template and their cost, the placement on the planned nodes, what cannot fit."""
    t = new_table("Nodes to add")
    for col in ("template", "cost each", "add"):
        t.add_column(col, justify="left" if col == "template" else "right")
    costs = {tpl["name"]: tpl["cost"] for tpl in data["templates"]}
    for name, count in data["add"].items():
        t.add_row(name, str(costs[name]), str(count))
    console.print(t)
    before = f" (and {data['notCreatedBefore']} not created)" if data.get("notCreatedBefore") else ""
    console.print(f"total cost [bold]{data['cost']}[/bold]; pending before {data['pendingBefore']}{before}, "
                  f"scheduled after {data['scheduled']} (verified by simulating the planned cluster, "
                  f"{data['simulations']} simulations)")
    added = set(data["nodesAdded"])
    if added:
        console.print("placed on new nodes: " + ", ".join(f"{n} {c}" for n, c in data["placement"].items()
                                                          if n in added))
    for group in data.get("podGroups", ()):
        if not group["placedWhole"]:
            console.print(f"not placed whole on any count of the templates: {group['why']}")
    for key, title in (("cannotFit", "Cannot fit on any count of the templates"),
                       ("notCreated", "Still not created (a pod before them cannot fit)")):
        if data.get(key):
            t = new_table(title)
            t.add_column("pod")
            t.add_column("why")
            for row in data[key]:
                t.add_row(row["pod"], row["message"])
            console.print(t)
    actions_table(console, data)
