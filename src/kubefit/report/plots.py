"""Plots of simulation results (matplotlib, Agg backend: files only, no display)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kubefit.resourcenames import CPU, MEMORY

PLOTTED = (CPU, MEMORY)


def node_allocation(result) -> dict[str, np.ndarray]:
    """Per plotted resource, requested / allocatable in percent for every node with capacity."""
    state = result.state
    out = {}
    for name in PLOTTED:
        col = state.index[name]
        alloc = state.allocatable[:, col].astype(np.float64)
        req = state.requested[:, col].astype(np.float64)
        out[name] = np.where(alloc > 0, 100.0 * req / np.where(alloc > 0, alloc, 1.0), 0.0)
    return out


def plot_allocation(results: Sequence, path: str) -> None:
    """One panel per configuration: per-node cpu and memory allocation, nodes sorted by their fuller resource."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(results), 1, figsize=(10, 2.8 * len(results)), squeeze=False, sharex=True)
    for ax, result in zip(axes[:, 0], results, strict=True):
        alloc = node_allocation(result)
        order = np.argsort(-np.maximum(alloc[CPU], alloc[MEMORY]), kind="stable")
        x = np.arange(len(order))
        for name in PLOTTED:
            ax.plot(x, alloc[name][order], label=name, linewidth=1.2)
        m = result.metrics()
        ax.set_title(f"{result.label or 'simulation'}: {m['nodesUsed']} nodes used, "
                     f"{result.unschedulable} pending", fontsize=10)
        ax.set_ylabel("allocated %")
        ax.set_ylim(0, 105)
        ax.grid(alpha=0.3)
        ax.legend(loc="upper right", fontsize=8)
    axes[-1, 0].set_xlabel("nodes, fullest first")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
