"""Every `schedule` case of the Karmada golden files through `kubefit schedule -f … -o json`.

A case becomes its clusters plus a ResourceBinding with the case's spec and status; the case's
cluster scores go in as `--score NAME=N` (the op takes scores as input, absent = 0 for every cluster, so
they replace the Score plugins such as ClusterLocality). Exit code 1 exactly when scheduling fails.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubefit.cli import main

GOLDEN = Path(__file__).resolve().parents[3] / "shared" / "golden" / "karmada"
FILES = ("cases.jsonl", "docs-example.jsonl", "spec-checks.jsonl", "upstream-tests.jsonl")
CASES = [c for name in FILES for c in map(json.loads, (GOLDEN / name).read_text().splitlines())
         if c["op"] == "schedule"]


def write_binding_scenario(tmp_path: Path, clusters: list[dict], spec: dict, status: dict | None) -> str:
    items = [*clusters, {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
                         "metadata": {"name": "rb", "namespace": "default"}, "spec": spec, "status": status or {}}]
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return str(path)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_schedule_case(case: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_binding_scenario(tmp_path, case["clusters"], case["spec"], case.get("status"))
    given = case.get("scores") or {c["metadata"]["name"]: 0 for c in case["clusters"]}
    scores = [a for n, s in given.items() for a in ("--score", f"{n}={s}")]
    rc = main(["schedule", "-f", path, "-o", "json", *scores])
    out = capsys.readouterr()
    data = json.loads(out.out)
    expect = case["expect"]
    assert rc == (1 if expect["hasError"] else 0), out.err
    assert data["candidates"] == expect["candidates"]
    assert data["clusters"] == expect["clusters"]
    assert data["error"] == expect["error"]


def test_schedule_without_binding_is_input_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    clusters = CASES[0]["clusters"]
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": clusters}))
    assert main(["schedule", "-f", str(path), "-o", "json"]) == 2
    assert "no ResourceBinding" in capsys.readouterr().err


def test_schedule_from_deployment_and_policy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A Deployment + PropagationPolicy becomes the binding Karmada's detector would build."""
    doc = next(c for c in CASES if c["id"] == "doc-custom-3C-20Gi-divided-20")
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
                  "spec": {"replicas": doc["spec"]["replicas"], "template": {"spec": {"containers": [
                      {"name": "c", "resources": {"requests": doc["spec"]["replicaRequirements"]["resourceRequest"]}}]}}}}
    policy = {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
              "metadata": {"name": "pp", "namespace": "default"},
              "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}],
                       "placement": doc["spec"]["placement"]}}
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [*doc["clusters"], deployment, policy]}))
    assert main(["schedule", "-f", str(path), "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["clusters"] == doc["expect"]["clusters"]
