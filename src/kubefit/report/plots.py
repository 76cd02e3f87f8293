"""Plots of simulation results (matplotlib, Agg backend: files only, no display)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kubefit.k8s.resourcenames import CPU, MEMORY, is_scalar

PLOTTED = (CPU, MEMORY)  # always drawn; scalar resources some node has (e.g. nvidia.com/gpu) are added


def plotted_resources(state) -> list[str]:
    """cpu, memory, then each scalar resource (extended, hugepages) that some node offers."""
    extra = [r for r, col in state.index.items()
             if r not in PLOTTED and is_scalar(r) and (state.allocatable[:, col] > 0).any()]
    return [*PLOTTED, *sorted(extra)]


def node_allocation(result) -> dict[str, np.ndarray]:
    """Per plotted resource, requested / allocatable in percent for every node (NaN where the node has none
    of a scalar resource, so its line has a gap rather than a misleading 0)."""
    state = result.state
    out = {}
    for name in plotted_resources(state):
        col = state.index[name]
        alloc = state.allocatable[:, col].astype(np.float64)
        req = state.requested[:, col].astype(np.float64)
        empty = 0.0 if name in PLOTTED else np.nan
        out[name] = np.where(alloc > 0, 100.0 * req / np.where(alloc > 0, alloc, 1.0), empty)
    return out


def plot_allocation(results: Sequence, path: str) -> None:
    """One panel per configuration: per-node allocation of cpu, memory and any extended resource (e.g. GPUs),
    nodes sorted by the fuller of cpu and memory."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(results), 1, figsize=(10, 2.8 * len(results)), squeeze=False, sharex=True)
    for ax, result in zip(axes[:, 0], results, strict=True):
        alloc = node_allocation(result)
        order = np.argsort(-np.maximum(alloc[CPU], alloc[MEMORY]), kind="stable")
        x = np.arange(len(order))
        for name, values in alloc.items():
            ax.plot(x, values[order], label=name, linewidth=1.2)
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
