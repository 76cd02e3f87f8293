"""`simulate --plot`: per-node allocation as a PNG (matplotlib, Agg backend: files only, no display).

The same design as the HTML report (`kubefit.report.svg`), drawn from the same `-o json` dict: up to
`BARS_MAX` nodes, a bar per node and resource with the node's name (one row of panels per configuration,
one panel per resource, so no resource hides another); beyond, per resource the sorted profile of every
configuration (nodes fullest first), one line each.
"""

from __future__ import annotations

from collections.abc import Sequence

from kubefit.report.allocation import NodeUse, drawn_resources, node_uses
from kubefit.report.svg import DASHES, PALETTE

BARS_MAX = 40  # nodes whose names still read on a picture; beyond, sorted profiles


def plot_allocation(runs: Sequence[tuple[str, dict[str, dict]]], allocatable: dict[str, dict[str, int]],
                    path: str) -> None:
    """Write the per-node allocation of each run — (label, `final` of its `-o json`) — to `path`."""
    import matplotlib.pyplot as plt

    fig = allocation_figure(runs, allocatable)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def allocation_figure(runs: Sequence[tuple[str, dict[str, dict]]], allocatable: dict[str, dict[str, int]]):
    """The matplotlib figure `plot_allocation` writes: named bars up to BARS_MAX nodes, sorted profiles beyond."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    resources = drawn_resources(allocatable, [final for _, final in runs])
    uses = [(label, node_uses(final, allocatable)) for label, final in runs]
    if len(allocatable) <= BARS_MAX:
        return _bars(plt, uses, resources)
    return _profiles(plt, uses, resources, len(allocatable))


def _bars(plt, runs: Sequence[tuple[str, list[NodeUse]]], resources: Sequence[str]):
    """A row of panels per run, a panel per resource: horizontal bars, node names on the left."""
    n = max(len(u) for _, u in runs)
    fig, axes = plt.subplots(len(runs), len(resources), squeeze=False, sharex=True,
                             figsize=(2.4 * len(resources) + 1.6, (0.22 * n + 0.9) * len(runs)))
    for row, (label, uses) in enumerate(runs):
        names = [u.name for u in uses]
        for col, resource in enumerate(resources):
            ax = axes[row, col]
            values = [100 * (u.fraction(resource) or 0.0) for u in uses]
            colours = ["#C0392B" if v > 100 else PALETTE[col % len(PALETTE)] for v in values]
            ax.barh(range(len(uses)), [min(v, 100) for v in values], color=colours, height=0.7)
            for y, (u, v) in enumerate(zip(uses, values, strict=True)):
                ax.text(min(v, 100) + 2, y, "–" if u.fraction(resource) is None else f"{v:.0f}%",
                        va="center", fontsize=7, color="#5b6472")
            ax.set_xlim(0, 130)
            ax.set_ylim(len(uses) - 0.5, -0.5)
            ax.set_yticks(range(len(uses)), names if col == 0 else [""] * len(uses), fontsize=7)
            ax.set_xticks([0, 50, 100])
            ax.grid(axis="x", alpha=0.3)
            if row == 0:
                ax.set_title(resource, fontsize=9)
        axes[row, 0].set_ylabel(label or "simulation", fontsize=9)
    for ax in axes[-1]:
        ax.set_xlabel("allocated %", fontsize=8)
    fig.tight_layout()
    return fig


def _profiles(plt, runs: Sequence[tuple[str, list[NodeUse]]], resources: Sequence[str], nodes: int):
    """A panel per resource: each run's nodes sorted fullest first, allocated % against the rank."""
    fig, axes = plt.subplots(1, len(resources), squeeze=False, figsize=(3.4 * len(resources), 3.2))
    for col, resource in enumerate(resources):
        ax = axes[0, col]
        for i, (label, uses) in enumerate(runs):
            values = sorted((100 * f for f in (u.fraction(resource) for u in uses) if f is not None), reverse=True)
            dash = DASHES[i % len(DASHES)]
            style = (0, tuple(float(d) for d in dash.split())) if dash else "solid"
            ax.plot(range(len(values)), values, color=PALETTE[i % len(PALETTE)], linewidth=1.4, label=label,
                    linestyle=style)
        ax.set_title(resource, fontsize=9)
        ax.set_ylim(0, 105)
        ax.set_xlim(0, nodes)
        ax.set_xlabel("nodes, fullest first", fontsize=8)
        ax.grid(alpha=0.3)
        if col == 0:
            ax.set_ylabel("allocated %", fontsize=8)
    if len(runs) > 1:  # below the panels: a legend inside one would hide its curves
        handles, labels = axes[0, 0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", ncol=len(runs), fontsize=8, frameon=False)
        fig.tight_layout(rect=(0, 0.08, 1, 1))
    else:
        fig.tight_layout()
    return fig
