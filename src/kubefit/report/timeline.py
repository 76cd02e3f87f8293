"""`simulate --timeline` rendered: metrics over time as a table and a plot (render only)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubefit.report.output import new_table

if TYPE_CHECKING:
    from rich.console import Console

TABLE_ROWS = 20  # the table shows this many evenly spaced samples (JSON has them all)


def _rows(n: int, wanted: int = TABLE_ROWS) -> list[int]:
    if n <= wanted:
        return list(range(n))
    return sorted({round(k * (n - 1) / (wanted - 1)) for k in range(wanted)})


def timeline_table(console: Console, data: dict) -> None:
    """Samples of allocation %, pending, running and stranded capacity; then the totals."""
    series = data["series"]
    resources = list(series["allocation"])
    stranded = [r for r in series["stranded"] if any(series["stranded"][r])]
    t = new_table("Timeline")
    for col in ("time (s)", "running", "pending", *(f"{r} %" for r in resources), *(f"stranded {r}" for r in stranded)):
        t.add_column(col, justify="right")
    for i in _rows(len(series["time"])):
        t.add_row(str(series["time"][i]), str(series["running"][i]), str(series["pending"][i]),
                  *(f"{series['allocation'][r][i]:.2f}" for r in resources),
                  *(str(series["stranded"][r][i]) for r in stranded))
    console.print(t)
    created = f", never created [bold]{data['notCreated']}[/bold]" if data.get("notCreated") else ""
    deleted = f", deleted with their owner [bold]{data['deleted']}[/bold]" if data.get("deleted") else ""
    replaced = f", replaced [bold]{len(data['replacedBy'])}[/bold]" if data.get("replacedBy") else ""
    console.print(f"scheduled [bold]{data['scheduled']}[/bold], never scheduled [bold]{data['unschedulable']}"
                  f"[/bold]{created}, completed [bold]{data['completed']}[/bold]{replaced}{deleted}")


def plot_timeline(data: dict, path: str) -> None:
    """Allocation % per resource and pending pods over time (two panels, one time axis), drawn as steps:
    a value holds until the next event, as on the report's page."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = data["series"]
    hours = [t / 3600 for t in series["time"]]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 5), sharex=True, height_ratios=(2, 1))
    for name, values in series["allocation"].items():
        if name != "pods":
            top.plot(hours, values, label=name, linewidth=1.2, drawstyle="steps-post")
    top.set_ylabel("allocated %")
    top.set_ylim(0, 105)
    top.grid(alpha=0.3)
    top.legend(loc="upper right", fontsize=8)
    bottom.plot(hours, series["pending"], color="tab:red", linewidth=1.2, label="pending", drawstyle="steps-post")
    bottom.plot(hours, series["running"], color="tab:gray", linewidth=1.0, label="running", drawstyle="steps-post")
    bottom.set_ylabel("pods")
    bottom.set_xlabel("time (hours)")
    bottom.grid(alpha=0.3)
    bottom.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
