"""Rerun benchmarks/real-installs.md's table: public install manifests through `kubefit … -o json`, one line each.

Each case of `benchmarks/real-installs/cases.txt` (`name|kubefit arguments`) runs in a fresh process with
`-o json` and is summed up as the table does: `simulate` as "N scheduled, M pending[, K not created]",
`capacity` as "N more fit", `plan` as "add {...}, N scheduled", a refusal as its `error:` line. Arguments
starting with `@` name this folder's fixtures (`@kind3.yaml`, `@own/pre.yaml`), `@examples/` the repository's
`examples/`, `@before/` a checkout of the "before" commit; every other path is relative to `--manifests`, the
folder the public manifests were downloaded into (their repositories, paths and commits are in
real-installs.md; they are not vendored). With `--before SRC` (a checkout's root) each case also runs with
that checkout's `src` first on `PYTHONPATH`, printed beside this tree's answer.

    .venv/bin/python benchmarks/real_installs.py --manifests /tmp/ri
    .venv/bin/python benchmarks/real_installs.py --manifests /tmp/ri --before /tmp/ri-main -k "Argo CD"
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "real-installs"
REPO = HERE.parent


def resolve(arg: str, before: Path | None) -> str | None:
    """One argument with its `@` prefix resolved (None: it needs a `--before` checkout that was not given)."""
    if arg.startswith("@before/"):
        return None if before is None else str(before / arg.removeprefix("@before/"))
    if arg.startswith("@examples/"):
        return str(REPO / "examples" / arg.removeprefix("@examples/"))
    if arg.startswith("@"):
        return str(FIXTURES / arg[1:])
    return arg


def run(args: list[str], manifests: Path, src: Path | None) -> tuple[int, dict | None, str]:
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    p = subprocess.run([sys.executable, "-m", "kubefit.cli", *args, "-o", "json"], capture_output=True,
                       text=True, env=env, cwd=manifests, timeout=900)
    try:
        out = json.loads(p.stdout)
    except ValueError:
        out = None
    return p.returncode, out, p.stderr


def summary(rc: int, out: dict | None, err: str) -> str:
    """The table's words for one run."""
    if rc >= 2 or out is None:
        lines = [line for line in err.splitlines() if line.startswith("error")]
        return f"exit {rc}: {(lines[0] if lines else err.strip()[-200:])[:160]}"
    if "count" in out:
        return f"{out['count']} more fit"
    if "add" in out:
        return f"add {out['add']}, {out['scheduled']} scheduled"
    not_created = sum(1 for step in out["steps"] if step.get("notCreated"))
    text = f"{out['scheduled']} scheduled, {out['unschedulable']} pending"
    return text + (f", {not_created} not created" if not_created else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--manifests", type=Path, required=True, help="the folder the public manifests are in")
    parser.add_argument("--cases", type=Path, default=FIXTURES / "cases.txt")
    parser.add_argument("--before", type=Path, help="a checkout of the 'before' commit (its root)")
    parser.add_argument("-k", default="", help="only the cases whose name contains this")
    opts = parser.parse_args()
    for line in opts.cases.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, _, text = line.partition("|")
        if opts.k not in name:
            continue
        args = [resolve(a, opts.before) for a in text.split()]
        if None in args:
            print(f"{name}|{text}|(needs --before)", flush=True)
            continue
        after = summary(*run(args, opts.manifests, None))  # type: ignore[arg-type]
        if opts.before is None:
            print(f"{name}|{text}|{after}", flush=True)
        else:
            before = summary(*run(args, opts.manifests, opts.before / "src"))  # type: ignore[arg-type]
            print(f"{name}|{text}|{before}|{after}", flush=True)


if __name__ == "__main__":
    main()
