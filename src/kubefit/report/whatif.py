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


PLACED_NAMED = 20  # added nodes named one by one in the table; the rest are counted (`-o json` lists them all)


def added_without_pods(data: dict) -> int:
    """How many of a plan's added nodes hold no pod in the planned cluster's simulation (the table's and the HTML
    report's count).

    >>> added_without_pods({"nodesAdded": ["t-1", "t-2", "t-3"], "placement": {"n0": 5, "t-1": 2}})
    2
    """
    placement = data["placement"]
    return sum(1 for n in data["nodesAdded"] if not placement.get(n))


def placed_on_new_nodes(data: dict) -> list[str]:
    """The table's lines on the added nodes: the pods each holds in the planned cluster's simulation (the first
    `PLACED_NAMED` named, the others counted: a plan may add thousands), and how many hold none. A node may be
    needed and yet hold no pod: the simulation with one node fewer falls short (the search's contract), because
    placement is not monotone in the node count (every node counts in the scores that read all nodes, such as
    PodTopologySpread's and ImageLocality's), so the run with fewer nodes places the queue differently.

    >>> data = {"nodesAdded": ["t-1", "t-2", "t-3"], "placement": {"n0": 5, "t-1": 2, "t-2": 1}}
    >>> placed_on_new_nodes(data)
    ['placed on new nodes: t-1 2, t-2 1', '1 of the 3 added nodes holds no pod in that simulation; the plan with one node fewer falls short all the same (placement is not monotone in the node count)']
    """
    added = data["nodesAdded"]
    if not added:
        return []
    members = set(added)
    placed = [(n, c) for n, c in data["placement"].items() if n in members]
    named = ", ".join(f"{n} {c}" for n, c in placed[:PLACED_NAMED])
    more = len(placed) - PLACED_NAMED
    lines = [f"placed on new nodes: {named}" + (f", … and {more:,} more ({sum(c for _n, c in placed):,} pods on "
                                                f"{len(placed):,} of the {len(added):,} added nodes)" if more > 0 else "")
             ] if placed else []
    empty = added_without_pods(data)
    if empty:
        lines.append(f"{empty:,} of the {len(added):,} added nodes {'holds' if empty == 1 else 'hold'} no pod in that "
                     "simulation; the plan with one node fewer falls short all the same (placement is not monotone in "
                     "the node count)")
    return lines


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
    for line in placed_on_new_nodes(data):
        console.print(line)
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
