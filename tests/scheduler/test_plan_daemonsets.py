"""`plan` with DaemonSets: every added node brings the pods of the DaemonSets that admit it (hand-computed)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kubefit
from tests_support import run_json

NODE = "apiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}{labels}}}}}\n" \
       "spec: {{taints: [{taints}]}}\nstatus: {{allocatable: {{cpu: \"{cpu}\", memory: 16Gi, pods: \"110\"}}}}\n"
WEB = """apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web}
spec:
  replicas: 6
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      tolerations: [{key: dedicated, operator: Exists}]
      containers: [{name: c, resources: {requests: {cpu: "2"}}}]
"""
AGENT = """apiVersion: apps/v1
kind: DaemonSet
metadata: {{name: agent}}
spec:
  selector: {{matchLabels: {{app: agent}}}}
  template:
    metadata: {{labels: {{app: agent}}}}
    spec:
      nodeSelector: {{{selector}}}
      tolerations: [{tolerations}]
      containers: [{{name: c, resources: {{requests: {{cpu: "1"}}}}}}]
"""
TAINT = "{key: dedicated, value: infra, effect: NoSchedule}"


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def scenario(tmp_path: Path, agent: str | None, template_labels: str = "", template_taints: str = "",
             template_cpu: str = "4") -> tuple[list[str], str]:
    """Files (the DaemonSet first, so `simulate` queues its pods first too) and the template's file."""
    files = [write(tmp_path, "agent.yaml", agent)] if agent else []
    files.append(write(tmp_path, "cluster.yaml", NODE.format(name="existing-1", labels=", pool: infra", taints="",
                                                             cpu="4") + "---\n" + WEB))
    template = write(tmp_path, "tpl.yaml", NODE.format(name="tpl", labels=template_labels, taints=template_taints,
                                                       cpu=template_cpu))
    return files, template


def plan_json(capsys, files: list[str], template: str) -> dict:
    args = ["plan", "--node-template", template]
    for f in files:
        args += ["-f", f]
    rc, data, err = run_json(capsys, *args)
    assert rc == 0, err
    return data


def simulate_with_added(capsys, tmp_path: Path, files: list[str], template: str, names: list[str]) -> dict:
    """`simulate` of the scenario plus plain copies of the template named `names` (it expands the DaemonSet)."""
    docs = []
    for name in names:
        body = yaml.safe_load(Path(template).read_text())
        body["metadata"]["name"] = body["metadata"]["labels"]["kubernetes.io/hostname"] = name
        docs.append(body)
    args = ["simulate"]
    for f in [*files, write(tmp_path, "added.yaml", yaml.safe_dump_all(docs))]:
        args += ["-f", f]
    rc, data, err = run_json(capsys, *args)
    assert rc == 0, err
    return data


AGENT_ALL = AGENT.format(selector="", tolerations="")
AGENT_INFRA_ONLY = AGENT.format(selector="pool: infra", tolerations="")
AGENT_TOLERATING = AGENT.format(selector="", tolerations="{key: dedicated, operator: Equal, value: infra}")


@pytest.mark.parametrize(("agent", "taints", "add"), [
    (None, "", 2),  # 6 web of 2 cpu: 2 on the existing node, 4 on two 4-cpu nodes
    (AGENT_ALL, "", 5),  # the agent takes 1 cpu everywhere: 1 web per node, 5 new nodes
    (AGENT_INFRA_ONLY, "", 3),  # runs on existing-1 only: 1 web there, 5 left at 2 per new node
    (AGENT_ALL, TAINT, 3),  # the tainted template gets no agent (not tolerated): as above
    (AGENT_TOLERATING, TAINT, 5),  # tolerated: an agent on every new node again
], ids=["no-daemonset", "everywhere", "selector-excludes-template", "taint-not-tolerated", "taint-tolerated"])
def test_daemonset_pods_take_each_added_node_first(tmp_path, capsys, agent, taints, add):
    files, template = scenario(tmp_path, agent, template_taints=taints)
    data = plan_json(capsys, files, template)
    assert data["add"] == {"tpl": add}
    assert data["cannotFit"] == []
    steps = [s for s in data["simulation"]["steps"] if s["pod"].startswith("agent-")]
    on_new = sorted(s["node"] for s in steps if s["node"] != "existing-1")
    admitted = agent is AGENT_ALL and not taints or agent is AGENT_TOLERATING
    assert on_new == (sorted(data["nodesAdded"]) if admitted else [])
    assert all(re.fullmatch(r"agent-[bcdfghjklmnpqrstvwxz2456789]{5}", s["pod"]) for s in steps)
    assert len({s["pod"] for s in steps}) == len(steps)
    web = [s for s in data["simulation"]["steps"] if s["pod"].startswith("web-")]
    assert len(web) == 6 and all(s["node"] for s in web)
    # independently: `simulate` of the planned cluster as plain files places every pod; one node fewer does not
    sim = simulate_with_added(capsys, tmp_path, files, template, data["nodesAdded"])
    assert sim["unschedulable"] == 0
    sim = simulate_with_added(capsys, tmp_path, files, template, data["nodesAdded"][1:])
    assert sim["unschedulable"] > 0


def test_template_that_cannot_hold_its_daemonset_pods_is_named(tmp_path, capsys):
    files, template = scenario(tmp_path, AGENT_ALL, template_cpu="500m")
    rc, data, err = run_json(capsys, "plan", "--node-template", template, *[a for f in files for a in ("-f", f)])
    assert rc == 0, err
    assert data["add"] == {"tpl": 0}  # no 500m node takes a 2-cpu web pod
    notes = [w for w in data["warnings"] if "node template tpl cannot hold its DaemonSet pod agent-" in w]
    assert len(notes) == 1 and "Insufficient cpu" in notes[0]
    assert f"warning: {notes[0]}" in err  # on stderr too, as the CLI's other notes


def test_library_plan_equals_cli_json(tmp_path, capsys):
    files, template = scenario(tmp_path, AGENT_ALL)
    data = plan_json(capsys, files, template)
    assert kubefit.plan(files, [template]).to_dict() == data


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(daemon=st.integers(1, 4000), web=st.integers(500, 4000), replicas=st.integers(1, 7))
def test_added_node_holds_what_its_daemonset_pod_leaves(tmp_path, capsys, daemon, web, replicas):
    """A 4-cpu template under a `daemon`-millicpu DaemonSet holds (4000 − daemon) // web pods of `web` millicpu:
    the plan adds ceil(replicas / that) nodes, or none (every web pod cannot fit) when that is 0."""
    existing = NODE.format(name="existing-1", labels="", taints="", cpu=f"{daemon}m")  # full with its agent
    agent = AGENT_ALL.replace('cpu: "1"', f"cpu: {daemon}m")
    rs = WEB.replace("replicas: 6", f"replicas: {replicas}").replace('cpu: "2"', f"cpu: {web}m")
    files = [write(tmp_path, "agent.yaml", agent), write(tmp_path, "cluster.yaml", existing + "---\n" + rs)]
    template = write(tmp_path, "tpl.yaml", NODE.format(name="tpl", labels="", taints="", cpu="4"))
    data = plan_json(capsys, files, template)
    per_node = (4000 - daemon) // web
    assert data["add"] == {"tpl": -(-replicas // per_node) if per_node else 0}
    assert len(data["cannotFit"]) == (0 if per_node else replicas)


def test_a_planner_makes_each_copy_once_and_the_same_as_fresh(tmp_path):
    """`Planner._copies` keeps each copy (node, ResourceSlices, DaemonSet pods) for the plan's later trials: for
    counts asked in any order, what it gives equals what `copies`, `copy_slices` and a fresh controller
    (`NewNodeDaemons.pods_for`) make for that count, and a copy asked again is the same object."""
    from decimal import Decimal

    from kubefit.manifests.admission import admitter
    from kubefit.manifests.scenario import load_scenario
    from kubefit.manifests.templates import Template, load_templates
    from kubefit.manifests.workloads import NewNodeDaemons
    from kubefit.planning.plan import Planner, copies, copy_slices
    from kubefit.scheduler.config import load_configuration

    files, template = scenario(tmp_path, AGENT.format(selector="", tolerations=""))
    dra = Path(__file__).resolve().parents[2] / "examples" / "dra"
    nodes = load_scenario([template]).nodes
    templates = [*load_templates([str(dra / "dgx-node.yaml")]),
                 *(Template(n, Decimal(1)) for n in nodes)]
    s = load_scenario(files)
    planner = Planner(s, load_configuration(None), templates)
    seen = {}
    for counts in ([2, 3], [1, 1], [4, 0], [0, 5], [2, 3]):
        added, slices, daemons = planner._copies(counts)
        taken, fresh = {n.name for n in s.nodes}, []
        for t, count in zip(templates, counts, strict=True):
            fresh += copies(t, count, taken)
        assert added == fresh
        assert slices == [x for t, n in zip([templates[0]] * counts[0] + [templates[1]] * counts[1], fresh, strict=True)
                          for x in copy_slices(t, n.name)]
        assert daemons == NewNodeDaemons(s.workloads, admitter(s)).pods_for(fresh)
        assert len(daemons) == sum(counts)  # the agent admits both templates: one pod per copy
        assert len(slices) == counts[0] * len(templates[0].slices) > 0 or counts[0] == 0
        for node in added:
            assert seen.setdefault(node.name, node) is node
