"""Shared helpers of the Karmada modeling tests: golden cases read in place, scenario files, matching."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kubefit.cli import main
from kubefit.k8s import goquantity as gq

GOLDEN = Path(__file__).resolve().parents[3] / "shared" / "golden" / "karmada"
FILES = ("cases.jsonl", "docs-example.jsonl", "spec-checks.jsonl", "upstream-tests.jsonl")


def cases(*ops: str) -> list[dict[str, Any]]:
    """Every case of the golden files whose op is one of `ops`, tagged with its file."""
    out = []
    for name in FILES:
        for line in (GOLDEN / name).read_text(encoding="utf-8").splitlines():
            case = json.loads(line)
            if case["op"] in ops:
                out.append({**case, "_file": name})
    return out


def ids(items: list[dict[str, Any]]) -> list[str]:
    return [f"{c['_file'].split('.')[0]}:{c['id']}" for c in items]


def _object(obj: dict[str, Any], kind: str, api_version: str, default_name: str | None) -> dict[str, Any]:
    obj = json.loads(json.dumps(obj))
    obj["kind"] = kind
    obj.setdefault("apiVersion", api_version)
    meta = obj.setdefault("metadata", {}) or {}
    obj["metadata"] = meta
    if default_name is not None and not meta.get("name"):
        meta["name"] = default_name
    return obj


def scenario_file(tmp_path: Path, case: dict[str, Any], *, cluster_name: str | None = "member") -> str:
    """The case's cluster, nodes and pods as one JSON `kind: List` scenario file."""
    items = []
    if case.get("cluster") is not None:
        items.append(_object(case["cluster"], "Cluster", "cluster.karmada.io/v1alpha1", cluster_name))
    items += [_object(n, "Node", "v1", f"node-{i}") for i, n in enumerate(case.get("nodes") or [])]
    items += [_object(p, "Pod", "v1", f"pod-{i}") for i, p in enumerate(case.get("pods") or [])]
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}), encoding="utf-8")
    return str(path)


def run_json(capsys, argv: list[str]) -> tuple[int, Any, str]:
    """Run `kubefit argv -o json` in-process → (exit code, parsed stdout, stderr)."""
    rc = main([*argv, "-o", "json"])
    out = capsys.readouterr()
    return rc, (json.loads(out.out) if out.out.strip() else None), out.err


def by_value(obj: Any) -> Any:
    """Quantity strings → exact nanos, nulls dropped from mappings (Go omitempty), recursively."""
    if isinstance(obj, dict):
        return {k: by_value(v) for k, v in obj.items() if v is not None}
    if isinstance(obj, list):
        return [by_value(v) for v in obj]
    if isinstance(obj, str):
        try:
            return gq.parse(obj).nanos()
        except Exception:  # not a quantity: a name or a message
            return obj
    return obj


def assert_subset(expect: dict[str, Any], got: dict[str, Any], case: dict[str, Any]) -> None:
    """Peer matching: keys of `expect` (+ `<key>Contains`, `<key>NonEmpty`, `expectKeysExact`, anyOf)."""
    for key, want in expect.items():
        if key.endswith("Contains"):
            assert want in str(got.get(key[: -len("Contains")])), key
        elif key.endswith("NonEmpty"):
            assert bool(got.get(key[: -len("NonEmpty")])) == want, key
        elif key.endswith("Len"):
            assert len(got.get(key[: -len("Len")]) or []) == want, key
        else:
            assert by_value(got.get(key)) == by_value(want), key
    if "anyOf" in case:
        assert any(all(by_value(got.get(k)) == by_value(v) for k, v in alt.items()) for alt in case["anyOf"])
