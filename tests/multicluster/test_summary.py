"""Every `summary` case of the Karmada golden files through `kubefit summary -f MEMBER -o json`."""

from __future__ import annotations

import pytest
from karmada_golden import assert_subset, by_value, cases, ids, run_json, scenario_file

from kubefit.multicluster.summary import Resource, resource_summary

SUMMARY = cases("summary")


@pytest.mark.parametrize("case", SUMMARY, ids=ids(SUMMARY))
def test_summary_golden(case, tmp_path, capsys):
    argv = ["summary", "-f", scenario_file(tmp_path, case)]
    gates = case.get("featureGates") or {}
    if gates:
        argv += ["--feature-gates", ",".join(f"{k}={str(v).lower()}" for k, v in gates.items())]
    rc, got, err = run_json(capsys, argv)
    assert rc == 0, err
    if case["_file"] == "upstream-tests.jsonl":
        assert_subset(case["expect"], got, case)
    else:
        assert by_value(got) == by_value(case["expect"])


def _pod(node, cpu, init=None, phase="Running"):
    spec = {"nodeName": node, "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
    if init:
        spec["initContainers"] = [{"name": "i", "resources": {"requests": {"cpu": init}}}]
    return {"metadata": {"name": "p"}, "spec": spec, "status": {"phase": phase}}


def test_init_container_accumulator_quirk():
    """Pods {1}, {1, init 3}, {1, init 2}: the init max compares against the running total → 4, not 6."""
    pods = [_pod("a", "1"), _pod("a", "1", "3"), _pod("a", "1", "2")]
    got = resource_summary([], pods)["resourceSummary"]["allocated"]
    assert got == {"cpu": "4", "pods": "3"}


def test_allocating_counts_failed_unbound_and_allocated_skips_terminal():
    pods = [_pod("", "250m", phase="Failed"), _pod("a", "1", phase="Succeeded"), _pod("a", "2", phase="")]
    rs = resource_summary([], pods)["resourceSummary"]
    assert rs["allocating"] == {"cpu": "250m", "pods": "1"}
    assert rs["allocated"] == {"cpu": "2", "pods": "1"}


def test_allocatable_format_of_first_node_and_non_compute_names_kept():
    nodes = [{"metadata": {"name": "a"}, "status": {"allocatable": {"memory": "1Gi", "storage": "1Ti"}}},
             {"metadata": {"name": "b"}, "status": {"allocatable": {"memory": "1073741824"}}}]
    rs = resource_summary(nodes, [])
    assert rs["resourceSummary"] == {"allocatable": {"memory": "2Gi", "storage": "1Ti"}}
    assert rs["nodeSummary"] == {"totalNum": 2, "readyNum": 0}


def test_resource_drops_unknown_names_and_emits_only_positive():
    r = Resource()
    r.add({"storage": "5Gi", "nvidia.com/gpu": "1", "hugepages-2Mi": "4Mi", "cpu": "0"})
    assert {k: v.string() for k, v in r.resource_list().items()} == {"nvidia.com/gpu": "1", "hugepages-2Mi": "4Mi"}
    assert Resource().resource_list() is None


def test_bad_quantity_is_input_error(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: a}\nstatus: {allocatable: {cpu: lots}}\n")
    rc, _, err = run_json(capsys, ["summary", "-f", str(bad)])
    assert rc == 2 and "status.allocatable.cpu" in err and "Traceback" not in err


def test_overflow_range_warns_without_crashing(tmp_path, capsys):
    case = {"nodes": [{"metadata": {"name": "a"}, "status": {"allocatable": {"cpu": "9223372036854775807"}}}],
            "pods": [{"metadata": {"name": "p"}, "spec": {"nodeName": "a", "containers": [
                {"name": "c", "resources": {"requests": {"memory": "8Ei"}}}]}}]}
    rc, got, err = run_json(capsys, ["summary", "-f", scenario_file(tmp_path, case)])
    assert rc == 0 and "cpu, memory" in err and "wraps" in err
    assert got["resourceSummary"]["allocatable"] == {"cpu": "9223372036854775807"}
