"""`kubefit.manifests.positions`: the line of an object found again for a finding. JSON is scanned (any size) and
YAML composed; on JSON both methods must agree, object for object (hypothesis, over Lists, arrays, nested lists
and whitespace styles), and on the kubectl fixtures each line is where the object's text starts."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from kubefit.manifests import positions
from kubefit.manifests.positions import Positions

FIXTURES = Path(__file__).resolve().parent / "fixtures"

names = st.text(alphabet="abcxyz-0123", min_size=1, max_size=8)
objects = st.builds(lambda kind, name, ns, extra: {"apiVersion": "v1", "kind": kind, "metadata": {
    "name": name, **({"namespace": ns} if ns else {})}, **extra},
    st.sampled_from(["Pod", "Node", "Deployment"]), names, st.one_of(st.none(), names),
    st.dictionaries(st.sampled_from(["spec", "status"]), st.dictionaries(names, st.integers()), max_size=2))


def documents(items: list[dict]) -> st.SearchStrategy:
    return st.sampled_from([{"apiVersion": "v1", "kind": "List", "items": items}, items,
                            {"apiVersion": "v1", "kind": "List", "items": [
                                {"apiVersion": "v1", "kind": "List", "items": items}]}])


@settings(max_examples=60, deadline=None)
@given(st.lists(objects, min_size=1, max_size=6, unique_by=lambda o: (o["kind"], o["metadata"]["name"],
                                                                        o["metadata"].get("namespace"))),
       st.data(), st.sampled_from([None, 0, 2, 4]))
def test_scanned_json_agrees_with_composed(items, data, indent):
    text = json.dumps(data.draw(documents(items)), indent=indent)
    scanned, composed = positions._scanned(text), positions._composed(text)
    assert scanned is not None and composed is not None
    assert scanned.lines == composed.lines
    assert set(scanned.lines) == {(o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in items}


def test_each_object_of_kubectls_output_at_its_first_line():
    """kubectl-get-nodes-pods.json (a List, 4-space indents: each item's `{` alone on its line) and .yaml (each
    item `- apiVersion: v1`), the same objects: the line found for each is that opening line."""
    items = json.loads((FIXTURES / "kubectl-get-nodes-pods.json").read_text())["items"]
    for name, opening in (("kubectl-get-nodes-pods.json", "{"), ("kubectl-get-nodes-pods.yaml", "- apiVersion: v1")):
        path = FIXTURES / name
        lines = path.read_text().splitlines()
        found = Positions()
        seen = set()
        for item in items:
            meta = item["metadata"]
            line = found.line(str(path), item["kind"], meta["name"], meta.get("namespace"))
            assert line is not None and lines[line - 1].strip() == opening, (item["kind"], meta["name"])
            seen.add(line)
        assert len(seen) == len(items)  # each its own line


def test_field_lines_of_an_expectation_file(tmp_path):
    path = tmp_path / "e.yaml"
    path.write_text("apiVersion: kubefit.io/v1alpha1\nkind: SchedulingExpectations\nassertions:\n  maxPending: 0\n"
                    "  minAllocation:\n    nvidia.com/gpu: 50\n  fullyPlaced:\n  - deployment/a\n  - deployment/b\n")
    found = Positions()
    assert found.field_line(str(path), "assertions.maxPending") == 4
    assert found.field_line(str(path), "assertions.minAllocation.nvidia.com/gpu") == 6
    assert found.field_line(str(path), "assertions.fullyPlaced[1]") == 9
    assert found.field_line(str(path), "assertions.fullyPlaced[1].workload") == 9  # past the file: the nearest


def test_what_cannot_be_read_has_no_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [\n")
    assert Positions().line(str(bad), "Pod", "x") is None
    assert Positions().line("-", "Pod", "x") is None and Positions().line(str(tmp_path / "none"), "Pod", "x") is None
