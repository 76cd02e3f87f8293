"""Benchmark the HTML report (`--report`, `kubefit.report.write_html`): write time, file size, peak memory.

The case is generated here, as `bench_simulate.py` makes it (seeded node types over three zones, mixed
pod shapes, MostAllocated + BalancedAllocation, every node evaluated); the simulation is not timed, the
report is: the result's `-o json` dict (`to_dict`, which the command has already made for its output)
and the page written from it, separately.

    .venv/bin/python benchmarks/bench_report.py                        # 5,000 nodes x 150,000 pods
    .venv/bin/python benchmarks/bench_report.py --nodes 1000 --pods 2000 --out /tmp/r.html

Memory is bounded (`resource.RLIMIT_AS`, 8 GiB by default) so a mistake cannot push the machine into swap.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_simulate import config, synthetic_nodes, synthetic_pods  # noqa: E402

from kubefit.report import render_html  # noqa: E402
from kubefit.scheduler.simulate import simulate  # noqa: E402
from kubefit.scheduler.state import compile_state  # noqa: E402


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=150_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", help="where to write the page (default: a temporary file, removed)")
    parser.add_argument("--memory-gib", type=float, default=8.0, help="address-space limit of this process")
    args = parser.parse_args(argv)
    limit = int(args.memory_gib * (1 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    rng = np.random.default_rng(args.seed)
    nodes, pods = synthetic_nodes(args.nodes, rng), synthetic_pods(args.pods, rng)
    result = simulate(compile_state(nodes, pods), config(), pods, tie_break="random", seed=args.seed)
    result.label = "scenario"

    wall, cpu = time.perf_counter(), _cpu()
    data = result.to_dict()
    dict_wall, dict_cpu = time.perf_counter() - wall, _cpu() - cpu
    wall, cpu = time.perf_counter(), _cpu()
    out = Path(args.out) if args.out else Path(tempfile.mkstemp(suffix=".html")[1])
    out.write_text(render_html(result, data=data), encoding="utf-8")
    page_wall, page_cpu = time.perf_counter() - wall, _cpu() - cpu
    size = out.stat().st_size
    if not args.out:
        os.unlink(out)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"nodes={args.nodes} pods={args.pods} scheduled={result.scheduled} pending={result.unschedulable} "
          f"to_dict={dict_wall:.2f}s(cpu {dict_cpu:.2f}s) page={page_wall:.2f}s(cpu {page_cpu:.2f}s) "
          f"total={dict_wall + page_wall:.2f}s size={size / 1e6:.2f}MB peakRss={peak:.0f}MiB", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
