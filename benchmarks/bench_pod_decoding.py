"""CPU time of decoding a snapshot's pods: fastpod (`FastPods.decode`, the stream's road) and decode_pod
(the reference road, with the scenario's spec memo), each given another checkout's `src` to compare.

    .venv/bin/python benchmarks/bench_pod_decoding.py SNAPSHOT.json [--pods 50000] [--runs 5] [--base DIR]

SNAPSHOT is a `kubectl get pods -o json` list (e.g. bench_scale.py's); `managedFields` are dropped first, as
the compiled reader drops them. With `--base DIR` (another worktree), the same pods are decoded by that
checkout's modules too, alternating runs in one process, so both see the same machine load. The figure is
the least CPU time (user + sys) over the runs; the garbage collector is frozen after loading (else its passes
over the loaded pods dominate and swing).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import resource
import sys
from pathlib import Path


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _roads(src: Path | None) -> dict[str, object]:
    """fastpod's FastPods and load's decode_pod of the checkout at `src` (None: the installed kubefit)."""
    if src is not None:
        for name in [m for m in sys.modules if m == "kubefit" or m.startswith("kubefit.")]:
            del sys.modules[name]
        sys.path.insert(0, str(src))
    fastpod = importlib.import_module("kubefit.manifests.fastpod")
    load = importlib.import_module("kubefit.manifests.load")
    documents = importlib.import_module("kubefit.manifests.documents")
    fastpod.FastPods()  # msgspec resolves the structs' annotations now, while these modules are the imported ones
    if src is not None:
        sys.path.remove(str(src))
        for name in [m for m in sys.modules if m == "kubefit" or m.startswith("kubefit.")]:
            del sys.modules[name]
    return {"FastPods": fastpod.FastPods, "decode_pod": load.decode_pod, "Document": documents.Document}


def _time_fast(road: dict, blobs: list[bytes]) -> float:
    pods = road["FastPods"]()
    start = _cpu()
    for i, blob in enumerate(blobs):
        if pods.decode(blob, "snapshot.json", i) is None:
            raise SystemExit(f"item {i}: fastpod left it to decode_pod; the figure would mix the roads")
    return _cpu() - start


def _time_reference(road: dict, bodies: list[dict]) -> float:
    memo: dict = {}
    warnings: list[str] = []
    start = _cpu()
    for i, body in enumerate(bodies):
        road["decode_pod"](road["Document"](body, "snapshot.json", i), warnings, memo)
    return _cpu() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("snapshot", type=Path)
    parser.add_argument("--pods", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--base", type=Path, help="another checkout (its src/ is imported for the comparison)")
    args = parser.parse_args()
    import orjson

    items = json.loads(args.snapshot.read_bytes())["items"]
    bodies = [i for i in items if i.get("kind") == "Pod"][:args.pods]
    del items
    for body in bodies:
        body["metadata"].pop("managedFields", None)
    blobs = [orjson.dumps(b) for b in bodies]
    roads = {"this": _roads(None)}
    if args.base is not None:
        roads["base"] = _roads(args.base / "src")
    gc.collect()
    gc.freeze()
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.runs):
        for name, road in roads.items():
            times.setdefault((name, "fastpod"), []).append(_time_fast(road, blobs))
            times.setdefault((name, "decode_pod"), []).append(_time_reference(road, bodies))
    print(f"{len(bodies)} pods, {args.runs} runs, least CPU s:")
    for (name, what), values in sorted(times.items(), key=lambda kv: kv[0][1]):
        print(f"  {what:10} {name:4} {min(values):7.3f}  ({' '.join(f'{v:.3f}' for v in values)})")
    if "base" in roads:
        for what in ("fastpod", "decode_pod"):
            ratio = min(times[("this", what)]) / min(times[("base", what)])
            print(f"  {what}: {100 * (ratio - 1):+.1f} % against the base")


if __name__ == "__main__":
    main()
