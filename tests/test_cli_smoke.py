"""The installed `kubefit` console script, run as a real process: exit codes and stderr as a user sees them.

One process per verb with a representative bad input (the in-process table in test_bad_input.py covers
the many shapes), plus a usage error, a success (0) and a negative answer to a check (1).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from test_bad_input import BINDING, CLUSTER, NODE, POD, docs

KUBEFIT = Path(sys.executable).with_name("kubefit")
pytestmark = pytest.mark.skipif(not KUBEFIT.exists(), reason="console script not installed next to the interpreter")


def kubefit(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(KUBEFIT), *args], capture_output=True, text=True, input=stdin, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "COLUMNS": "100"})


BAD_NODE = docs(NODE.replace("cpu: '4'", "cpu: 12x"), POD)

SMOKE = [
    (["score"], BAD_NODE, "Node/n1: status.allocatable.cpu"),
    (["simulate"], BAD_NODE, "Node/n1: status.allocatable.cpu"),
    (["capacity"], BAD_NODE, "Node/n1: status.allocatable.cpu"),
    (["summary"], BAD_NODE, "Node/n1: status.allocatable.cpu"),
    (["models", "classify"], BAD_NODE, "Node/n1: status.allocatable.cpu"),
    (["models", "validate"], CLUSTER.replace("cpu: '4'", "cpu: 1.2.3"), "Cluster/m1: status.resourceSummary"),
    (["estimate"], docs(CLUSTER, BINDING.replace("500m", "12x")), "ResourceBinding/rb: spec.replicaRequirements"),
    (["schedule"], docs(CLUSTER, BINDING.replace("replicas: 2", "replicas: two")), "ResourceBinding/rb: spec.replicas"),
    (["config", "view"], "kind: KubeSchedulerConfiguration\napiVersion: kubescheduler.config.k8s.io/v1\nprofiles: x\n",
     "profiles"),
    (["config", "convert"], "a: [1\n", "malformed YAML"),
    (["config", "validate"], "", "holds no objects"),
]


@pytest.mark.parametrize(("verb", "content", "fragment"), SMOKE, ids=["-".join(s[0]) for s in SMOKE])
def test_bad_input_exits_2_with_one_line(verb, content, fragment, tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(content)
    done = kubefit(*verb, "-f", str(path))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    errors = [line for line in done.stderr.splitlines() if not line.startswith("warning: ")]
    assert errors == [errors[0]] and errors[0].startswith(f"error: {path}: ") and fragment in errors[0]


def test_stdin_and_usage_errors_exit_2():
    done = kubefit("score", "-f", "-", stdin="- 1\n")
    assert done.returncode == 2 and done.stderr.startswith("error: -: document #1: expected an object")
    done = kubefit("score", "-f", "x.yaml", "-o", "xml")
    assert done.returncode == 2 and done.stderr.startswith("error: Invalid value for '-o'")
    assert len(done.stderr.splitlines()) == 1
    done = kubefit("import", "alibaba-gpu", "absent-nodes.csv", "absent-pods.csv")
    assert done.returncode == 2 and done.stderr.strip() == "error: absent-nodes.csv: no such file"


def test_success_is_0_and_a_failed_schedule_is_1(tmp_path):
    scenario = tmp_path / "ok.yaml"
    scenario.write_text(docs(NODE, POD))
    done = kubefit("score", "-f", str(scenario), "-o", "json")
    assert done.returncode == 0 and json.loads(done.stdout)
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(docs(CLUSTER, BINDING.replace(
        "replicas: 2,", "replicas: 2, placement: {replicaScheduling: {replicaSchedulingType: Foo}},")))
    done = kubefit("schedule", "-f", str(fleet), "-o", "json")
    assert done.returncode == 1 and "unsupported replica scheduling strategy" in json.loads(done.stdout)["error"]


def test_a_verb_that_keeps_its_result_exits_with_all_its_output(tmp_path):
    """`simulate` and `capacity` end the process without freeing what they built (`cli.keep`): the whole
    output still arrives, redirected to a file or through a pipe, with the verb's exit code (1 when a
    drain leaves a pod nowhere to go, 0 otherwise)."""
    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "out.json"
    with out.open("w") as fh:
        done = subprocess.run([str(KUBEFIT), "simulate", "-f", str(root / "examples/workload/cluster.yaml"),
                               "-o", "json", "--tie-break", "first"], stdout=fh, stderr=subprocess.PIPE, text=True,
                              timeout=120)
    assert done.returncode == 0 and done.stderr == ""
    assert json.loads(out.read_text())["scheduled"] == 20
    done = kubefit("simulate", "-f", str(root / "examples/drain/cluster.yaml"), "--drain", "node-a,node-c",
                   "-o", "json")
    assert done.returncode == 1 and json.loads(done.stdout)["nodeActions"]["allPlaced"] is False
    done = kubefit("capacity", "-f", str(root / "examples/workload/cluster.yaml"), "-o", "json")
    assert done.returncode == 0 and json.loads(done.stdout)["count"] >= 0


def test_json_is_written_as_to_json_writes_it(capsys):
    """`emit` writes orjson's UTF-8 bytes to stdout's buffer: the text `to_json` gives, non-ASCII and large
    integers (the standard encoder's) included."""
    from kubefit.report.output import emit, to_json

    for data in ({"a": ["é", "\u2028", 1.5, None], "b": {"c": True}}, {"big": 2**70}, []):
        emit(data, "json")
        assert capsys.readouterr().out == to_json(data) + "\n"
