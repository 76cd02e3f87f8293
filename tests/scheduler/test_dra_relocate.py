"""Reserve reuses Filter's allocation: the one found for the same claims on a node with an equal offer is moved
onto the bound node's devices (`allocator.relocate`). It must be exactly what the allocator finds there.

A v1.36 simulation over nodes whose devices differ only by names and by attribute values no selector reads
(a GPU's UUID), with partitionable GPUs (counters shared by a whole GPU and its partitions), a matchAttribute
on the parent GPU, firstAvailable, and devices with consumable capacity (shares, whose ids name the claim); the
same simulation with every allocation made afresh on the bound node must end with the same claims.
"""

from __future__ import annotations

import json
import random

import pytest

from kubefit.k8s import version
from kubefit.manifests.documents import parse_documents
from kubefit.manifests.load import Scenario
from kubefit.manifests.scenario import add_document
from kubefit.scheduler.dra import state as dra_state
from kubefit.scheduler.dra.allocator import choose_rules, relocate, version_features
from kubefit.scheduler.scenario import prepare
from kubefit.scheduler.simulate import simulate

V1 = "resource.k8s.io/v1"
DRIVER = "gpu.example.com"
NIC = "nic.example.com"


def _class(name: str, expression: str) -> dict:
    return {"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": expression}}]}}


def _node(name: str) -> list[dict]:
    gpus, sets = [], []
    for g in range(2):
        sets.append({"name": f"gpu-{g}-cs", "counters": {"slices": {"value": "4"}}})
        base = {"parent": {"string": f"{name}-gpu-{g}"}, "uuid": {"string": f"GPU-{name}-{g}"}}
        gpus.append({"name": f"gpu-{g}", "attributes": {**base, "type": {"string": "gpu"}},
                     "consumesCounters": [{"counterSet": f"gpu-{g}-cs", "counters": {"slices": {"value": "4"}}}]})
        gpus += [{"name": f"gpu-{g}-mig-{k}", "attributes": {**base, "type": {"string": "mig"}},
                  "consumesCounters": [{"counterSet": f"gpu-{g}-cs", "counters": {"slices": {"value": "1"}}}]}
                 for k in range(4)]
    nic = {"name": "nic-0", "allowMultipleAllocations": True, "capacity": {"bandwidth": {
        "value": "10G", "requestPolicy": {"default": "1G", "validRange": {"min": "1G", "step": "1G"}}}}}
    spec = {"nodeName": name}
    return [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
             "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110"}}},
            {"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": f"{name}-counters"},
             "spec": {**spec, "driver": DRIVER, "pool": {"name": name, "resourceSliceCount": 2},
                      "sharedCounters": sets}},
            {"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": f"{name}-gpus"},
             "spec": {**spec, "driver": DRIVER, "pool": {"name": name, "resourceSliceCount": 2}, "devices": gpus}},
            {"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": f"{name}-nics"},
             "spec": {**spec, "driver": NIC, "pool": {"name": name, "resourceSliceCount": 1}, "devices": [nic]}}]


def _exactly(name: str, cls: str, count: int = 1, **extra) -> dict:
    return {"name": name, "exactly": {"deviceClassName": cls, "allocationMode": "ExactCount", "count": count, **extra}}


SPECS = {
    "mig": {"requests": [_exactly("mig", "mig")]},
    "whole": {"requests": [_exactly("gpu", "gpu")]},
    "two-migs": {"requests": [_exactly("migs", "mig", 2)], "constraints": [{"matchAttribute": f"{DRIVER}/parent"}]},
    "whole-or-migs": {"requests": [{"name": "gpu", "firstAvailable": [
        {"name": "whole", "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1},
        {"name": "migs", "deviceClassName": "mig", "allocationMode": "ExactCount", "count": 2}]}]},
    "mig-and-bandwidth": {"requests": [_exactly("mig", "mig"), _exactly("net", "nic", capacity={"requests": {
        "bandwidth": "3G"}})]},
}


def _docs(nodes: int, pods: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    expr = f'device.driver == "{DRIVER}" && device.attributes["{DRIVER}"].type == '
    docs = [_class("gpu", expr + '"gpu"'), _class("mig", expr + '"mig"'), _class("nic", f'device.driver == "{NIC}"')]
    docs += [{"apiVersion": V1, "kind": "ResourceClaimTemplate", "metadata": {"name": kind},
              "spec": {"spec": {"devices": spec}}} for kind, spec in SPECS.items()]
    for n in range(nodes):
        docs += _node(f"node-{n}")
    for i in range(pods):
        kind = rng.choice(list(SPECS))
        docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i:03d}", "namespace": "default"},
                     "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": str(rng.choice((1, 2)))},
                                                                          "claims": [{"name": "d"}]}}],
                              "resourceClaims": [{"name": "d", "resourceClaimTemplateName": kind}]}})
    return docs


def _final_claims(docs: list[dict], tie_break: str) -> tuple[dict, list]:
    scenario = Scenario()
    for doc in parse_documents(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}), "s.json"):
        add_document(scenario, doc)
    prepared = prepare(scenario, version=version.for_minor(36))
    result = simulate(prepared.state, prepared.config, scenario.pending_pods, tie_break=tie_break, seed=3)
    claims = {key: None if claim.allocation is None else (claim.allocation, claim.allocation.node_selector,
                                                          claim.allocation.config)
              for key, claim in prepared.state.dra.claims.items()}  # (selector and config: not in its equality)
    return claims, [(s.pod.name, s.node) for s in result.steps]


@pytest.mark.parametrize(("seed", "tie_break"), [(1, "first"), (2, "random"), (3, "random")])
def test_reserve_reuses_filter_allocations_exactly(seed, tie_break, monkeypatch):
    docs = _docs(nodes=12, pods=50, seed=seed)
    moved = []
    real = dra_state.relocate

    def counting(*args, **kwargs):
        moved.append(args[3])
        return real(*args, **kwargs)

    monkeypatch.setattr(dra_state, "relocate", counting)
    reused, steps = _final_claims(docs, tie_break)
    bound = [node for _pod, node in steps if node is not None]
    assert len(bound) > 35 and len(moved) == len(bound)  # every bind reuses Filter's allocation
    assert len(set(moved)) == 12  # onto every node

    def afresh(self, node, node_name, claims):
        try:
            return self.allocate_on(node, claims, node_name)
        except (dra_state.AllocationError, dra_state.NodeUnschedulable):
            return None

    monkeypatch.setattr(dra_state.DraState, "_allocation_for", afresh)
    fresh, fresh_steps = _final_claims(docs, tie_break)
    assert steps == fresh_steps
    assert reused == fresh
    allocated = [a[0] for a in fresh.values() if a is not None]
    assert any(r.share_id for a in allocated for r in a.results)  # shares were moved too


def test_relocate_is_the_identity_on_its_own_node():
    """On the node it was found on, with the same claims, relocate gives the allocation back unchanged."""
    docs = [*_docs(nodes=2, pods=0, seed=0), {"apiVersion": V1, "kind": "ResourceClaim", "metadata": {
        "name": "c", "namespace": "default"}, "spec": {"devices": SPECS["mig-and-bandwidth"]}}]
    scenario = Scenario()
    for doc in parse_documents(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}), "s.json"):
        add_document(scenario, doc)
    v136 = version.for_minor(36)
    prepared = prepare(scenario, version=v136)
    dra = prepared.state.dra
    features = version_features(v136)
    dra.configure(features, choose_rules(v136, features), True)
    claims = [dra_state.ClaimToAllocate("default/c", dra.claims[("default", "c")].spec)]
    found = dra.allocate_on(1, claims, "node-1")
    assert found is not None and found.where
    again = relocate(found, claims, list(dra.catalog.node_pools[1]), "node-1", dra.catalog.rules)
    assert again.results == found.results and again.results[0].node_selector == found.results[0].node_selector
    elsewhere = relocate(found, claims, list(dra.catalog.node_pools[0]), "node-0", dra.catalog.rules)
    assert {r.pool for r in elsewhere.results[0].results} == {"node-0"}
    there = dra.allocate_on(0, claims, "node-0").results
    assert elsewhere.results == there and elsewhere.results[0].node_selector == there[0].node_selector
    assert there[0].node_selector["nodeSelectorTerms"][0]["matchFields"][0]["values"] == ["node-0"]



def test_nodes_differing_only_in_hidden_values_answer_apart(tmp_path, capsys):
    """Attribute values no selector reads are renamed per node, in their order of appearance: nodes whose GPUs
    pair up alike share verdicts, but not nodes whose GPUs pair up differently. n1's four GPUs sit on two parent
    boards (a, a, b, b), n2's on four, n3's like n1's under other names: a claim of two GPUs on one board
    (matchAttribute) fits n1 and n3, not n2; with distinctAttribute instead, it fits all three (any two of n2's,
    two of n1's on different boards)."""
    from tests_support import run_json

    def node_docs(name: str, parents: list[str]) -> list[dict]:
        return [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
                    "kubernetes.io/hostname": name}}, "status": {"allocatable": {"cpu": "8", "pods": "110"}}},
                {"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": f"{name}-gpus"},
                 "spec": {"driver": DRIVER, "nodeName": name, "pool": {"name": name, "resourceSliceCount": 1},
                          "devices": [{"name": f"gpu-{i}", "attributes": {"board": {"string": p},
                                                                         "uuid": {"string": f"{name}-{i}"}}}
                                      for i, p in enumerate(parents)]}}]

    def verdicts(constraint: str) -> dict:
        claim = {"apiVersion": V1, "kind": "ResourceClaim", "metadata": {"name": "pair", "namespace": "default"},
                 "spec": {"devices": {"requests": [_exactly("gpus", "any", 2)],
                                      "constraints": [{constraint: f"{DRIVER}/board"}]}}}
        docs = [_class("any", f'device.driver == "{DRIVER}"'), claim,
                *node_docs("n1", ["a", "a", "b", "b"]), *node_docs("n2", ["c", "d", "e", "f"]),
                *node_docs("n3", ["g", "g", "h", "h"]),
                {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                 "spec": {"containers": [{"name": "c", "resources": {"claims": [{"name": "d"}]}}],
                          "resourceClaims": [{"name": "d", "resourceClaimName": "pair"}]}}]
        path = tmp_path / f"{constraint}.json"
        path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}))
        rc, out, err = run_json(capsys, "score", "-f", str(path), "--detail", "--kube-version", "1.36")
        assert rc == 0, err
        return out["feasible"]

    assert verdicts("matchAttribute") == ["n1", "n3"]
    assert verdicts("distinctAttribute") == ["n1", "n2", "n3"]

