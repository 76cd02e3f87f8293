"""The volume plugins alone against the default-profile golden cases that use PVCs: each plugin's PreFilter
verdict (failure, Skip) and Filter verdict per node (`filterByPlugin`), as the real plugins gave them.

These read the case's objects through kubefit's loader, so decoding is checked too; the whole cycle
(every plugin, scores, messages) is the default-profile golden harness's job.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kubefit.manifests.documents import parse_documents
from kubefit.manifests.load import Scenario
from kubefit.manifests.scenario import add_document
from kubefit.scheduler.framework import new_context
from kubefit.scheduler.plugins.base import CODE_NAMES
from kubefit.scheduler.plugins.nodevolumelimits import NodeVolumeLimits
from kubefit.scheduler.plugins.volumebinding import VolumeBinding
from kubefit.scheduler.plugins.volumerestrictions import VolumeRestrictions
from kubefit.scheduler.plugins.volumes import StorageIndex
from kubefit.scheduler.plugins.volumezone import VolumeZone
from kubefit.scheduler.state import compile_state

GOLDEN = Path(__file__).resolve().parents[2] / ".." / "shared" / "golden" / "kube-scheduler" / \
    "default-profile-cases.jsonl"
EXTRA = ("pvcs", "pvs", "storageClasses", "csiNodes", "csiDrivers")
# PreFilter order of the default profile among the volume plugins
ORDER = ("VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone")


def _cases() -> list[dict]:
    if not GOLDEN.exists():
        return []
    cases = [json.loads(line) for line in GOLDEN.read_text().splitlines() if line.strip()]
    return [c for c in cases if c.get("mode") != "sequence" and not c["expect"].get("preEnqueue")
            and (c["expect"].get("preFilter") or {}).get("plugin", ORDER[0]) in ORDER]


def _scenario(case: dict) -> Scenario:
    scenario = Scenario()
    for key in EXTRA:
        for obj in case.get(key, []):
            for doc in parse_documents(json.dumps(obj), f"{case['id']}.{key}"):
                add_document(scenario, doc)
    for obj in [*case["nodes"], *case["pods"], case["pod"]]:
        for doc in parse_documents(json.dumps(obj), case["id"]):
            add_document(scenario, doc)
    return scenario


def _plugins(scenario: Scenario, state) -> dict:
    storage = StorageIndex.from_objects(scenario.objects)
    by_node: dict[str, list] = {}
    for pod in scenario.bound_pods:
        by_node.setdefault(pod.node_name, []).append(pod)

    def node_pods(st, n):
        return by_node.get(st.nodes[n].name, [])

    return {"VolumeRestrictions": VolumeRestrictions(storage, node_pods),
            "NodeVolumeLimits": NodeVolumeLimits(storage, node_pods),
            "VolumeBinding": VolumeBinding(storage), "VolumeZone": VolumeZone(storage)}


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c["id"])
def test_volume_plugins_match_golden(case: dict) -> None:
    scenario = _scenario(case)
    state = compile_state(scenario.nodes, scenario.pods)
    pod = scenario.pending_pods[0]
    expect = case["expect"]
    skipped = set(expect.get("skippedFilterPlugins") or [])
    pre = expect.get("preFilter")
    idx = np.arange(len(state), dtype=np.int64)
    for name, plugin in _plugins(scenario, state).items():
        ctx = new_context(state, pod)
        outcome = plugin.pre_filter(state, ctx)
        if pre is not None and pre["plugin"] == name:
            assert (CODE_NAMES[outcome.code], list(outcome.reasons)) == (pre["code"], pre["reasons"])
            return  # PreFilter stops here; later plugins never run
        assert outcome.code == 0, name
        assert outcome.skip == (name in skipped), name
        if outcome.skip or name not in (expect.get("filterByPlugin") or {}):
            continue
        got = plugin.filter(state, ctx, idx)
        want = expect["filterByPlugin"][name]
        for i, node in enumerate(state.nodes):
            assert (CODE_NAMES[int(got.codes[i])], got.reasons(i)) == \
                (want[node.name]["code"], want[node.name]["reasons"]), (name, node.name)
