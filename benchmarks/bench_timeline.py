"""Benchmark `simulate --timeline` on the Alibaba GPU trace (default workload), end to end.

The trace is imported from its CSVs (1,213 GPU nodes, 8,152 pods with creation and deletion times),
decoded, and replayed in time through the profile of `examples/alibaba/scheduler-config.yaml`: pods
arrive, run for their recorded lifetime and leave; waiting pods are retried when capacity frees.
Printed: seconds of the import and of the replay, pods/s end to end (import + replay), completions,
peak resident memory.  `--nodes N` keeps only the first N nodes, so pods wait and are retried.

    .venv/bin/python benchmarks/bench_timeline.py [--nodes 1213] [--repeat 3]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT.parent / "shared" / "traces" / "alibaba-gpu-v2023"
CONFIG = ROOT / "examples" / "alibaba" / "scheduler-config.yaml"


def run(trace_dir: Path, nodes: int | None) -> dict:
    from kubefit.manifests.documents import Document
    from kubefit.manifests.importers.alibaba import import_alibaba_gpu
    from kubefit.manifests.scenario import add_document, load_scenario
    from kubefit.scheduler.scenario import prepare
    from kubefit.scheduler.timeline import timeline

    t0 = time.perf_counter()
    trace = import_alibaba_gpu(trace_dir / "openb_node_list_gpu_node.csv", trace_dir / "openb_pod_list_default.csv")
    scenario = load_scenario([CONFIG])
    for i, body in enumerate([*trace.nodes[:nodes], *trace.pods]):
        add_document(scenario, Document(body, "<trace>", i))
    prepared = prepare(scenario)
    imported = time.perf_counter() - t0
    t0 = time.perf_counter()
    result = timeline(prepared.state, prepared.config, scenario.pending_pods, tie_break="first")
    replay = time.perf_counter() - t0
    data = result.to_dict()
    return {"nodes": len(scenario.nodes), "pods": len(result.runs), "importSeconds": round(imported, 2),
            "replaySeconds": round(replay, 2), "podsPerSecondEndToEnd": round(len(result.runs) / (imported + replay)),
            "scheduled": data["scheduled"], "neverScheduled": data["unschedulable"], "completed": data["completed"],
            "attempts": int(result.attempts.sum()), "samples": len(result.samples),
            "peakRssMiB": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace-dir", type=Path, default=TRACE)
    parser.add_argument("--nodes", type=int, default=None, help="keep only the first N nodes")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args(argv)
    for _ in range(max(args.repeat, 1)):
        out = run(args.trace_dir, args.nodes)
        print(" ".join(f"{k}={v}" for k, v in out.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
