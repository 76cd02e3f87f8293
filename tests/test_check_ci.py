"""`kubefit check` that a CI can trust (issue 44): each defect of the issue's list reproduced on a small GitOps-like
scenario whose answer is derived by hand (each test's docstring says how), failing before the fix; and what the
issue asks besides (severities, --strict, namespaces, per-workload before/after, git baselines).

The outputs (JUnit, SARIF, TAP, annotations, step outputs) and the action are in test_check_outputs.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import kubefit
from kubefit.cli import main

ROOT = Path(__file__).resolve().parents[1]


def node(name: str, cpu: int = 4, zone: str | None = None) -> dict:
    labels = {"kubernetes.io/hostname": name, **({"topology.kubernetes.io/zone": zone} if zone else {})}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": {"cpu": str(cpu), "memory": "32Gi", "pods": "110"}}}


def deployment(name: str, replicas: int, cpu: int | str, namespace: str | None = None, **spec: object) -> dict:
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    pod = {"containers": [{"name": "c", "image": "app", "resources": {"requests": {"cpu": str(cpu), "memory": "1Gi"}}}],
           **spec}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": {
        "replicas": replicas, "selector": {"matchLabels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}}, "spec": pod}}}


def write(path: Path, *docs: dict) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False), encoding="utf-8")
    return str(path)


def expectations(path: Path, assertions: dict, **top: object) -> str:
    path.write_text(yaml.safe_dump({"apiVersion": "kubefit.io/v1alpha1", "kind": "SchedulingExpectations", **top,
                                    "assertions": assertions}, sort_keys=False), encoding="utf-8")
    return str(path)


def run(args: list[str], capsys) -> tuple[int, str, str]:
    rc = main(args)
    out, err = capsys.readouterr()
    return rc, out, err


def checked(args: list[str], capsys) -> tuple[int, dict, str]:
    rc, out, err = run([*args, "-o", "json"], capsys)
    return rc, (json.loads(out) if out.strip() else {}), err


def outcome(data: dict, kind: str) -> dict:
    return next(o for o in data["assertions"] if o["assertion"] == kind)


@pytest.fixture(autouse=True)
def no_github(monkeypatch):
    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT", "GITHUB_WORKSPACE", "KUBEFIT_KUBE_VERSION"):
        monkeypatch.delenv(name, raising=False)


# --------------------------------------------------------------------------- 1. no false green

def typo_priority(tmp_path: Path) -> str:
    """One 8-cpu node; shop/deployment/web, 6 replicas of 1 cpu, `priorityClassName: hihg` where the repository
    defines `high`: the API server's Priority admission refuses every pod (`no PriorityClass with name hihg was
    found`), so nothing is pending — and nothing runs."""
    web = deployment("web", 6, 1, "shop", priorityClassName="hihg")
    high = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}
    return write(tmp_path / "cluster.yaml", node("n1", 8), high, web)


def test_a_priority_class_typo_fails_every_assertion_covering_the_workload(tmp_path, capsys):
    """maxPending 0 and fullyPlaced of the workload fail with the API server's message (before: maxPending passed
    with exit 0, and fullyPlaced exited 2, blaming the expectation); configValid, which covers no workload, holds."""
    path = typo_priority(tmp_path)
    rc, data, _ = checked(["check", "-f", path, "--max-pending", "0", "--fully-placed", "deployment/web",
                           "--config-valid"], capsys)
    assert rc == 1
    said = r'pods "web-[0-9a-z]+-" is forbidden: no PriorityClass with name hihg was found'  # generateName, hash
    pending, placed, valid = (outcome(data, k) for k in ("maxPending", "fullyPlaced", "configValid"))
    assert (pending["status"], pending["actual"]) == ("failed", 0)
    assert pending["message"] == ("simulate leaves 0 pod(s) pending (at most 0); 6 pod(s) of 1 workload(s) would not "
                                  "be created")
    assert re.fullmatch(f"shop/deployment/web: 6 pod\\(s\\) would not be created: {said}", pending["evidence"][0])
    assert (placed["status"], placed["actual"]) == ("failed", 0)
    assert placed["message"].startswith("simulate places 0 of shop/deployment/web's 6 pod(s)")
    assert valid["status"] == "passed"
    # the finding is the Deployment: the node is lines 1-11 (block style), `---`, the class 13-17, `---`, then it
    found = placed["findings"][0]
    assert (found["file"], found["line"], found["object"]) == (path, 19, "shop/deployment/web")
    assert re.fullmatch(f"6 pod\\(s\\) would not be created: {said}", found["message"])


def test_a_quota_refusing_the_pods_fails_them(tmp_path, capsys):
    """A ResourceQuota of requests.cpu 2 in shop: 2 of web's 6 one-cpu pods are created, the API server refuses
    the other 4 (`exceeded quota: small, requested: requests.cpu=1, used: requests.cpu=2, limited:
    requests.cpu=2`). The run leaves none pending: maxPending 0 fails on the 4; fullyPlaced places 2 of 6."""
    quota = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "small", "namespace": "shop"},
             "spec": {"hard": {"requests.cpu": "2"}}}
    path = write(tmp_path / "cluster.yaml", node("n1", 8), quota, deployment("web", 6, 1, "shop"))
    rc, data, _ = checked(["check", "-f", path, "--max-pending", "0", "--fully-placed", "shop/deployment/web"], capsys)
    assert rc == 1
    pending, placed = outcome(data, "maxPending"), outcome(data, "fullyPlaced")
    assert pending["status"] == "failed" and "4 pod(s) of 1 workload(s) would not be created" in pending["message"]
    assert pending["evidence"][0].endswith("exceeded quota: small, requested: requests.cpu=1, used: requests.cpu=2, "
                                           "limited: requests.cpu=2")
    assert (placed["status"], placed["actual"]) == ("failed", 2)


def test_a_workload_the_quota_refuses_whole_fails_fully_placed_with_that_reason(tmp_path, capsys):
    """requests.cpu 0: none of the 6 pods is created; `fullyPlaced` fails (0 of 6, the quota's words), not
    `no pod of deployment/web in the scenario` (exit 2)."""
    quota = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "none", "namespace": "shop"},
             "spec": {"hard": {"requests.cpu": "0"}}}
    path = write(tmp_path / "cluster.yaml", node("n1", 8), quota, deployment("web", 6, 1, "shop"))
    rc, data, _ = checked(["check", "-f", path, "--fully-placed", "deployment/web"], capsys)
    placed = outcome(data, "fullyPlaced")
    assert rc == 1 and (placed["status"], placed["actual"]) == ("failed", 0)
    assert "exceeded quota: none" in placed["evidence"][0]


def test_other_workloads_refusals_do_not_fail_fully_placed(tmp_path, capsys):
    """fullyPlaced covers its own workload only: api (1 pod, fits) holds while web's pods are all refused."""
    path = typo_priority(tmp_path)
    docs = list(yaml.safe_load_all(Path(path).read_text()))
    write(Path(path), *docs, deployment("api", 1, 1, "shop"))
    rc, data, _ = checked(["check", "-f", path, "--fully-placed", "shop/deployment/api"], capsys)
    assert rc == 0 and outcome(data, "fullyPlaced")["status"] == "passed"


def test_severity_warning_reports_without_failing_and_fail_on_warning_fails(tmp_path, capsys):
    """`maxPending: {max: 0, severity: warning}` on the typo scenario does not hold: reported (exit 0, `warn` in
    the table); `--fail-on warning` (or `failOn: warning`) makes it fail (exit 1)."""
    path = typo_priority(tmp_path)
    expect = expectations(tmp_path / "e.yaml", {"maxPending": {"max": 0, "severity": "warning"}})
    rc, out, _ = run(["check", "-f", path, "--expect", expect], capsys)
    assert rc == 0 and "│ warn │" in out and "1 did not hold (severity warning)" in out
    rc, data, _ = checked(["check", "-f", path, "--expect", expect, "--fail-on", "warning"], capsys)
    assert rc == 1 and data["passed"] is False and data["summary"]["failOn"] == "warning"
    strict = expectations(tmp_path / "s.yaml", {"maxPending": {"max": 0, "severity": "warning"}}, failOn="warning")
    assert run(["check", "-f", path, "--expect", strict], capsys)[0] == 1


def test_strict_fails_on_kubefit_warnings(tmp_path, capsys):
    """--strict (`noWarnings: true`): kubefit's warning that web's controller cannot create 6 pods fails it; a
    scenario kubefit reads without a warning passes it."""
    rc, data, _ = checked(["check", "-f", typo_priority(tmp_path), "--strict"], capsys)
    strict = outcome(data, "noWarnings")
    assert rc == 1 and strict["status"] == "failed" and strict["actual"] == 1
    assert "its controller cannot create 6 pod(s)" in strict["evidence"][0]
    clean = write(tmp_path / "clean.yaml", node("n1"), deployment("api", 1, 1))
    rc, data, _ = checked(["check", "-f", clean, "--strict"], capsys)
    assert rc == 0 and outcome(data, "noWarnings")["actual"] == 0


def test_a_warning_naming_an_object_points_at_it(tmp_path, capsys):
    """A pod bound to a node the scenario does not have is counted nowhere (kubefit's warning names its file and
    Pod/lost): under --strict the finding is that pod, at its line (the node's 11 lines, `---`, then it)."""
    lost = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "lost"}, "spec": {
        "nodeName": "gone", "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}
    path = write(tmp_path / "c.yaml", node("n1"), lost)
    rc, data, _ = checked(["check", "-f", path, "--strict"], capsys)
    found = outcome(data, "noWarnings")["findings"]
    assert rc == 1 and [(f["file"], f["line"], f["object"]) for f in found] == [(path, 13, "Pod/lost")]


@pytest.mark.parametrize(("body", "field", "says"), [
    ({"maxPending": {"max": 0, "severity": "fatal"}}, "assertions.maxPending.severity", "must be error or warning"),
    ({"maxPending": {"most": 0}}, "assertions.maxPending.most", "unknown field 'most'"),
    ({"maxPending": {"severity": "warning"}}, "assertions.maxPending.max", "is required"),
    ({"minCapacity": {"deployment/web": {"min": -1}}}, "assertions.minCapacity.deployment/web.min", "0 or more"),
    ({"fullyPlaced": [{"workload": "deployment/web", "level": "x"}]}, "assertions.fullyPlaced[0].level",
     "unknown field"),
    ({"maxNodesAdded": {"max": 1, "allowCannotFit": "yes"}}, "assertions.maxNodesAdded.allowCannotFit",
     "must be true or false"),
    ({"minAllocation": {"memroy": 50}}, "assertions.minAllocation.memroy", "is not a resource kube-scheduler counts"),
])
def test_bad_long_forms_are_refused_naming_the_field(body, field, says, tmp_path, capsys):
    path = write(tmp_path / "c.yaml", node("n1"), deployment("web", 1, 1))
    expect = expectations(tmp_path / "e.yaml", body, nodeTemplates=[path])
    rc, out, err = run(["check", "-f", path, "--expect", expect], capsys)
    assert rc == 2 and not out and len(err.strip().splitlines()) == 1
    assert expect in err and field in err and says in err


# --------------------------------------------------------------------------- 2. capacity as a GitOps repo means it

def test_min_capacity_places_the_repositorys_pending_pods_first(tmp_path, capsys):
    """Two empty 4-cpu nodes and web's 6 one-cpu pods, all pending (nothing runs yet in a GitOps repository).
    Beside the bound pods only (before) 8 more copies fit; once web's own 6 are placed (`capacity
    --place-pending`) 2 do: `minCapacity: {deployment/web: 3}` fails, and the output says the pods were placed
    first."""
    path = write(tmp_path / "cluster.yaml", node("n1"), node("n2"), deployment("web", 6, 1))
    rc, data, _ = checked(["check", "-f", path, "--min-capacity", "deployment/web=3"], capsys)
    cap = outcome(data, "minCapacity")
    assert rc == 1 and (cap["status"], cap["actual"]) == ("failed", 2)
    assert cap["evidence"][0] == ("the scenario's pending pods placed first, as simulate places them: 6 of 6 "
                                  "scheduled; the copies are counted beside them")
    assert kubefit.capacity([path], "deployment/web", place_pending=True, warn=lambda _: None).count == 2


# --------------------------------------------------------------------------- 6. namespaces

def two_namespaces(tmp_path: Path) -> str:
    """shop/web (2 one-cpu pods) and staging/web (2 three-cpu pods) on two 4-cpu nodes: shop's both bind, one of
    staging's (queued after) binds on each node's 3 cpu left... only if room: n1 and n2 each get a shop pod (1
    cpu, LeastAllocated spreads), leaving 3 cpu each: both staging pods bind."""
    return write(tmp_path / "cluster.yaml", node("n1"), node("n2"), deployment("web", 2, 1, "shop"),
                 deployment("web", 2, 3, "staging"))


def test_a_name_in_two_namespaces_is_refused_with_the_candidates(tmp_path, capsys):
    rc, _, err = run(["check", "-f", two_namespaces(tmp_path), "--fully-placed", "deployment/web"], capsys)
    assert rc == 2 and len(err.strip().splitlines()) == 1
    assert "deployment/web names pods of several namespaces: give one of shop/deployment/web, " \
           "staging/deployment/web (or -n NAMESPACE)" in err


@pytest.mark.parametrize("args", [["--fully-placed", "staging/deployment/web"],
                                  ["-n", "staging", "--fully-placed", "deployment/web"],
                                  ["--fully-placed", "staging/deploy/web"]])
def test_namespace_kind_name_and_dash_n_name_one_workload(args, tmp_path, capsys):
    rc, data, _ = checked(["check", "-f", two_namespaces(tmp_path), *args], capsys)
    placed = outcome(data, "fullyPlaced")
    assert rc == 0 and placed["actual"] == 2
    assert placed["message"] == "simulate places 2 of staging/deployment/web's 2 pod(s)"
    assert all(line.startswith("staging/web-") for line in placed["evidence"])


def test_capacity_of_a_namespaced_workload(tmp_path, capsys):
    """After shop's 2 one-cpu and staging's 2 three-cpu pods each node has 0 cpu left: no copy of either fits;
    `shop/deployment/web` is what capacity copies (its 1-cpu template), `deployment/web` alone is ambiguous."""
    path = two_namespaces(tmp_path)
    rc, data, _ = checked(["check", "-f", path, "--min-capacity", "shop/deployment/web=0"], capsys)
    assert rc == 0 and outcome(data, "minCapacity")["message"].startswith(
        "capacity fits 0 more copies of shop/deployment/web")
    rc, _, err = run(["check", "-f", path, "--min-capacity", "deployment/web=0"], capsys)
    assert rc == 2 and "give one of shop/deployment/web, staging/deployment/web" in err
    rc, out, err = run(["capacity", "-f", path, "--pod", "deployment/web"], capsys)
    assert rc == 2 and "give one of shop/deployment/web, staging/deployment/web" in err


def test_expectation_file_namespace(tmp_path, capsys):
    path = two_namespaces(tmp_path)
    expect = expectations(tmp_path / "e.yaml", {"fullyPlaced": ["deployment/web"]}, namespace="shop")
    rc, data, _ = checked(["check", "-f", path, "--expect", expect], capsys)
    assert rc == 0 and outcome(data, "fullyPlaced")["message"].startswith("simulate places 2 of shop/deployment/web")


# --------------------------------------------------------------------------- 7. moves across renames

def pinned(tmp_path: Path, name: str, to: str) -> str:
    """Nodes n1 and n2 (4 cpu); web's 2 one-cpu pods pinned to `to` by their nodeSelector: changing the pin changes
    the template, so its pod-template-hash, so every pod's name."""
    return write(tmp_path / name, node("n1"), node("n2"),
                 deployment("web", 2, 1, nodeSelector={"kubernetes.io/hostname": to}))


def test_max_pod_moves_matches_pods_across_renames(tmp_path, capsys):
    """The baseline pins web to n1, the candidate to n2: both pods move (renamed: matched by workload and ordinal).
    Before, matched by name, no pod was in both runs: 0 moves, a false pass."""
    base, cand = pinned(tmp_path, "base.yaml", "n1"), pinned(tmp_path, "cand.yaml", "n2")
    rc, data, _ = checked(["check", "-f", cand, "--baseline", base, "--max-pod-moves", "0"], capsys)
    moves = outcome(data, "maxPodMoves")
    assert rc == 1 and (moves["status"], moves["actual"]) == ("failed", 2)
    assert [(m["workload"], m["baseline"], m["candidate"]) for m in data["moves"]["default"]] == [
        ("default/deployment/web", "n1", "n2")] * 2
    assert all(m["baselinePod"] != m["pod"] for m in data["moves"]["default"])
    assert moves["findings"][0]["object"] == "default/deployment/web"


def test_before_after_per_workload(tmp_path, capsys):
    """Per workload and in total: web's 2 pods on 1 node in both runs, 2000m requested; nothing else changes."""
    base, cand = pinned(tmp_path, "base.yaml", "n1"), pinned(tmp_path, "cand.yaml", "n2")
    rc, data, _ = checked(["check", "-f", cand, "--baseline", base, "--max-pod-moves", "2"], capsys)
    change = data["changes"]["default"]
    web = change["workloads"][0]
    assert rc == 0 and web["workload"] == "default/deployment/web"
    assert web["baseline"] == web["candidate"] == {"pods": 2, "placed": 2, "pending": 0, "notCreated": 0, "nodes": 1,
                                                   "cpu": 2000, "memory": 2 << 30}
    assert change["changed"] == 0 and change["total"]["candidate"]["allocation"]["cpu"] == 25.0


# --------------------------------------------------------------------------- 8. plan as a GitOps repo means it

def spread(tmp_path: Path) -> str:
    """One 2-cpu node per zone (a, b, c); web: 9 one-cpu pods spread over zones (DoNotSchedule, maxSkew 1). Each
    zone holds 2: 6 bind, 3 wait for room, one per zone."""
    constraint = {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
                  "labelSelector": {"matchLabels": {"app": "web"}}}
    return write(tmp_path / "cluster.yaml", *(node(f"n{z}", 2, z) for z in "abc"),
                 deployment("web", 9, 1, topologySpreadConstraints=[constraint]))


def test_max_nodes_added_fails_while_pods_cannot_fit_on_any_count(tmp_path, capsys):
    """A template in zone a only: one new node there takes the 7th pod (a 3, b 2, c 2); the 8th and 9th must go to
    b or c (a 4th in a would be a skew of 2), which no count of the template helps: plan adds 1 and says 2 pods
    cannot fit. `maxNodesAdded: 3` passed before (1 ≤ 3, the 2 hidden); it fails now, unless it allows it."""
    path = spread(tmp_path)
    zone_a = write(tmp_path / "zone-a.yaml", node("new-a", 4, "a"))
    rc, data, _ = checked(["check", "-f", path, "--max-nodes-added", "3", "--node-template", zone_a], capsys)
    plan = outcome(data, "maxNodesAdded")
    assert rc == 1 and (plan["status"], plan["actual"]) == ("failed", 1)
    assert plan["message"] == ("plan adds 1 node(s) (at most 3); 2 pod(s) cannot fit on any count of the templates "
                               "(allowCannotFit: true would allow it)")
    assert sum("cannot fit on any count of the templates" in line for line in plan["evidence"]) == 2
    rc, data, _ = checked(["check", "-f", path, "--max-nodes-added", "3", "--allow-cannot-fit", "--node-template",
                           zone_a], capsys)
    assert rc == 0 and outcome(data, "maxNodesAdded")["message"].endswith("(allowed)")


def test_templates_per_zone(tmp_path, capsys):
    """One template per zone: a new node in each zone takes its pod: plan adds 3, every pod fits."""
    path = spread(tmp_path)
    templates = [write(tmp_path / f"zone-{z}.yaml", node(f"new-{z}", 4, z)) for z in "abc"]
    expect = expectations(tmp_path / "e.yaml", {"maxNodesAdded": 3}, nodeTemplates=templates)
    rc, data, _ = checked(["check", "-f", path, "--expect", expect], capsys)
    plan = outcome(data, "maxNodesAdded")
    assert rc == 0 and plan["actual"] == 3 and plan["message"] == "plan adds 3 node(s) (at most 3)"
    assert [line for line in plan["evidence"] if line.startswith("add ")] == [
        "add new-a: 1", "add new-b: 1", "add new-c: 1"]


def test_max_nodes_reaches_plan(tmp_path, capsys):
    """Three pending 3-cpu pods, a full 4-cpu node, a 4-cpu template: plan adds 3; with --max-nodes 2 (maxNodes in
    the file) it adds 2 and one pod cannot fit on that count."""
    full = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "full"}, "spec": {
        "nodeName": "n1", "containers": [{"name": "c", "resources": {"requests": {"cpu": "4"}}}]}}
    path = write(tmp_path / "cluster.yaml", node("n1"), full, deployment("batch", 3, 3))
    tpl = write(tmp_path / "tpl.yaml", node("tpl"))
    rc, data, _ = checked(["check", "-f", path, "--max-nodes-added", "3", "--node-template", tpl], capsys)
    assert rc == 0 and outcome(data, "maxNodesAdded")["actual"] == 3
    rc, data, _ = checked(["check", "-f", path, "--max-nodes-added", "3", "--node-template", tpl, "--max-nodes", "2"],
                          capsys)
    plan = outcome(data, "maxNodesAdded")
    assert rc == 1 and plan["actual"] == 2 and "1 pod(s) cannot fit on any count" in plan["message"]
    assert data["inputs"]["options"]["maxNodes"] == 2


# --------------------------------------------------------------------------- 10. the small ones

@pytest.mark.parametrize(("args", "said"), [([], "v1.37.0"), (["--kube-version", "1.34"], "v1.34.1"),
                                            (["--kube-version", "1.34,1.37"], "v1.34.1, v1.37.0")])
def test_inputs_name_the_version_the_run_used(args, said, tmp_path, capsys):
    path = write(tmp_path / "c.yaml", node("n1"), deployment("web", 1, 1))
    rc, data, _ = checked(["check", "-f", path, "--max-pending", "0", *args], capsys)
    assert rc == 0 and data["inputs"]["kubeSchedulerVersion"] == said


@pytest.mark.parametrize(("args", "says"), [
    (["--min-allocation", "cpux=50"], "--min-allocation: 'cpux' is not a resource kube-scheduler counts"),
    (["--fully-placed", ""], "--fully-placed: must name a workload"),
    (["--allow-cannot-fit", "--max-pending", "0"], "--allow-cannot-fit: applies to --max-nodes-added"),
])
def test_typos_in_options_exit_2(args, says, tmp_path, capsys):
    path = write(tmp_path / "c.yaml", node("n1"), deployment("web", 1, 1))
    rc, _, err = run(["check", "-f", path, *args], capsys)
    assert rc == 2 and says in err and len(err.strip().splitlines()) == 1


def test_an_extended_resource_no_node_has_still_fails_with_exit_1(tmp_path, capsys):
    path = write(tmp_path / "c.yaml", node("n1"), deployment("web", 1, 1))
    rc, data, _ = checked(["check", "-f", path, "--min-allocation", "example.com/fpga=1"], capsys)
    assert rc == 1 and outcome(data, "minAllocation")["message"] == "no node has example.com/fpga allocatable"


def test_a_missing_file_under_files_names_the_expectation_file(tmp_path, capsys):
    expect = expectations(tmp_path / "kubefit-check.yaml", {"maxPending": 0}, files=["cluster/"])
    rc, _, err = run(["check", "--expect", expect], capsys)
    assert rc == 2 and err.startswith(f"error: {expect}: SchedulingExpectations #1: files[0]: cluster/: no such file")


def test_the_summary_title_without_a_name(tmp_path, capsys, monkeypatch):
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    path = write(tmp_path / "c.yaml", node("n1"), deployment("web", 1, 1))
    assert run(["check", "-f", path, "--max-pending", "0"], capsys)[0] == 0
    assert summary.read_text().startswith("### ✅ kubefit check\n")


def test_an_unwritable_step_summary_does_not_change_the_verdict(tmp_path, capsys, monkeypatch):
    """A summary file that cannot be written (its folder missing) is a warning; the check still passes (exit 0)."""
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "missing" / "summary.md"))
    path = write(tmp_path / "c.yaml", node("n1"), deployment("web", 1, 1))
    rc, out, err = run(["check", "-f", path, "--max-pending", "0"], capsys)
    assert rc == 0 and "warning: cannot write $GITHUB_STEP_SUMMARY" in err and "verdict is unchanged" in err


def test_stdin(tmp_path):
    """`kustomize build | kubefit check -f -`: the scenario read once from standard input."""
    text = Path(write(tmp_path / "c.yaml", node("n1"), deployment("web", 5, 1))).read_text()
    done = subprocess.run([sys.executable, "-m", "kubefit.cli", "check", "-f", "-", "--max-pending", "0",
                           "--fully-placed", "deployment/web", "--min-capacity", "deployment/web=0", "-o", "json"],
                          input=text, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    data = json.loads(done.stdout)
    assert done.returncode == 1, done.stderr  # 4 cpu hold 4 of the 5: one pending
    assert outcome(data, "fullyPlaced")["actual"] == 4 and outcome(data, "minCapacity")["actual"] == 0
    assert outcome(data, "maxPending")["findings"][0]["file"] == "-"


def test_stdin_twice_is_refused(tmp_path, capsys):
    rc, _, err = run(["check", "-f", "-", "--baseline", "-", "--max-pending", "baseline"], capsys)
    assert rc == 2 and "standard input can be read once" in err


def test_a_folder_read_without_its_sub_folders_is_said(tmp_path, capsys):
    """cluster/ holds nodes.yaml and apps/web.yaml: without -R the sub-folder is not read, which the check says
    (a warning, a failure under --strict); `recursive: true` in the file reads it."""
    write(tmp_path / "cluster" / "nodes.yaml", node("n1"))
    write(tmp_path / "cluster" / "apps" / "web.yaml", deployment("web", 1, 1))
    rc, data, err = checked(["check", "-f", str(tmp_path / "cluster"), "--strict", "--max-pending", "0"], capsys)
    assert rc == 1 and "cluster: its sub-folder(s) apps hold manifests that are not read (give -R" in err
    expect = expectations(tmp_path / "e.yaml", {"fullyPlaced": ["deployment/web"]}, files=["cluster"],
                          recursive=True)
    rc, data, _ = checked(["check", "--expect", expect], capsys)
    assert rc == 0 and outcome(data, "fullyPlaced")["actual"] == 1


# --------------------------------------------------------------------------- git baselines

def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": "/dev/null"}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True, timeout=60)
    return done.stdout


@pytest.fixture
def pull_request(tmp_path) -> dict[str, Path]:
    """A repository on `origin` (a bare one) whose main pins web to n1, and a clone on branch `change` that pins it
    to n2 and adds apps/batch.yaml (a file main does not have)."""
    origin, work = tmp_path / "origin.git", tmp_path / "work"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    git(tmp_path, "clone", "-q", str(origin), str(work))
    pinned(work / "cluster", "web.yaml", "n1")
    git(work, "checkout", "-q", "-b", "main")
    git(work, "add", "-A")
    git(work, "commit", "-qm", "main")
    git(work, "push", "-q", "origin", "main")
    git(work, "checkout", "-q", "-b", "change")
    pinned(work / "cluster", "web.yaml", "n2")
    write(work / "cluster" / "batch.yaml", deployment("batch", 1, 1))
    git(work, "add", "-A")
    git(work, "commit", "-qm", "change")
    git(work, "push", "-q", "origin", "change")
    return {"origin": origin, "work": work, "root": tmp_path}


def test_baseline_from_a_git_ref(pull_request, capsys, monkeypatch):
    """`--baseline origin/main`: cluster/ as main has it (web on n1, no batch): web's 2 pods move; the file the
    change adds is no part of the baseline."""
    monkeypatch.chdir(pull_request["work"])
    rc, data, _ = checked(["check", "-f", "cluster", "--baseline", "origin/main", "--max-pod-moves", "0"], capsys)
    assert rc == 1 and outcome(data, "maxPodMoves")["actual"] == 2
    rows = {r["workload"]: r for r in data["changes"]["default"]["workloads"]}
    assert rows["default/deployment/batch"]["baseline"]["pods"] == 0
    assert data["inputs"]["options"]["baseline"] == ["origin/main"]


def test_a_shallow_clone_fetches_the_ref(pull_request, capsys, monkeypatch):
    """A clone of one commit of `change` (actions/checkout's default) has no origin/main: kubefit fetches it (one
    commit deep) and compares."""
    shallow = pull_request["root"] / "shallow"
    git(pull_request["root"], "clone", "-q", "--depth=1", "--branch", "change", "--single-branch",
        f"file://{pull_request['origin']}", str(shallow))
    monkeypatch.chdir(shallow)
    rc, data, _ = checked(["check", "-f", "cluster", "--baseline", "origin/main", "--max-pod-moves", "0"], capsys)
    assert rc == 1 and outcome(data, "maxPodMoves")["actual"] == 2


def test_a_ref_that_cannot_be_had_says_how(pull_request, capsys, monkeypatch):
    """A shallow clone whose remote has no such branch: one line saying to check out with fetch-depth: 0."""
    shallow = pull_request["root"] / "shallow"
    git(pull_request["root"], "clone", "-q", "--depth=1", "--branch", "change", f"file://{pull_request['origin']}",
        str(shallow))
    monkeypatch.chdir(shallow)
    rc, _, err = run(["check", "-f", "cluster", "--baseline", "origin/release", "--max-pod-moves", "0"], capsys)
    assert rc == 2 and len(err.strip().splitlines()) == 1
    assert "origin/release is not a file or folder, nor a commit of this shallow clone" in err
    assert "git fetch --no-tags --depth=1 origin +refs/heads/release:refs/remotes/origin/release" in err
    assert "fetch-depth: 0" in err


def test_a_ref_outside_a_repository(tmp_path, capsys, monkeypatch):
    path = write(tmp_path / "c.yaml", node("n1"), deployment("web", 1, 1))
    monkeypatch.chdir(tmp_path)
    rc, _, err = run(["check", "-f", path, "--baseline", "main", "--max-pod-moves", "0"], capsys)
    assert rc == 2 and "--baseline: is read as a git ref, but" in err and "not in a git repository" in err


# --------------------------------------------------------------------------- one load, one run per version

def test_the_files_are_loaded_once_and_each_version_simulated_once(tmp_path, capsys, monkeypatch):
    """Four simulate-based assertions on two versions: the files are read once, the simulation runs once per
    version; a capacity assertion alone runs no simulation of check's own (capacity places the pending pods
    itself, as `capacity --place-pending` does)."""
    import kubefit.verbs as verbs

    calls = {"load": 0, "simulate": 0}
    load, simulate = verbs._load_check, verbs.simulate_prepared

    def counted(name, real):
        def call(*args, **kwargs):
            calls[name] += 1
            return real(*args, **kwargs)
        return call

    monkeypatch.setattr(verbs, "_load_check", counted("load", load))
    monkeypatch.setattr(verbs, "simulate_prepared", counted("simulate", simulate))
    path = write(tmp_path / "c.yaml", node("n1"), deployment("web", 2, 1))
    rc, _, _ = checked(["check", "-f", path, "--max-pending", "0", "--fully-placed", "deployment/web",
                        "--min-allocation", "cpu=10", "--claim-zones", "--kube-version", "1.34,1.37"], capsys)
    assert rc == 0 and calls == {"load": 1, "simulate": 2}
    calls.update(load=0, simulate=0)
    rc, _, _ = checked(["check", "-f", path, "--min-capacity", "deployment/web=1"], capsys)
    assert rc == 0 and calls == {"load": 1, "simulate": 0}


def test_a_pod_preemption_deletes_is_not_placed(tmp_path, capsys):
    """A 4-cpu node runs `low` (3 cpu, a pod of no controller); `high` (3 cpu, priority 1000) preempts it: high
    binds, low is deleted and nothing recreates it. fullyPlaced of low fails (deleted by preemption), of high
    holds."""
    def pod(name: str, priority: int, on: str | None = None) -> dict:
        spec = {"priority": priority, "containers": [{"name": "c", "resources": {"requests": {"cpu": "3"}}}],
                **({"nodeName": on} if on else {})}
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}

    path = write(tmp_path / "c.yaml", node("n1"), pod("low", 0, "n1"), pod("high", 1000))
    rc, data, _ = checked(["check", "-f", path, "--fully-placed", "low", "--fully-placed", "high"], capsys)
    low, high = (o for o in data["assertions"] if o["assertion"] == "fullyPlaced")
    assert rc == 1 and (low["status"], low["actual"]) == ("failed", 0)
    assert low["evidence"] == ["default/low: deleted by preemption"]
    assert (high["status"], high["evidence"]) == ("passed", ["default/high on n1"])
