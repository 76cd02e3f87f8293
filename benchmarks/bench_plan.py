"""Benchmark `simulate` and `plan` on the files of `../shared/bench/` with its README's commands, in a fresh process.

Each run is timed by bench_cli.py's `timed` (wall seconds from process start to exit, CPU seconds, the
process's own peak RSS); the load average is printed beside each figure (the machine is shared: CPU seconds
are the figures that compare). `plan` is given, as its template, the first node of the file written alone to
a file (the same node type the cluster already has), with the flags of the README's `simulate` (but `--no-replace-victims`, which plan has not):

    .venv/bin/python benchmarks/bench_plan.py --repeat 3                     # every run
    .venv/bin/python benchmarks/bench_plan.py --runs plan plan-workers-2 --repeat 3
    .venv/bin/python benchmarks/bench_plan.py --runs plan --save /tmp/out    # keep each run's -o json

`benchmarks/bench_check.py --size 2000x20000 --runs plan` measures `check --max-nodes-added`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cli import KUBEFIT, WORK, figures, timed  # noqa: E402

BENCH = Path(__file__).resolve().parents[1].parent / "shared" / "bench"
PLAIN = BENCH / "plain-5000x5000.yaml"
DEFAULT = BENCH / "default-profile-1000x10000.json"
FLAGS = ["--no-admission", "-o", "json", "--tie-break", "first", "--kube-version", "1.34"]
VICTIMS = ["--no-replace-victims"]  # simulate's only (plan has no such option)


def template() -> Path:
    """The first Node of the production-shaped file, alone in a JSON file (written once)."""
    path = WORK / "default-profile-template.json"
    if not path.exists():
        WORK.mkdir(parents=True, exist_ok=True)
        items = json.loads(DEFAULT.read_text())["items"]
        path.write_text(json.dumps(next(i for i in items if i["kind"] == "Node")))
    return path


RUNS = {  # name: the kubefit arguments
    "simulate-plain": lambda: ["simulate", "-f", str(PLAIN), *FLAGS, *VICTIMS],
    "simulate-default": lambda: ["simulate", "-f", str(DEFAULT), *FLAGS, *VICTIMS],
    "plan": lambda: ["plan", "-f", str(DEFAULT), "--node-template", str(template()), *FLAGS],
    "plan-workers-2": lambda: ["plan", "-f", str(DEFAULT), "--node-template", str(template()), *FLAGS,
                               "--workers", "2"],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", nargs="+", default=list(RUNS), choices=list(RUNS))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--save", type=Path, help="write each run's -o json to SAVE/<run>.json")
    args = parser.parse_args()
    for name in args.runs:
        rows = []
        for _ in range(args.repeat):
            load = os.getloadavg()[0]
            seconds, cpu, rss, out = timed([*KUBEFIT, *RUNS[name]()])
            rows.append({**figures(seconds, cpu, rss), "load": [round(load, 1), round(os.getloadavg()[0], 1)]})
            print(json.dumps({"run": name, **rows[-1]}), flush=True)
            if args.save:
                args.save.mkdir(parents=True, exist_ok=True)
                (args.save / f"{name}.json").write_bytes(out)
        median = {k: statistics.median(r[k] for r in rows) for k in ("seconds", "cpuSeconds", "peakRssMiB")}
        print(json.dumps({"run": name, "median": median}), flush=True)


if __name__ == "__main__":
    main()
