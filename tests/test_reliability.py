"""Issue 12's reproducers, one test each: no crash, no hang, no memory blow-up, nothing dropped silently.

Runs that could hang, blow up or crash the interpreter (alias bombs, deep nesting, huge exponents) go
through `fuzzing.run_isolated`: a forked child bounded in time and address space.
"""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import pytest

from fuzzing import Mutant, judge, preload, run_isolated
from kubefit.cli import main
from kubefit.errors import escape_control, shorten
from kubefit.k8s.quantity import MAX_INT64, QuantityError, parse_quantity, scheduler_units
from kubefit.manifests.parse import MAX_DEPTH

NODE = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n"


def pod(requests: str, name: str = "p") -> str:
    return (f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {json.dumps(name)}}}\n"
            f"spec: {{containers: [{{name: c, resources: {{requests: {requests}}}}}]}}\n")


@pytest.fixture(scope="module", autouse=True)
def _warm() -> None:
    preload()  # the verbs imported once: every forked run starts warm


def run(capsys, argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def one_error(err: str) -> str:
    """The single `error:` line of stderr (every other line a warning)."""
    lines = err.splitlines()
    errors = [ln for ln in lines if ln.startswith("error: ")]
    assert len(errors) == 1 and all(ln.startswith(("error: ", "warning: ")) for ln in lines), err
    return errors[0]


def isolated(tmp_path, text: str, *verb: str, suffix: str = ".yaml"):
    path = tmp_path / f"input{suffix}"
    path.write_text(text)
    outcome = run_isolated([*verb, "-f", str(path)], timeout=20)
    verdict = judge(Mutant(text, "reproducer", "reproducer"), str(path), outcome)
    assert verdict.problem == "", (verdict, outcome.stderr)
    return outcome


# --------------------------------------------------------------------------- quantities

@pytest.mark.parametrize(("text", "nanos"), [
    ("1E", 10**18 * 10**9),                       # exa, a valid suffix
    ("1Ei", 2**60 * 10**9),
    ("8Ei", MAX_INT64 * 10**9),                   # BinarySI above 2^63-1 is capped there, as ParseQuantity does
    ("1e-99999999", 1),                           # below a nano: rounds up to 1n, without building 10^99999999
    ("9223372036854775807", MAX_INT64 * 10**9),
])
def test_quantity_edges_parse_exactly(text, nanos):
    assert parse_quantity(text) == nanos


@pytest.mark.parametrize("text", ["1e99999999", "1e2147483648", "1" * 5000, "1" * 60 + "k"])
def test_quantity_too_large_is_refused_up_front(text):
    with pytest.raises(QuantityError, match="too large|suffix"):
        parse_quantity(text)


def test_scheduler_units_saturate_at_int64():
    assert scheduler_units("memory", (2**63) * 10**9) == MAX_INT64
    assert scheduler_units("cpu", MAX_INT64 * 10**9) == MAX_INT64  # milli of 2^63-1 cores


@pytest.mark.parametrize("request_bytes", [str(2**63 - 1), str(2**63)])
@pytest.mark.parametrize("verb", [("score",), ("simulate",), ("capacity", "--max", "3")])
def test_request_at_and_above_2_63_bytes_does_not_crash(tmp_path, verb, request_bytes):
    outcome = isolated(tmp_path, NODE + "---\n" + pod(f"{{memory: '{request_bytes}'}}"), *verb)
    assert outcome.code == 0 and "Insufficient memory" in outcome.stdout


def test_exponent_of_99999999_does_not_hang(tmp_path):
    outcome = isolated(tmp_path, NODE + "---\n" + pod("{cpu: 1e99999999}"), "score")
    assert outcome.code == 2 and "too large" in outcome.stderr and "spec.containers[0].resources.requests.cpu" in \
        outcome.stderr


# --------------------------------------------------------------------------- parsing bounds

def test_integer_of_5000_digits_is_refused_by_name(tmp_path, capsys):
    """In YAML, 5,000 plain digits are a string to Kubernetes (go-yaml v2 resolve.go: ParseInt, ParseUint
    and ParseFloat all fail for range), so the quantity parser refuses it, naming the field."""
    path = tmp_path / "big.yaml"
    path.write_text(NODE.replace("pods: '110'", "pods: " + "7" * 5000))
    code, _, err = run(capsys, ["score", "-f", str(path)])
    line = one_error(err)
    assert code == 2 and f"{path}: Node/n1: status.allocatable.pods: quantity '777" in line and "too large" in line
    assert len(line) < 500  # the value is shortened
    path.write_text(NODE.replace("pods: '110'", "pods: " + "7" * 20))  # beyond uint64: a float, written as an integer
    assert "status.allocatable.pods: integer 777" in one_error(run(capsys, ["score", "-f", str(path)])[2])


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_integer_beyond_int64_is_refused_by_name(tmp_path, capsys, suffix):
    body = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "4", "pods": 2**63}}}
    path = tmp_path / f"node{suffix}"
    path.write_text(json.dumps(body))
    code, _, err = run(capsys, ["score", "-f", str(path)])
    assert code == 2 and f"{path}: Node/n1: status.allocatable.pods: integer 9223372036854775808 is outside int64" \
        in one_error(err)


def test_int64_max_integer_is_accepted(tmp_path, capsys):
    path = tmp_path / "node.yaml"
    path.write_text(NODE.replace("pods: '110'", f"pods: {2**63 - 1}") + "---\n" + pod("{cpu: 1}"))
    assert run(capsys, ["score", "-f", str(path)])[0] == 0


@pytest.mark.parametrize(("text", "where"), [
    (NODE + "---\n" + pod("{cpu: '4', cpu: '64'}"), "Pod/p: spec.containers[0].resources.requests.cpu: duplicate"),
    (NODE.replace("metadata: {name: n1}", "metadata: {name: n1}\nmetadata: {name: n2}"), "Node #1: metadata: duplicate field 'metadata'"),
])
def test_duplicate_yaml_keys_are_refused(tmp_path, capsys, text, where):
    path = tmp_path / "dup.yaml"
    path.write_text(text)
    code, _, err = run(capsys, ["score", "-f", str(path)])
    assert code == 2 and f"{path}: {where}" in one_error(err)


def test_duplicate_json_keys_are_refused(tmp_path, capsys):
    path = tmp_path / "dup.json"
    path.write_text('{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Node", '
                    '"metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "4", "cpu": "64"}}}]}')
    code, _, err = run(capsys, ["score", "-f", str(path)])
    assert code == 2 and f"{path}: Node/n1: items[0].status.allocatable.cpu: duplicate field 'cpu'" in one_error(err)


def test_yaml_merge_keys_may_override(tmp_path, capsys):
    path = tmp_path / "merge.yaml"
    path.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus:\n  allocatable:\n"
                    "    <<: {cpu: '2', memory: 8Gi}\n    cpu: '4'\n    pods: '110'\n---\n" + pod("{cpu: 3}"))
    code, out, _ = run(capsys, ["score", "-f", str(path), "-o", "json"])
    assert code == 0 and json.loads(out)["feasible"] == ["n1"]  # cpu 4 (the mapping's own) fits 3


def test_alias_bomb_is_refused_fast_and_small(tmp_path):
    """Fast and in little memory: the forked child's peak counts what it inherits from the test process
    (≈ 1 GB once a worker has replayed the traces), so its growth is what is bounded."""
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    levels += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 12)]
    inherited = int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    outcome = isolated(tmp_path, "\n".join(levels) + "\n", "score")
    assert outcome.code == 2 and "alias" in outcome.stderr
    assert outcome.seconds < 10 and outcome.max_rss_bytes - inherited < 1 << 30


def test_small_aliases_still_work(tmp_path, capsys):
    path = tmp_path / "anchors.yaml"
    path.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus:\n  allocatable: &r {cpu: '4', "
                    "memory: 8Gi, pods: '110'}\n  capacity: *r\n---\n" + pod("{cpu: 1}"))
    assert run(capsys, ["score", "-f", str(path)])[0] == 0


@pytest.mark.parametrize(("text", "suffix"), [
    ("[" * 100_000 + "]" * 100_000, ".json"),     # json: RecursionError; libyaml: a segfault
    (NODE + "---\n" + "{a: " * 100_000 + "1" + "}" * 100_000 + "\n", ".yaml"),
    (NODE + "---\n" + "{a: " * (MAX_DEPTH + 5) + "1" + "}" * (MAX_DEPTH + 5) + "\n", ".yaml"),
    ("".join("  " * i + f"k{i}:\n" for i in range(MAX_DEPTH + 5)) + "  " * (MAX_DEPTH + 5) + "1\n", ".yaml"),
])
def test_deep_nesting_is_refused(tmp_path, text, suffix):
    outcome = isolated(tmp_path, text, "score", suffix=suffix)
    assert outcome.code == 2 and "nested deeper than" in outcome.stderr


def test_input_size_is_bounded_for_stdin(monkeypatch, capsys):
    """`yes | kubefit score -f -`: refused at the bound, not read forever."""
    monkeypatch.setenv("KUBEFIT_MAX_INPUT_BYTES", "4096")
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\n" * 100_000))
    code, _, err = run(capsys, ["score", "-f", "-"])
    assert code == 2 and one_error(err) == ("error: -: input larger than 4096 bytes "
                                            "(KUBEFIT_MAX_INPUT_BYTES raises the limit)")


def test_input_size_is_bounded_for_files(tmp_path, monkeypatch, capsys):
    path = tmp_path / "big.yaml"
    path.write_text(NODE + "---\n" + pod("{cpu: 1}") + "#" * 10_000 + "\n")
    monkeypatch.setenv("KUBEFIT_MAX_INPUT_BYTES", "10000")
    code, _, err = run(capsys, ["score", "-f", str(path)])
    assert code == 2 and f"{path}: input larger than 10000 bytes" in one_error(err)
    monkeypatch.setenv("KUBEFIT_MAX_INPUT_BYTES", "20000")
    assert run(capsys, ["score", "-f", str(path)])[0] == 0


# --------------------------------------------------------------------------- unknown fields

POLICY = ("apiVersion: v1\nkind: Policy\npriorities:\n- name: MostRequestedPriority\n  weight: 1\n"
          "  argumnet: {}\n")
V1BETA2 = ("apiVersion: kubescheduler.config.k8s.io/v1beta2\nkind: KubeSchedulerConfiguration\nprofiles:\n"
           "- pluginConfig:\n  - name: NodeResourcesFit\n    arg: {scoringStrategy: {type: MostAllocated}}\n")
CLUSTER = ("apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: m1}\nspec: {syncMode: Push}\n"
           "status: {resourceSummary: {allocatable: {cpu: '4'}, allocatabel: {cpu: '4'}}}\n")
BINDING = ("apiVersion: work.karmada.io/v1alpha2\nkind: ResourceBinding\nmetadata: {name: rb}\n"
           "spec: {replicas: 2, replicaRequirement: {resourceRequest: {cpu: 500m}}}\n")


def test_unknown_field_in_policy_priority_is_said(tmp_path, capsys):
    path = tmp_path / "policy.yaml"
    path.write_text(POLICY)
    code, out, _ = run(capsys, ["config", "validate", "-f", str(path)])
    assert code == 0 and 'Policy field "priorities[0].argumnet" is not part of the Policy API; ignored' in out


@pytest.mark.parametrize("version", ["v1beta1", "v1beta2", "v1beta3", "v1"])
def test_unknown_field_in_plugin_config_is_refused(tmp_path, capsys, version):
    path = tmp_path / "config.yaml"
    path.write_text(V1BETA2.replace("v1beta2", version))
    code, out, _ = run(capsys, ["config", "validate", "-f", str(path)])
    assert code == 2 and 'unknown field "profiles[0].pluginConfig[0].arg"' in out


@pytest.mark.parametrize(("text", "verb", "where"), [
    (CLUSTER, ("models", "validate"), "Cluster/m1: status.resourceSummary.allocatabel: unknown field"),
    (CLUSTER + "---\n" + BINDING.replace("replicaRequirement:", "replicaRequirements:"), ("estimate",),
     "Cluster/m1: status.resourceSummary.allocatabel: unknown field"),
    (CLUSTER.replace("allocatabel", "allocated") + "---\n" + BINDING, ("schedule",),
     "ResourceBinding/rb: spec.replicaRequirement: unknown field"),
])
def test_unknown_karmada_fields_are_refused(tmp_path, capsys, text, verb, where):
    path = tmp_path / "fleet.yaml"
    path.write_text(text)
    code, _, err = run(capsys, [*verb, "-f", str(path)])
    assert code == 2 and f"{path}: {where}" in one_error(err)


# --------------------------------------------------------------------------- messages

def test_newline_in_a_name_cannot_forge_a_second_error_line(tmp_path, capsys):
    path = tmp_path / "forged.yaml"
    path.write_text(pod("{cpu: 1}", name="p\nerror: all good") + "---\n" + pod("{cpu: x}", name="q"))
    code, _, err = run(capsys, ["score", "-f", str(path)])
    assert code == 2 and len(err.splitlines()) == 1


def test_escape_bytes_never_reach_the_terminal(tmp_path, capsys):
    path = tmp_path / "esc.yaml"
    path.write_text(NODE.replace("n1", "n\\e[31mred") .replace("{name: n\\e[31mred}", '{name: "n\\e[31mred"}')
                    + "---\n" + pod("{cpu: 1}", name="p\x1b[2J"))
    code, out, err = run(capsys, ["score", "-f", str(path)])
    assert code == 0 and "\x1b" not in out + err and "\\x1b[31mred" in out


def test_shorten_and_escape():
    assert escape_control("a\nb\x1b[0m\u202e") == "a\\nb\\x1b[0m\\u202e"
    assert shorten("x" * 500, 20) == "x" * 19 + "… (500 characters)"


@pytest.mark.parametrize(("text", "needle"), [
    (pod("{cpu: 1}"), "the scenario has no Node objects"),
    (NODE, "the scenario has no pending pod"),
])
def test_scenario_refusals_name_the_file(tmp_path, capsys, text, needle):
    path = tmp_path / "s.yaml"
    path.write_text(text)
    code, _, err = run(capsys, ["score", "-f", str(path)])
    assert code == 2 and one_error(err).startswith(f"error: {path}: {needle}")


def test_plot_with_an_unsupported_extension_is_a_usage_error(tmp_path, capsys):
    path = tmp_path / "s.yaml"
    path.write_text(NODE + "---\n" + pod("{cpu: 1}"))
    code, _, err = run(capsys, ["simulate", "-f", str(path), "--plot", str(tmp_path / "out.txt")])
    assert code == 2 and "'--plot'" in one_error(err) and "'txt'" in err
    assert not (tmp_path / "out.txt").exists()


@pytest.mark.parametrize(("score", "field"), [
    ("{enabled: [{name: NodeResourcesMostAllocated}], bogus: 1}", "profiles[0].plugins.score.bogus"),
    ("{disabled: [{name: NodeResourcesLeastAllocated, bogus: 1}]}", "profiles[0].plugins.score.disabled[0].bogus"),
])
def test_unknown_field_in_beta_score_plugins_is_refused(tmp_path, capsys, score, field):
    """The conversion rewrites plugins.score: what it does not carry over must not vanish silently."""
    path = tmp_path / "config.yaml"
    path.write_text("apiVersion: kubescheduler.config.k8s.io/v1beta1\nkind: KubeSchedulerConfiguration\n"
                    f"profiles:\n- plugins:\n    score: {score}\n")
    code, out, _ = run(capsys, ["config", "validate", "-f", str(path)])
    assert code == 2 and f'strict decoding error: unknown field "{field}"' in out


def test_a_complex_mapping_key_is_a_yaml_error_not_a_crash(tmp_path, capsys):
    path = tmp_path / "complex.yaml"
    path.write_text("? [a, b]\n: 1\n")
    code, _, err = run(capsys, ["score", "-f", str(path)])
    assert code == 2 and one_error(err) == f"error: {path}: malformed YAML at line 1, column 3: found unhashable key"
