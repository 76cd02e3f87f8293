"""Shared by the pod group version tests: simulate a list of documents, and each pod's final step."""

from __future__ import annotations

import yaml

from tests_support import run_json


def simulate_docs(tmp_path, capsys, docs, *args) -> dict:
    """`simulate -o json` of `docs` (written to one file), ties broken first, no admission, `args` appended."""
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return run_json(capsys, "simulate", "-f", str(path), "--tie-break", "first", "--no-admission", *args)


def final_steps(out: dict) -> dict:
    """Each pod's last step (retried ones left out), by pod name."""
    return {s["pod"]: s for s in out["steps"] if not s.get("retried")}
