"""`kubefit check`: every assertion made to hold and to fail on a small scenario whose answer is derived by hand
(each test's docstring says how), bad expectation files refused in one line naming file and field (exit 2),
the JUnit XML (validated against tests/fixtures/junit.xsd), the GitHub annotations and job summary. The action and the
pre-commit hook are tested in test_check_outputs.py."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
import yaml

import kubefit
from kubefit.checks.expectations import from_options
from kubefit.cli import main
from xsdcheck import Schema

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
EXAMPLE = ROOT / "examples" / "check"
PRE_COMMIT = Path(sys.executable).with_name("pre-commit")


def node(name: str, cpu: int = 4, unschedulable: bool = False) -> str:
    spec = "\nspec: {unschedulable: true}" if unschedulable else ""
    return (f"apiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}}}}}{spec}\n"
            f"status: {{allocatable: {{cpu: \"{cpu}\", memory: 16Gi, pods: \"110\"}}}}\n")


def pod(name: str, cpu: int, on: str | None = None, selector: str | None = None) -> str:
    spec = {"containers": [{"name": "c", "resources": {"requests": {"cpu": str(cpu), "memory": "1Gi"}}}]}
    if on:
        spec["nodeName"] = on
    if selector:
        spec["nodeSelector"] = {"kubernetes.io/hostname": selector}
    return yaml.safe_dump({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})


def deployment(name: str, replicas: int, cpu: int) -> str:
    return yaml.safe_dump({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}, "spec": {
        "replicas": replicas, "selector": {"matchLabels": {"app": name}}, "template": {
            "metadata": {"labels": {"app": name}},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": str(cpu), "memory": "1Gi"}}}]}}}})


def scenario(path: Path, *docs: str) -> str:
    path.write_text("---\n".join(docs), encoding="utf-8")
    return str(path)


def judged(files, **options):
    """The one outcome of checking `files` with the assertion `options` (`from_options` keywords)."""
    baseline = options.pop("baseline", ())
    templates = options.pop("node_templates", ())
    result = kubefit.check(files, baseline=baseline, assertions=from_options(**options), node_templates=templates,
                           warn=lambda _: None)
    assert len(result.outcomes) == 1
    return result.outcomes[0]


def run(args: list[str], capsys) -> tuple[int, str, str]:
    rc = main(args)
    out, err = capsys.readouterr()
    return rc, out, err


# --------------------------------------------------------------------------- each assertion, holding and failing

@pytest.fixture
def one_node(tmp_path):
    """One 4-cpu node; pending pods a (3 cpu) then b (2 cpu): a binds (1 cpu left), b fits nowhere."""
    return scenario(tmp_path / "one.yaml", node("n1"), pod("a", 3), pod("b", 2))


def test_max_pending_holds_and_fails(one_node):
    """One pod (b) stays pending: ≤ 1 holds, ≤ 0 fails with b and its FitError as evidence."""
    held = judged([one_node], max_pending="1")
    assert (held.status, held.actual) == ("passed", 1)
    failed = judged([one_node], max_pending="0")
    assert (failed.status, failed.actual) == ("failed", 1)
    assert failed.evidence[0].startswith("default/b: 0/1 nodes are available: 1 Insufficient cpu")


def test_max_pending_against_the_baseline(one_node, tmp_path):
    """The baseline (the node and a alone) leaves 0 pending, the candidate 1 (b): no more than the baseline
    fails, b said newly pending; against itself (1 and 1) it holds."""
    base = scenario(tmp_path / "base.yaml", node("n1"), pod("a", 3))
    failed = judged([one_node], max_pending="baseline", baseline=[base])
    assert (failed.status, failed.actual) == ("failed", 1)
    assert failed.evidence[0].startswith("default/b (newly pending): ")
    assert judged([one_node], max_pending="baseline", baseline=[one_node]).status == "passed"


def test_check_runs_no_stranded_capacity(one_node, monkeypatch):
    """No assertion reads stranded capacity (a trial per pending shape): the check's simulations skip it, the
    verdicts unchanged (b pending), while `simulate` of the same file still computes it."""
    import kubefit.scheduler.simulate as simulation

    asked = []
    real = simulation.stranded_capacity
    monkeypatch.setattr(simulation, "stranded_capacity", lambda *a, **k: asked.append(1) or real(*a, **k))
    failed = judged([one_node], max_pending="0")
    assert (failed.status, failed.actual) == ("failed", 1) and asked == []
    assert judged([one_node], min_allocation=["cpu=50"]).actual == 75.0 and asked == []
    assert judged([one_node], max_pending="baseline", baseline=[one_node]).status == "passed" and asked == []
    assert [s["pod"] for s in kubefit.simulate([one_node], warn=lambda _: None).stranded] == ["b"] and asked == [1]


def test_fully_placed(tmp_path):
    """A 4-cpu node; web: 2 replicas of 1 cpu (both bind: 2 cpu), big: 2 replicas of 3 cpu queued after them
    (the first needs 3 of the 2 left: neither binds). web holds, big fails with its 2 pods pending."""
    path = scenario(tmp_path / "d.yaml", node("n1"), deployment("web", 2, 1), deployment("big", 2, 3))
    web = judged([path], fully_placed=["deployment/web"])
    assert (web.status, web.actual) == ("passed", 2)
    big = judged([path], fully_placed=["deploy/big"])
    assert (big.status, big.actual) == ("failed", 0)
    assert big.message == "simulate places 0 of default/deployment/big's 2 pod(s)"
    assert all("Insufficient cpu" in line for line in big.evidence)


def test_max_nodes_added(tmp_path):
    """A 4-cpu node full (a bound 4-cpu pod); two pending 3-cpu pods; a 4-cpu template holds one of them each:
    plan adds 2. ≤ 2 holds, ≤ 1 fails with `add tpl: 2`."""
    path = scenario(tmp_path / "p.yaml", node("n1"), pod("full", 4, on="n1"), pod("p1", 3), pod("p2", 3))
    template = scenario(tmp_path / "tpl.yaml", node("tpl"))
    assert judged([path], max_nodes_added=2, node_templates=[template]).status == "passed"
    failed = judged([path], max_nodes_added=1, node_templates=[template])
    assert (failed.status, failed.actual) == ("failed", 2)
    assert failed.evidence[0] == "add tpl: 2"


def test_min_removable_nodes(tmp_path):
    """n1 and n2 each run a bare pod (no controller: cluster-autoscaler keeps their nodes), n3 and n4 are empty
    (nothing to move; tried first): consolidate removes 2. ≥ 2 holds, ≥ 3 fails saying why n1 stays."""
    path = scenario(tmp_path / "c.yaml", node("n1"), node("n2"), node("n3"), node("n4"), pod("bare", 1, on="n1"),
                    pod("bare2", 1, on="n2"))
    assert judged([path], min_removable_nodes=2).status == "passed"
    failed = judged([path], min_removable_nodes=3)
    assert (failed.status, failed.actual) == ("failed", 2)
    assert "n1 stays: pod default/bare declares no controller" in "\n".join(failed.evidence)


def test_min_capacity(tmp_path):
    """A 4-cpu node running p (1 cpu): 3 more copies of p fit (3 cpu free). ≥ 3 holds, ≥ 4 fails with the
    count per node and why the count stopped."""
    path = scenario(tmp_path / "cap.yaml", node("n1"), pod("p", 1, on="n1"))
    assert judged([path], min_capacity=["p=3"]).status == "passed"
    failed = judged([path], min_capacity=["p=4"])
    assert (failed.status, failed.actual) == ("failed", 3)
    assert failed.evidence[0] == "n1: 3 copies"
    assert failed.evidence[1].startswith("stopped (Unschedulable): 0/1 nodes are available: 1 Insufficient cpu")


def test_min_allocation(tmp_path):
    """A 4-cpu node; pending pods of 1 and 2 cpu both bind: cpu allocation 3/4 = 75 %. ≥ 75 holds, ≥ 80 fails;
    a resource no node has fails, saying so."""
    path = scenario(tmp_path / "a.yaml", node("n1"), pod("a", 1), pod("b", 2))
    held = judged([path], min_allocation=["cpu=75"])
    assert (held.status, held.actual) == ("passed", 75.0)
    failed = judged([path], min_allocation=["cpu=80"])
    assert (failed.status, failed.actual) == ("failed", 75.0)
    assert failed.evidence[0].startswith("allocation: cpu 75.0 %")
    gpu = judged([path], min_allocation=["nvidia.com/gpu=1"])
    assert (gpu.status, gpu.message) == ("failed", "no node has nvidia.com/gpu allocatable")


def test_config_valid(tmp_path, one_node):
    """No configuration: kube-scheduler's defaults, valid. percentageOfNodesToScore 101 is refused by
    kube-scheduler's validation ([0, 100]): configValid fails with its message, and an assertion that needs a
    simulation cannot run (error), so the check fails."""
    assert judged([one_node], config_valid=True).status == "passed"
    bad = scenario(tmp_path / "bad.yaml", "apiVersion: kubescheduler.config.k8s.io/v1\n"
                   "kind: KubeSchedulerConfiguration\npercentageOfNodesToScore: 101\n")
    result = kubefit.check([one_node, bad], assertions=from_options(config_valid=True, max_pending="1"),
                           warn=lambda _: None)
    pending, valid = result.outcomes  # options in the order of `kubefit check --help`
    assert (valid.status, valid.actual) == ("failed", False)
    assert any("percentageOfNodesToScore" in line for line in valid.evidence)
    assert pending.status == "error" and not result.passed


def test_config_valid_on_each_version(one_node):
    """examples/versions/most-allocated-with-shape.yaml: v1.34 accepts a shape beside MostAllocated, v1.36+
    forbid it (kubernetes#132120): on 1.34 and 1.37 the assertion holds once and fails once."""
    shape = str(ROOT / "examples" / "versions" / "most-allocated-with-shape.yaml")
    result = kubefit.check([one_node, shape], assertions=from_options(config_valid=True), kube_versions="1.34,1.37",
                           warn=lambda _: None)
    assert [(o.kube_version, o.status) for o in result.outcomes] == [("1.34", "passed"), ("1.37", "failed")]
    assert "must be nil when type is not RequestedToCapacityRatio" in result.outcomes[1].evidence[0]


def test_max_pod_moves(tmp_path):
    """x (1 cpu) is pinned to n1 by its nodeSelector in the baseline and to n2 in the candidate: 1 pod moves.
    ≤ 1 holds, ≤ 0 fails with `default/x: n1 → n2`."""
    base = scenario(tmp_path / "base.yaml", node("n1"), node("n2"), pod("x", 1, selector="n1"))
    cand = scenario(tmp_path / "cand.yaml", node("n1"), node("n2"), pod("x", 1, selector="n2"))
    assert judged([cand], max_pod_moves=1, baseline=[base]).status == "passed"
    failed = judged([cand], max_pod_moves=0, baseline=[base])
    assert (failed.status, failed.actual, failed.evidence) == ("failed", 1, ["default/x: n1 → n2"])
    assert judged([base], max_pod_moves=0, baseline=[base]).status == "passed"


def zoned_storage() -> list[str]:
    """Nodes na (zone a) and nb (zone b); pv-aff pinned to zone a by its required nodeAffinity, pv-lab labelled
    zone a (no affinity); claims aff and lab bound to them (bind completed)."""
    def zone_node(name: str, zone: str) -> dict:
        return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}},
            "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}}}

    def pv(name: str, claim: str, **extra) -> dict:
        spec = {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/d"},
                "claimRef": {"namespace": "default", "name": claim}, **extra.pop("spec", {})}
        return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name, **extra},
                "spec": spec, "status": {"phase": "Bound"}}

    def pvc(name: str, volume: str) -> dict:
        return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {
            "name": name, "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                     "volumeName": volume}, "status": {"phase": "Bound"}}

    zone_a = {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]}]}]}
    docs = [zone_node("na", "a"), zone_node("nb", "b"),
            pv("pv-aff", "aff", spec={"nodeAffinity": {"required": zone_a}}),
            pv("pv-lab", "lab", labels={"topology.kubernetes.io/zone": "a"}), pvc("aff", "pv-aff"), pvc("lab", "pv-lab")]
    return [yaml.safe_dump(d) for d in docs]


def claim_pod(name: str, claim: str, on: str | None = None) -> str:
    spec = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}],
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]}
    if on:
        spec["nodeName"] = on
    return yaml.safe_dump({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})


def test_claim_zones(tmp_path):
    """Holds: pending p1 (claim aff) and p2 (claim lab) can only go to na, VolumeBinding keeping nb out of
    pv-aff's zone a and VolumeZone out of pv-lab's: both run in zone a, 0 of 2 wrong. Fails: q1 (aff) and q2
    (lab) bound to nb (zone b) in the input: 2 of 2 on another zone, each named with its node, claim and volume."""
    held = judged([scenario(tmp_path / "held.yaml", *zoned_storage(), claim_pod("p1", "aff"), claim_pod("p2", "lab"))],
                  claim_zones=True)
    assert (held.status, held.actual) == ("passed", 0)
    assert held.evidence == ["default/p1 on na (zone a): claim default/aff → volume pv-aff (zone a)",
                             "default/p2 on na (zone a): claim default/lab → volume pv-lab (zone a)"]
    failed = judged([scenario(tmp_path / "failed.yaml", *zoned_storage(), claim_pod("q1", "aff", on="nb"),
                              claim_pod("q2", "lab", on="nb"))], claim_zones=True)
    assert (failed.status, failed.actual) == ("failed", 2)
    assert failed.message == ("simulate leaves 2 of 2 pod(s) using a zoned volume on another zone than their "
                              "claim's volume")
    assert failed.evidence == ["default/q1 on nb (zone b): claim default/aff → volume pv-aff (zone a)",
                               "default/q2 on nb (zone b): claim default/lab → volume pv-lab (zone a)"]


def test_claim_zones_from_the_option_and_the_file(tmp_path, capsys):
    """`--claim-zones` and `claimZones: true` give the same failing assertion (exit 1); `claimZones: false`
    asserts nothing, so the file must name another; a pod without a claim is not checked (0 of 0, holds)."""
    bad = scenario(tmp_path / "bad.yaml", *zoned_storage(), claim_pod("q1", "aff", on="nb"))
    rc, out, _ = run(["check", "-f", bad, "--claim-zones", "-o", "json"], capsys)
    data = json.loads(out)
    assert rc == 1 and data["assertions"][0]["assertion"] == "claimZones"
    assert data["assertions"][0]["title"] == "no pod on another zone than its claim"
    path = expect_file(tmp_path, "assertions: {claimZones: true}\n")
    rc, out, _ = run(["check", "-f", bad, "--expect", path, "-o", "json"], capsys)
    assert rc == 1 and json.loads(out)["assertions"][0]["evidence"] == [
        "default/q1 on nb (zone b): claim default/aff → volume pv-aff (zone a)"]
    path = expect_file(tmp_path, "assertions: {claimZones: false}\n")
    rc, _, err = run(["check", "-f", bad, "--expect", path], capsys)
    assert rc == 2 and "names no assertion" in err
    plain = scenario(tmp_path / "plain.yaml", node("n1"), pod("a", 1))
    rc, out, _ = run(["check", "-f", plain, "--claim-zones"], capsys)
    assert rc == 0 and "1 of 1 assertion hold" in out


# --------------------------------------------------------------------------- the command: exit codes and bad input

def test_example_fails_with_exit_1(capsys):
    """examples/check: two 4-cpu nodes with three 1-cpu web pods, plus two 3-cpu batch pods: 9 cpu of 8, one batch
    pod pending where the baseline has none; one template node makes room."""
    rc, out, _ = run(["check", "-f", str(EXAMPLE / "candidate.yaml"), "--baseline", str(EXAMPLE / "baseline.yaml"),
                      "--expect", str(EXAMPLE / "expectations.yaml"), "-o", "json"], capsys)
    data = json.loads(out)
    assert rc == 1 and not data["passed"]
    assert {o["assertion"]: o["status"] for o in data["assertions"]} == {
        "maxPending": "failed", "fullyPlaced": "failed", "maxNodesAdded": "passed", "maxPodMoves": "passed",
        "configValid": "passed"}
    assert [o["status"] for o in data["assertions"] if o["assertion"] == "fullyPlaced"] == ["passed", "failed"]
    assert data["moves"] == {"default": []}


def test_all_hold_exit_0(capsys, one_node):
    rc, out, _ = run(["check", "-f", one_node, "--max-pending", "1", "--min-allocation", "cpu=75"], capsys)
    assert rc == 0
    assert "2 of 2 assertions hold" in out


def expect_file(tmp_path: Path, body: str) -> str:
    path = tmp_path / "expect.yaml"
    path.write_text("apiVersion: kubefit.io/v1alpha1\nkind: SchedulingExpectations\n" + textwrap.dedent(body),
                    encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(("body", "field", "says"), [
    ("assertions: {maxPendng: 0}\n", "assertions.maxPendng", "unknown field 'maxPendng'"),
    ("assertions: {maxPending: -1}\n", "assertions.maxPending", "must be 0 or more"),
    ("assertions: {maxPending: many}\n", "assertions.maxPending", "must be an integer"),
    ("assertions: {minAllocation: {cpu: 150}}\n", "assertions.minAllocation.cpu", "from 0 to 100"),
    ("assertions: {minCapacity: {deployment/web: '3'}}\n", "assertions.minCapacity.deployment/web", "must be an integer"),
    ("assertions: {fullyPlaced: deployment/web}\n", "assertions.fullyPlaced", "must be a list"),
    ("assertions: {configValid: 'yes'}\n", "assertions.configValid", "must be true or false"),
    ("assertions: {claimZones: 1}\n", "assertions.claimZones", "must be true or false"),
    ("assertions: {}\n", "assertions", "names no assertion"),
    ("kubeVersions: ['1.20']\nassertions: {maxPending: 0}\n", "kubeVersions[0]", "unsupported Kubernetes version"),
    ("spec: {}\nassertions: {maxPending: 0}\n", "spec", "unknown field 'spec'"),
    ("assertions: {maxNodesAdded: 1}\n", "assertions.maxNodesAdded", "node templates"),
    ("assertions: {maxPodMoves: 0}\n", "assertions.maxPodMoves", "give --baseline"),
])
def test_bad_expectation_file(body, field, says, tmp_path, capsys, one_node):
    """Each is refused in one line naming the file and the field, exit 2."""
    path = expect_file(tmp_path, body)
    rc, out, err = run(["check", "-f", one_node, "--expect", path], capsys)
    assert rc == 2 and not out
    assert len(err.strip().splitlines()) == 1
    assert path in err and field in err and says in err


def test_bad_api_version_and_kind(tmp_path, capsys, one_node):
    path = tmp_path / "e.yaml"
    path.write_text("apiVersion: kubefit.io/v1\nkind: SchedulingExpectations\nassertions: {maxPending: 0}\n")
    rc, _, err = run(["check", "-f", one_node, "--expect", str(path)], capsys)
    assert rc == 2 and str(path) in err and "apiVersion" in err and "kubefit.io/v1alpha1" in err
    path.write_text("apiVersion: kubefit.io/v1alpha1\nkind: Expectations\nassertions: {maxPending: 0}\n")
    rc, _, err = run(["check", "-f", one_node, "--expect", str(path)], capsys)
    assert rc == 2 and "kind: must be SchedulingExpectations" in err


@pytest.mark.parametrize(("args", "says"), [
    (["--max-pending", "some"], "--max-pending: must be a count"),
    (["--min-capacity", "web"], "--min-capacity: must be POD=COPIES"),
    (["--min-allocation", "cpu=101"], "--min-allocation: must be RESOURCE=PERCENT"),
    (["--fully-placed", "deployment/nothing"], "--fully-placed: no pod of deployment/nothing"),
    ([], "nothing to check"),
])
def test_bad_options(args, says, capsys, one_node):
    rc, _, err = run(["check", "-f", one_node, *args], capsys)
    assert rc == 2 and says in err and len(err.strip().splitlines()) == 1


def test_baseline_of_another_cluster_is_refused(tmp_path, capsys, one_node):
    """A baseline sharing no node and no pod with the candidate cannot be compared: exit 2 naming it."""
    other = scenario(tmp_path / "other.yaml", node("elsewhere"), pod("z", 1))
    rc, _, err = run(["check", "-f", one_node, "--baseline", other, "--max-pending", "baseline"], capsys)
    assert rc == 2 and f"{other}: --baseline: shares no node and no pod" in err


def test_the_file_names_the_scenario(tmp_path, capsys):
    """`files` and `baseline` in the expectation file, relative to it: `kubefit check --expect FILE` alone."""
    scenario(tmp_path / "cluster.yaml", node("n1"), pod("a", 1))
    path = expect_file(tmp_path, "files: [cluster.yaml]\nbaseline: [cluster.yaml]\n"
                                 "assertions: {maxPending: baseline, maxPodMoves: 0}\n")
    rc, out, _ = run(["check", "--expect", path], capsys)
    assert rc == 0 and "2 of 2 assertions hold" in out


# --------------------------------------------------------------------------- JUnit, GitHub, HTML

def test_junit_validates(tmp_path, capsys):
    """One test case per assertion per version, a failure with its evidence, valid against the JUnit XSD."""
    out = tmp_path / "check.xml"
    rc, _, _ = run(["check", "-f", str(EXAMPLE / "candidate.yaml"), "--baseline", str(EXAMPLE / "baseline.yaml"),
                    "--expect", str(EXAMPLE / "expectations.yaml"), "--kube-version", "1.34,1.37",
                    "--junit", str(out), "-o", "json"], capsys)
    assert rc == 1
    root = ET.parse(out).getroot()
    assert Schema(ROOT / "tests" / "fixtures" / "junit.xsd").validate(root) == []
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["shop (Kubernetes 1.34)", "shop (Kubernetes 1.37)"]
    assert root.get("tests") == "12" and root.get("failures") == "4" and root.get("errors") == "0"
    cases = suites[0].findall("testcase")
    assert [c.get("name") for c in cases] == [f"{t} (Kubernetes 1.34)" for t in (
        "pending pods ≤ the baseline", "deployment/web fully placed", "deployment/batch fully placed",
        "nodes added by plan ≤ 1", "pods moved from the baseline ≤ 0", "scheduler configuration valid")]
    failure = cases[0].find("failure")
    assert failure.get("type") == "maxPending" and "newly pending" in failure.text
    assert cases[1].find("failure") is None


def test_the_checker_refuses_what_the_schema_refuses():
    """The stdlib checker is not vacuous: a missing required attribute, a bad count and a stray element."""
    schema = Schema(ROOT / "tests" / "fixtures" / "junit.xsd")
    bad = ET.fromstring('<testsuites><testsuite tests="x"><testcase/><bogus/></testsuite></testsuites>')
    errors = "\n".join(schema.validate(bad))
    assert "'name' is required" in errors and "tests='x'" in errors and "<bogus>" in errors


def test_github_annotations_and_summary(tmp_path, capsys, monkeypatch, one_node):
    """With GITHUB_ACTIONS=true a failure is an ::error line (escaped as the toolkit escapes: `:` and `,` in
    properties, newlines in the message); the summary is appended to $GITHUB_STEP_SUMMARY."""
    summary = tmp_path / "summary.md"
    summary.write_text("before\n")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    rc, out, _ = run(["check", "-f", one_node, "--max-pending", "0", "--min-allocation", "cpu=75"], capsys)
    assert rc == 1
    errors = [line for line in out.splitlines() if line.startswith("::")]
    assert len(errors) == 1
    # at the pod's own line: the node is lines 1-4, `---`, pod a lines 6-16, `---`, pod b from line 18
    assert errors[0].startswith(f"::error file={one_node},line=18,title=kubefit check%3A pending pods ≤ 0::"
                                "default/pod/b: 1 pod(s) pending: 0/1 nodes are available")
    assert errors[0].endswith("%0Asimulate leaves 1 pod(s) pending (at most 0)")
    text = summary.read_text()
    assert text.startswith("before\n### ❌ kubefit check")
    assert "| ❌ | pending pods ≤ 0 | simulate | 1 |" in text and "| ✅ | cpu allocation ≥ 75 % | simulate | 75.0 |" in text
    assert "<details open><summary>pending pods ≤ 0: why</summary>" in text  # a failure: open
    assert "<details><summary>cpu allocation ≥ 75 %: evidence</summary>" in text  # a pass: its evidence folded
    # -o json keeps stdout JSON: the annotations go to stderr (the runner reads both)
    rc, out, err = run(["check", "-f", one_node, "--max-pending", "0", "-o", "json"], capsys)
    assert json.loads(out)["passed"] is False and err.count("::error ") == 1


def test_no_annotations_outside_github(capsys, monkeypatch, one_node):
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    _, out, err = run(["check", "-f", one_node, "--max-pending", "0"], capsys)
    assert "::error" not in out + err


def test_html_report(tmp_path, capsys):
    page = tmp_path / "check.html"
    rc, _, _ = run(["check", "-f", str(EXAMPLE / "candidate.yaml"), "--baseline", str(EXAMPLE / "baseline.yaml"),
                    "--expect", str(EXAMPLE / "expectations.yaml"), "--report", str(page)], capsys)
    html = page.read_text()
    assert rc == 1 and "<h1>kubefit check</h1>" in html and "deployment/batch fully placed" in html
    assert "Placed differently from the baseline" in html
