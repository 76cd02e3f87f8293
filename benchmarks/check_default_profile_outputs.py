"""Run bench_default_profile.py's scenarios under this tree and under an older commit: identical outputs?

The older commit is unpacked with `git archive` into a temporary folder (with this tree's compiled row
kernels copied beside its sources when present, so both run at full speed) and run with `PYTHONPATH`
pointing at it; both runs are timed in turn, in the same process, and their `simulate -o json --tie-break
first` outputs compared byte for byte. Exit 1 when any output differs.

    .venv/bin/python benchmarks/check_default_profile_outputs.py --rev main --sizes 1000x10000
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_cli import ROOT, WORK, figures, timed
from bench_default_profile import QUEUES, simulate_command, write_scenario


def unpack(rev: str, into: Path) -> Path:
    """The `src` folder of commit `rev` unpacked under `into` (this tree's compiled kernels copied in)."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "src"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    for built in (ROOT / "src").rglob("*.so"):
        target = into / built.relative_to(ROOT)
        if target.parent.exists():
            shutil.copy2(built, target)
    return into / "src"


def timed_with(command: list[str], pythonpath: Path | None) -> tuple[float, float, float, bytes]:
    """`timed` with `PYTHONPATH` set to an older tree's sources (None: this tree)."""
    if pythonpath is None:
        return timed(command)
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(pythonpath)
    try:
        return timed(command)
    finally:
        if saved is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = saved


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", required=True, help="the commit to compare with (e.g. main, HEAD~3)")
    parser.add_argument("--sizes", nargs="+", default=["1000x10000"], help="NODESxPODS")
    parser.add_argument("--queues", nargs="+", default=list(QUEUES), choices=QUEUES)
    args = parser.parse_args()
    differ = 0
    with tempfile.TemporaryDirectory() as tmp:
        old = unpack(args.rev, Path(tmp))
        for size in args.sizes:
            n, p = (int(x) for x in size.split("x"))
            for queue in args.queues:
                command = simulate_command(write_scenario(queue, n, p, WORK))
                runs = {label: timed_with(command, path) for label, path in (("before", old), ("after", None))}
                digests = {label: hashlib.sha256(run[3]).hexdigest()[:16] for label, run in runs.items()}
                same = digests["before"] == digests["after"]
                differ += not same
                print(json.dumps({"queue": queue, "nodes": n, "pods": p, "identical": same, "sha256": digests,
                                  "bytes": len(runs["after"][3])}
                                 | {label: figures(*run[:3], p) for label, run in runs.items()}), flush=True)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
