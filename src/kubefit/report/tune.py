"""`kubefit tune` for people: the tuned configuration against the baselines, the best trials, the hold-out,
and the configuration as a v1 YAML file (render only: every number comes computed in the result)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import yaml

from kubefit.report.output import new_table

if TYPE_CHECKING:
    from rich.console import Console

BEST_TRIALS_SHOWN = 5


def _value(data: dict[str, Any], trial: dict[str, Any]) -> str:
    """A trial's value, with its spread over the seeds when there are several."""
    spread = trial.get("spread")
    return f"{trial['value']} ± {spread}" if spread else str(trial["value"])


def tune_table(console: Console, data: dict[str, Any], written: str | None = None) -> None:
    """Baselines beside the tuned configuration, the best trials, the hold-out, how long it took and where
    the file went."""
    search = "grid" if data["search"] == "grid" else f"TPE, seed {data['seed']}"
    seeds = f", {data['repeats']} seeds a trial" if data["repeats"] > 1 else ""
    console.print(f"objective [bold]{data['objective']}[/bold] ({data['unit']}, lower is better): "
                  f"{len(data['trials'])} trials ({search}, batches of {data['batch']}{seeds})")
    trials = data["trials"]
    extra = [(key, title) for key, title in (("pending", "pending"), ("nodesUsed", "nodes used"))
             if not (key == "pending" and data["objective"] == "pending")
             and not (key == "nodesUsed" and data["objective"] == "nodes")]
    t = new_table("Baselines and the tuned configuration")
    for col in ("configuration", data["unit"], *(title for _, title in extra), "trial"):
        t.add_column(col, justify="left" if col == "configuration" else "right")
    best = trials[data["best"]["trial"]]
    for name, trial in [*((n, trials[i]) for n, i in data["baselineTrials"].items()), ("[bold]tuned[/bold]", best)]:
        t.add_row(name, _value(data, trial), *(str(trial[key]) for key, _ in extra), str(trial["number"]))
    console.print(t)
    console.print(f"tuned: {data['best']['summary']}")
    ranked = sorted((tr for tr in trials if "duplicateOf" not in tr),
                    key=lambda tr: (tr is not best, tr["value"], tr["number"]))
    t = new_table(f"Best {min(BEST_TRIALS_SHOWN, len(ranked))} trials")
    for col in ("trial", data["unit"], "configuration", "seconds"):
        t.add_column(col, justify="left" if col == "configuration" else "right")
    for tr in ranked[:BEST_TRIALS_SHOWN]:
        t.add_row(str(tr["number"]), _value(data, tr), tr["summary"], f"{tr['seconds']:.3f}")
    console.print(t)
    held = data.get("validation")
    if held:
        t = new_table(f"Hold-out: {', '.join(held['files'])}")
        for col in ("configuration", data["unit"], "pending"):
            t.add_column(col, justify="left" if col == "configuration" else "right")
        for name, value in held["baselines"].items():
            t.add_row(name, str(value), str(held["pending"][name]))
        t.add_row("[bold]tuned[/bold]", f"[bold]{held['best']}[/bold]", str(held["pending"]["best"]))
        console.print(t)
    simulated = sum(1 for tr in trials if "duplicateOf" not in tr)
    console.print(f"{simulated} configurations simulated on {data['workers']} worker(s) in {data['seconds']} s")
    if written:
        console.print(f"wrote the tuned configuration to {written} (kubefit simulate -f {written} -f … runs it)")


def config_yaml(data: dict[str, Any]) -> str:
    """The tuned configuration as a v1 YAML file, headed by what it measured against the baselines."""
    baselines = ", ".join(f"{name} {value}" for name, value in data["baselines"].items())
    head = (f"# kubefit tune: objective {data['objective']} ({data['unit']}) {data['best']['value']} "
            f"(trial {data['best']['trial']} of {len(data['trials'])}, {data['tieBreak']} tie-break, seed {data['seed']}); "
            f"baselines: {baselines}\n")
    return head + yaml.safe_dump(data["best"]["config"], sort_keys=False, default_flow_style=False)
