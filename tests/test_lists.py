"""kubectl's flattening of lists (issue 22, defect 2): `List`, every `<Kind>List`, any object with `items`.

Expectations from the sources kubectl runs: apimachinery's `unstructuredJSONScheme.decode` makes any
object with an `items` field an `UnstructuredList` and `decodeToList` gives an item without kind and
apiVersion the list's kind less `List` and its apiVersion; cli-runtime's `FlattenListVisitor` visits the
objects of nested lists after the items around them (`itemsToProcess` grows at its end).
"""

from __future__ import annotations

import json

import pytest
import yaml

from kubefit.errors import InputError
from kubefit.manifests.documents import parse_documents
from kubefit.manifests.kinds import skipped_note
from kubefit.manifests.scenario import load_scenario


def node(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def pod(name: str, cpu: str = "1") -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}}


def configmap(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}}


def test_a_typed_list_is_flattened_like_a_list(tmp_path):
    """A ConfigMapList and a RoleBindingList (a monitoring stack's manifests hold them): their items are
    objects of their own, skipped as ConfigMaps and RoleBindings, not refused as unknown kinds."""
    path = tmp_path / "lists.yaml"
    path.write_text(yaml.safe_dump_all([
        {"apiVersion": "v1", "kind": "ConfigMapList", "items": [configmap("a"), configmap("b")]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBindingList",
         "items": [{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "r"}}]}]))
    scenario = load_scenario([path])
    assert [d.kind for d in scenario.skipped] == ["ConfigMap", "ConfigMap", "RoleBinding"]
    assert skipped_note(scenario.skipped).startswith("skipped 3 object(s) that place no pod: ConfigMap (2), RoleBinding (1)")


def test_items_of_a_typed_list_take_its_kind_and_apiversion():
    """A PodList as the API server returns it: items carry neither kind nor apiVersion (decodeToList)."""
    text = json.dumps({"apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "7"},
                       "items": [{k: v for k, v in pod(n).items() if k not in ("kind", "apiVersion")} for n in "ab"]})
    docs = parse_documents(text, "pods.json")
    assert [(d.kind, d.body["apiVersion"], d.name) for d in docs] == [("Pod", "v1", "a"), ("Pod", "v1", "b")]


def test_nested_lists_come_after_the_items_around_them():
    """FlattenListVisitor: [A, List[B, C], D] is visited A, D, B, C."""
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        pod("a"), {"apiVersion": "v1", "kind": "PodList", "items": [pod("b"), pod("c")]}, pod("d")]})
    assert [d.name for d in parse_documents(text, "l.json")] == ["a", "d", "b", "c"]
    deeper = json.dumps({"apiVersion": "v1", "kind": "List", "items": [  # breadth first: a, b, then x
        {"kind": "List", "items": [pod("a"), {"kind": "List", "items": [pod("x")]}]},
        {"kind": "List", "items": [pod("b")]}]})
    assert [d.name for d in parse_documents(deeper, "l.json")] == ["a", "b", "x"]


def test_any_object_with_items_is_a_list_and_null_items_list_nothing():
    text = json.dumps({"apiVersion": "example.com/v1", "kind": "Bundle", "items": [pod("a")]})
    assert [d.kind for d in parse_documents(text, "b.json")] == ["Pod"]
    assert parse_documents(json.dumps({"apiVersion": "v1", "kind": "ConfigMapList", "items": None}), "n.json") == []


def test_queue_order_follows_the_flattening(tmp_path):
    """Pending pods of equal arrival keep document order: the flattened one, nested lists last."""
    path = tmp_path / "q.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        node("n1"), {"apiVersion": "v1", "kind": "List", "items": [pod("late")]}, pod("early")]}))
    assert [p.name for p in load_scenario([path]).pending_pods] == ["early", "late"]


@pytest.mark.parametrize(("body", "where"), [
    ({"apiVersion": "v1", "kind": "ConfigMapList", "items": 5}, "ConfigMapList #1: items: must be a list"),
    ({"apiVersion": "v1", "kind": "List", "items": [{"kind": "List", "items": [3]}]},
     "List #1: items[0].items[0]: must be an object"),
])
def test_bad_items_are_refused_by_name(body, where):
    with pytest.raises(InputError, match=where.replace("[", r"\[").replace("]", r"\]")):
        parse_documents(json.dumps(body), "b.json")
