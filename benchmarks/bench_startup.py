"""Start-up and reading: `kubefit simulate` on the files of ../shared/bench, process start to answer, two trees
alternated in the same minutes (A/B), and where the time of one run goes (phases).

    .venv/bin/python benchmarks/bench_startup.py --ab /work/main . --runs 5
    .venv/bin/python benchmarks/bench_startup.py --phases . --runs 3

`--ab A B`: each tree's `.venv/bin/python -m kubefit.cli simulate FILE --no-admission -o json --tie-break first
--no-replace-victims --kube-version 1.34` (the command of ../shared/bench/README.md), A and B one after the other,
`--runs` times per file after one warm-up run each (bytecode and the dataclasses' cache written, as a user's second
run finds them): CPU seconds (user + system of the child, `os.wait4`), wall seconds, peak RSS, and the 1-minute
load average at each run; medians printed, and every output compared byte for byte between the trees (`-o json` and
the table). PYTHONDONTWRITEBYTECODE is dropped from the children's environment (a user's runs keep bytecode).

`--phases TREE`: in one process of that tree, the CPU seconds of importing what the command imports (the modules
a run of it imported, in their order), `load_scenario`, `prepare_loaded`, the run, `to_dict` and the JSON text.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "shared" / "bench"
FILES = ("plain-5000x5000.yaml", "default-profile-1000x10000.json")
OPTIONS = ["--no-admission", "--tie-break", "first", "--no-replace-victims", "--kube-version", "1.34"]


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def run(tree: Path, args: list[str], out: Path) -> tuple[float, float, float]:
    """One `kubefit` process: (CPU s, wall s, peak RSS MiB), its stdout in `out`."""
    python = tree / ".venv" / "bin" / "python"
    with open(out, "wb") as fh:
        start = time.perf_counter()
        proc = subprocess.Popen([str(python), "-m", "kubefit.cli", *args], cwd=tree, stdout=fh,
                                stderr=subprocess.DEVNULL, env=child_env())
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{tree}: kubefit {' '.join(args)} exited with {proc.returncode}")
    return usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024


def ab(trees: list[Path], runs: int, files: list[str]) -> None:
    work = Path(tempfile.mkdtemp(prefix="kubefit-startup-"))
    for name in files:
        args = ["simulate", "-f", str(BENCH / name), *OPTIONS]
        for i, tree in enumerate(trees):  # warm-up, and the outputs compared (-o json and the table)
            run(tree, [*args, "-o", "json"], work / f"{i}.json")
            run(tree, args, work / f"{i}.txt")
        for suffix in ("json", "txt"):
            same = len({(work / f"{i}.{suffix}").read_bytes() for i in range(len(trees))}) == 1
            print(f"{name}: {suffix} outputs {'identical' if same else 'DIFFER'}")
        figures: dict[int, list[tuple[float, float, float, float]]] = {i: [] for i in range(len(trees))}
        for _ in range(runs):
            for i, tree in enumerate(trees):
                load = os.getloadavg()[0]
                figures[i].append((*run(tree, [*args, "-o", "json"], work / "out.json"), load))
        for i, tree in enumerate(trees):
            cpu, wall, rss, load = (sorted(column) for column in zip(*figures[i], strict=True))
            print(f"  {tree}: CPU median {statistics.median(cpu):.2f} s ({cpu[0]:.2f}–{cpu[-1]:.2f}), wall median "
                  f"{statistics.median(wall):.2f} s ({wall[0]:.2f}–{wall[-1]:.2f}), peak RSS "
                  f"{statistics.median(rss):.0f} MiB, load {load[0]:.1f}–{load[-1]:.1f}")


PHASES = r"""
import gc, importlib, json, os, sys, time
gc.set_threshold(100_000, 50, 100)
path, modules = sys.argv[1], json.loads(sys.argv[2])
c0 = time.process_time()
for name in modules:
    try:
        importlib.import_module(name)
    except Exception:
        pass
c1 = time.process_time()
from kubefit import verbs
from kubefit.manifests.scenario import load_scenario
from kubefit.report.output import _json_bytes
scenario = load_scenario([path], None, admission=False)
c2 = time.process_time()
scenario, prepared, _ = verbs.prepare_loaded(scenario, "simulate", lambda m: None, kube_version="1.34")
c3 = time.process_time()
result = verbs.simulate_prepared(scenario, prepared, tie_break="first", replace_victims=False, warn=lambda m: None)
c4 = time.process_time()
data = result.to_dict()
c5 = time.process_time()
_json_bytes(data)
c6 = time.process_time()
print(json.dumps([c1 - c0, c2 - c1, c3 - c2, c4 - c3, c5 - c4, c6 - c5]))
os._exit(0)
"""

MODULES = r"""
import json, sys
import kubefit.cli as cli
cli._exit_now = lambda code: None
sys.argv = ["kubefit", *sys.argv[1:]]
try:
    cli.run()
except SystemExit:
    pass
sys.stderr.write(json.dumps(list(sys.modules)))
"""


def phases(tree: Path, runs: int, files: list[str]) -> None:
    python = str(tree / ".venv" / "bin" / "python")
    for name in files:
        args = ["simulate", "-f", str(BENCH / name), *OPTIONS, "-o", "json"]
        done = subprocess.run([python, "-c", MODULES, *args], cwd=tree, env=child_env(), capture_output=True,
                              check=True)
        modules = done.stderr.decode().strip().splitlines()[-1]
        rows = [json.loads(subprocess.run([python, "-c", PHASES, str(BENCH / name), modules], cwd=tree,
                                          env=child_env(), capture_output=True, check=True).stdout)
                for _ in range(runs)]
        medians = [statistics.median(column) for column in zip(*rows, strict=True)]
        labels = ("imports", "load", "prepare", "run", "to_dict", "json")
        print(f"{name} ({len(json.loads(modules))} modules), CPU s, median of {runs}: "
              + ", ".join(f"{label} {value:.3f}" for label, value in zip(labels, medians, strict=True))
              + f", total {sum(medians):.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ab", nargs=2, type=Path, metavar=("A", "B"))
    parser.add_argument("--phases", type=Path, metavar="TREE")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--files", nargs="*", default=list(FILES))
    args = parser.parse_args()
    if args.ab:
        ab([p.resolve() for p in args.ab], args.runs, args.files)
    if args.phases:
        phases(args.phases.resolve(), args.runs, args.files)
    if not (args.ab or args.phases):
        parser.print_help(sys.stderr)


if __name__ == "__main__":
    main()
