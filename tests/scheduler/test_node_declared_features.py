"""NodeDeclaredFeatures (KEP-5328) against verdicts derived by hand from the upstream sources, not kubefit's output:

- v1.36.3 `pkg/scheduler/framework/plugins/nodedeclaredfeatures/nodedeclaredfeatures.go`: `New` builds a
  disabled plugin without the gate (PreFilter Skip); PreFilter Skips a pod whose `InferForPodScheduling` is
  empty; Filter returns UnschedulableAndUnresolvable "node(s) didn't match Pod's required features" unless
  the requirements are a subset of `nodeInfo.GetNodeDeclaredFeatures()`, which `framework/types.go` sets to
  `ndf.DefaultFramework.TryMap(node.Status.DeclaredFeatures)` (featureset.go: a merge walk of the node's
  list against the registry's sorted names, dropping unknown names).
- v1.35.4 (openshift-kni/scheduler-plugins' vendor tree): the node's set is `NewFeatureSet(declared...)`
  (every name), the reason "node declared features check failed - unsatisfied requirements: " + the missing
  names joined by ", "; the gate is alpha (off by default), so the default profile lacks the plugin.
- component-helpers `features/`: RestartAllContainersOnContainerExits is required by a container or init
  container with a restartPolicyRules action RestartAllContainers (v1.35+); UserNamespacesHostNetworkSupport
  by hostNetwork true with hostUsers false (registered from v1.36 only).
"""

from __future__ import annotations

import copy
import json

import pytest

from kubefit.k8s import declaredfeatures
from kubefit.k8s.version import for_minor
from kubefit.scheduler.config.scheme import scheme_for
from tests_support import run_json, score_items

RESTART = "RestartAllContainersOnContainerExits"
USERNS = "UserNamespacesHostNetworkSupport"
V136 = "node(s) didn't match Pod's required features"
V135 = "node declared features check failed - unsatisfied requirements: "
GATE_ON_135 = ("--kube-version", "1.35", "--feature-gates", "NodeDeclaredFeatures=true")
V136_ARGS = ("--kube-version", "1.36")


def _node(name: str, declared: list[str] | None) -> dict:
    status: dict = {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}
    if declared is not None:
        status["declaredFeatures"] = declared
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "status": status}


def _pod(*, rules: list | None = None, init_rules: list | None = None, **spec) -> dict:
    container: dict = {"name": "c", "image": "img", "resources": {"requests": {"cpu": "100m"}}}
    if rules is not None:
        container["restartPolicyRules"] = rules
    body: dict = {"containers": [container], **spec}
    if init_rules is not None:
        body["initContainers"] = [{"name": "i", "image": "img", "restartPolicyRules": init_rules}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": body}


RESTART_ALL = [{"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}]
NODES = [
    _node("declares", [RESTART]),
    _node("bare", None),
    _node("empty", []),
    _node("both", [RESTART, USERNS]),
    _node("unknown-first", ["Aardvark", RESTART]),  # unknown names are dropped by TryMap, the rest found
    _node("unsorted", [USERNS, RESTART]),  # TryMap's merge walk passes RESTART once it has met USERNS
    _node("userns", [USERNS]),
]


def _score(tmp_path, capsys, pod: dict, *args: str, nodes: list[dict] = NODES, suffix: str = "json") -> dict:
    return score_items(tmp_path, capsys, [*nodes, pod], *args, suffix=suffix)


def _refused(out: dict) -> dict[str, tuple[str, list[str]]]:
    return {n: (s["code"], s["reasons"]) for n, s in out["filter"].items()
            if s.get("plugin") == "NodeDeclaredFeatures"}


def test_a_restart_all_containers_rule_in_v136(tmp_path, capsys):
    """Required: {RestartAllContainersOnContainerExits}. bare/empty/userns lack it; `unsorted` too: TryMap
    meets USERNS > every registered name before it, sets USERNS, and the walk ends (j == 5) before RESTART."""
    out = _score(tmp_path, capsys, _pod(rules=RESTART_ALL), *V136_ARGS)
    want = ("UnschedulableAndUnresolvable", [V136])
    assert _refused(out) == {"bare": want, "empty": want, "unsorted": want, "userns": want}
    assert sorted(out["feasible"]) == ["both", "declares", "unknown-first"]
    assert "NodeDeclaredFeatures" not in out["skippedFilterPlugins"]


def test_a_restart_all_containers_rule_in_v135_with_its_gate(tmp_path, capsys):
    """v1.35 takes every declared name: `unsorted` has RESTART; the reason names the missing feature."""
    out = _score(tmp_path, capsys, _pod(rules=RESTART_ALL), *GATE_ON_135)
    want = ("UnschedulableAndUnresolvable", [V135 + RESTART])
    assert _refused(out) == {"bare": want, "empty": want, "userns": want}
    assert sorted(out["feasible"]) == ["both", "declares", "unknown-first", "unsorted"]


def test_an_init_containers_rule_requires_the_feature_too(tmp_path, capsys):
    out = _score(tmp_path, capsys, _pod(rules=[{"action": "Restart"}], init_rules=RESTART_ALL), *V136_ARGS)
    assert sorted(out["feasible"]) == ["both", "declares", "unknown-first"]


@pytest.mark.parametrize("rules", [[{"action": "Restart", "exitCodes": {"operator": "In", "values": [1]}}], []])
def test_other_rules_require_nothing(tmp_path, capsys, rules):
    out = _score(tmp_path, capsys, _pod(rules=rules), *V136_ARGS)
    assert "NodeDeclaredFeatures" in out["skippedFilterPlugins"] and len(out["feasible"]) == len(NODES)


def test_host_network_without_host_users_in_v136(tmp_path, capsys):
    """hostNetwork true + hostUsers false requires UserNamespacesHostNetworkSupport (v1.36's registry)."""
    out = _score(tmp_path, capsys, _pod(hostNetwork=True, hostUsers=False), *V136_ARGS)
    want = ("UnschedulableAndUnresolvable", [V136])
    assert _refused(out) == {n["metadata"]["name"]: want for n in NODES
                             if n["metadata"]["name"] not in ("both", "unsorted", "userns")}


def test_both_requirements_in_v136(tmp_path, capsys):
    out = _score(tmp_path, capsys, _pod(rules=RESTART_ALL, hostNetwork=True, hostUsers=False), *V136_ARGS)
    assert out["feasible"] == ["both"]


def test_host_network_without_host_users_is_unknown_to_v135(tmp_path, capsys):
    """v1.35's registry has no UserNamespacesHostNetworkSupport: nothing inferred, PreFilter Skip."""
    out = _score(tmp_path, capsys, _pod(hostNetwork=True, hostUsers=False), *GATE_ON_135)
    assert "NodeDeclaredFeatures" in out["skippedFilterPlugins"] and len(out["feasible"]) == len(NODES)


@pytest.mark.parametrize("spec", [{"hostNetwork": True}, {"hostNetwork": True, "hostUsers": True},
                                  {"hostNetwork": False, "hostUsers": False}, {"hostUsers": False}, {}])
def test_a_pod_requiring_nothing_is_skipped(tmp_path, capsys, spec):
    for args in (V136_ARGS, GATE_ON_135):
        out = _score(tmp_path, capsys, _pod(**spec), *args)
        assert "NodeDeclaredFeatures" in out["skippedFilterPlugins"] and len(out["feasible"]) == len(NODES)


def test_gate_off_in_v135_leaves_the_plugin_out_of_the_default_profile(tmp_path, capsys):
    assert "NodeDeclaredFeatures" not in [name for name, _w in scheme_for(for_minor(35)).default_multipoint]
    assert [name for name, _w in scheme_for(for_minor(36)).default_multipoint][-2:] == ["DefaultBinder",
                                                                                 "NodeDeclaredFeatures"]
    out = _score(tmp_path, capsys, _pod(rules=RESTART_ALL), "--kube-version", "1.35")
    assert "NodeDeclaredFeatures" not in out["skippedFilterPlugins"] and len(out["feasible"]) == len(NODES)


def test_the_gate_off_in_v136_disables_the_plugin(tmp_path, capsys):
    """`--feature-gates NodeDeclaredFeatures=false`: not in the default profile."""
    out = _score(tmp_path, capsys, _pod(rules=RESTART_ALL), *V136_ARGS, "--feature-gates",
                 "NodeDeclaredFeatures=false")
    assert len(out["feasible"]) == len(NODES)


def test_a_profile_enabling_it_with_the_gate_off_skips_every_pod(tmp_path, capsys):
    """`New` without the gate: a plugin whose PreFilter returns Skip."""
    from kubefit.api.core import Pod
    from kubefit.scheduler.plugins.registry import build

    plugin = build("NodeDeclaredFeatures", None, version=for_minor(35))
    assert plugin is not None and not plugin.enabled
    assert plugin.required(Pod(name="p", required_features=(RESTART,))) == ()
    assert build("NodeDeclaredFeatures", None, version=for_minor(34)) is None


def test_v134_does_not_know_the_plugin(tmp_path, capsys):
    out = _score(tmp_path, capsys, _pod(rules=RESTART_ALL), "--kube-version", "1.34")
    assert "NodeDeclaredFeatures" not in out["skippedFilterPlugins"] and len(out["feasible"]) == len(NODES)


@pytest.mark.parametrize("suffix", ["json", "yaml"])
@pytest.mark.parametrize("stream", [False, True])
def test_both_decoding_roads_give_one_requirement(tmp_path, capsys, monkeypatch, suffix, stream):
    """decode_pod and fastpod (the streaming reader, here for a small file) infer alike, YAML and JSON."""
    monkeypatch.setenv("KUBEFIT_STREAM", "always" if stream else "0")
    pod = _pod(rules=[{"action": "Restart"}], init_rules=RESTART_ALL, hostNetwork=True, hostUsers=False)
    pod["spec"]["priority"] = 0  # (fastpod takes admitted pods only)
    out = _score(tmp_path, capsys, pod, *V136_ARGS, suffix=suffix)
    assert out["feasible"] == ["both"]
    from kubefit.api.core import raw_is_json
    from kubefit.manifests.scenario import load_scenario

    (decoded,) = load_scenario([tmp_path / f"cluster.{suffix}"], admission=False).pods
    assert raw_is_json(decoded) is stream  # (fastpod keeps the manifest's JSON)
    assert decoded.required_features == (RESTART, USERNS)


def test_the_two_roads_decode_equal_pods():
    import orjson

    from kubefit.manifests.documents import Document
    from kubefit.manifests.fastpod import FastPods
    from kubefit.manifests.load import decode_pod

    for pod in (_pod(rules=RESTART_ALL), _pod(init_rules=RESTART_ALL, hostNetwork=True, hostUsers=False),
                _pod(rules=[None, {"action": "Restart"}], hostNetwork=True, hostUsers=None), _pod()):
        pod["spec"]["priority"] = 0
        fast = FastPods().decode(orjson.dumps(pod), "f.json", 0)
        assert fast is not None
        want = decode_pod(Document(copy.deepcopy(pod), "f.json", 0), [])
        assert fast[0] == want


@pytest.mark.parametrize("field, value, message", [
    ("hostNetwork", "true", "spec.hostNetwork: must be true or false, got a string 'true'"),
    ("hostUsers", 0, "spec.hostUsers: must be true or false, got an integer 0")])
def test_a_non_boolean_host_field_is_refused(tmp_path, capsys, field, value, message):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [NODES[0], _pod(**{field: value})]}))
    rc, _out, err = run_json(capsys, "score", "-f", str(path))
    assert rc == 2 and message in err and str(path) in err, err


@pytest.mark.parametrize("value, message", [
    ("RestartAllContainersOnContainerExits", "status.declaredFeatures: must be a list"),
    ([RESTART, 3], "status.declaredFeatures[1]: must be a string")])
def test_declared_features_must_be_a_list_of_strings(tmp_path, capsys, value, message):
    node = copy.deepcopy(NODES[0])
    node["status"]["declaredFeatures"] = value
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [node, _pod()]}))
    rc, _out, err = run_json(capsys, "score", "-f", str(path))
    assert rc == 2 and message in err and str(path) in err and "declares" in err, err


def test_try_map_is_a_merge_walk():
    known = declaredfeatures.registry(36)
    assert known == tuple(sorted(known))
    assert declaredfeatures.try_map([RESTART, USERNS], known) == {RESTART, USERNS}
    assert declaredfeatures.try_map([USERNS, RESTART], known) == {USERNS}
    assert declaredfeatures.try_map(["Zzz", RESTART], known) == set()  # "Zzz" > every name: the walk ends
    assert declaredfeatures.try_map([RESTART, RESTART], known) == {RESTART}
    assert declaredfeatures.registry(34) == ()
