"""API-server admission of the pods a scenario creates (kubefit.manifests.admission), through `kubefit simulate`.

Every expected value is derived in the test's docstring from the upstream sources named there
(plugin/pkg/admission/limitranger/admission.go, plugin/pkg/admission/runtimeclass/admission.go,
plugin/pkg/admission/defaulttolerationseconds/admission.go, pkg/apis/core/v1/defaults.go,
pkg/apis/core/validation ValidateLimitRange, pkg/util/tolerations), not copied from kubefit's output.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kubefit.manifests.admission import merge_tolerations
from tests_support import run_json

MI = 1024 * 1024
NODE = """apiVersion: v1
kind: Node
metadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}{labels}}}}}
spec: {{taints: [{taints}]}}
status: {{allocatable: {{cpu: "8", memory: 16Gi, pods: "110"}}}}
"""
LIMIT_RANGE = """apiVersion: v1
kind: LimitRange
metadata: {{name: limits, namespace: {namespace}}}
spec: {{limits: [{limits}]}}
"""
RUNTIME_CLASS = """apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: gvisor}
handler: runsc
overhead: {podFixed: {cpu: 250m, memory: 64Mi}}
scheduling:
  nodeSelector: {sandbox: "true"}
  tolerations: [{key: sandbox, operator: Exists, effect: NoSchedule}]
"""


def node(name: str = "n1", labels: str = "", taints: str = "") -> str:
    return NODE.format(name=name, labels=labels, taints=taints)


def pod(name: str = "p", spec: str = "containers: [{name: c, image: x}]", meta: str = "") -> str:
    return f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}{meta}}}\nspec: {{{spec}}}\n"


def scenario(tmp_path: Path, *docs: str) -> str:
    path = tmp_path / "scenario.yaml"
    path.write_text("---\n".join(docs))
    return str(path)


def simulate(capsys, path: str, *extra: str) -> tuple[int, dict, str]:
    return run_json(capsys, "simulate", "-f", path, "--tie-break", "first", *extra)


def error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, err
    return lines[0]


# --------------------------------------------------------------------------- defaulting and LimitRanger

def test_limit_range_defaults_containers_and_init_containers(tmp_path, capsys):
    """LimitRange `default: {cpu: 500m, memory: 256Mi}`, `defaultRequest: {cpu: 100m}`.

    SetDefaults_LimitRangeItem gives the item defaultRequest memory 256Mi (a default without a default request).
    The pod's container has no resources: PodMutateLimitFunc gives it requests cpu 100m, memory 256Mi. Its init
    container has `limits: {memory: 1Gi}`: SetDefaults_Pod copies the limit into its requests first, then
    LimitRanger adds cpu 100m. The pod's request (PodRequests) is max(Σ containers, init peak) per resource:
    cpu max(100m, 100m) = 100m, memory max(256Mi, 1Gi) = 1Gi.
    """
    path = scenario(tmp_path, node(), LIMIT_RANGE.format(namespace="default", limits=(
        "{type: Container, default: {cpu: 500m, memory: 256Mi}, defaultRequest: {cpu: 100m}}")),
        pod(spec="initContainers: [{name: init, image: x, resources: {limits: {memory: 1Gi}}}], "
                 "containers: [{name: app, image: x}]"))
    rc, out, err = simulate(capsys, path)
    assert rc == 0, err
    assert out["final"]["n1"]["requested"]["cpu"] == 100
    assert out["final"]["n1"]["requested"]["memory"] == 1024 * MI
    assert ("admission: LimitRanger: the namespace's LimitRange defaults applied (1 pod, e.g. Pod/p: cpu, memory "
            "request for container app; cpu, memory limit for container app; cpu request for init container init; "
            "cpu limit for init container init)") in out["warnings"]
    assert ("admission: defaulting: container limits copied into the missing requests (1 pod, e.g. Pod/p: memory "
            "for container init)") in out["warnings"]


def test_limits_without_requests_become_requests(tmp_path, capsys):
    """SetDefaults_Pod: `limits: {cpu: 1500m}` and no requests → requests cpu 1500m; `--no-admission` takes the pod
    as given (no request: 0 requested, the non-zero default 100m scored)."""
    path = scenario(tmp_path, node(), pod(spec="containers: [{name: c, image: x, resources: {limits: {cpu: 1500m}}}]"))
    assert simulate(capsys, path)[1]["final"]["n1"]["requested"]["cpu"] == 1500
    assert simulate(capsys, path, "--no-admission")[1]["final"]["n1"]["requested"]["cpu"] == 0


def test_a_stored_pod_is_not_admitted_again(tmp_path, capsys):
    """A pod with `metadata.uid` was stored (and admitted) by an API server, maybe before the LimitRange existed:
    it keeps no request, while the same pod without a uid gets defaultRequest cpu 300m."""
    limits = LIMIT_RANGE.format(namespace="default", limits="{type: Container, defaultRequest: {cpu: 300m}}")
    stored = pod("old", meta=", uid: 7b1c", spec="nodeName: n1, containers: [{name: c, image: x}]")
    rc, out, err = simulate(capsys, scenario(tmp_path, node(), limits, stored, pod("new")))
    assert rc == 0, err
    assert out["final"]["n1"]["requested"]["cpu"] == 300  # old: 0, new: 300m


@pytest.mark.parametrize(("limits", "container", "message"), [
    ("{type: Container, max: {cpu: '1'}}", "{name: c, image: x, resources: {limits: {cpu: '2'}}}",
     # maxConstraint: the limit 2 is above the max 1 (requests 2 copied from the limit are not reached)
     'pods "p" is forbidden: maximum cpu usage per Container is 1, but limit is 2'),
    ("{type: Container, min: {memory: 64Mi}}", "{name: c, image: x, resources: {requests: {memory: 32Mi}}}",
     # SetDefaults_LimitRangeItem: defaultRequest memory = min 64Mi, but the container has its own 32Mi request
     'pods "p" is forbidden: minimum memory usage per Container is 64Mi, but request is 32Mi'),
    ("{type: Container, maxLimitRequestRatio: {cpu: '2'}}",
     "{name: c, image: x, resources: {requests: {cpu: 100m}, limits: {cpu: 500m}}}",
     # limitRequestRatioConstraint: 500 / 100 = 5 milli-ratio 5000 > 2000; the message prints %f of 5
     'pods "p" is forbidden: cpu max limit to request ratio per Container is 2, but provided ratio is 5.000000'),
    ("{type: Pod, max: {cpu: '1'}}",
     "{name: a, image: x, resources: {limits: {cpu: 600m}}}, {name: b, image: x, resources: {limits: {cpu: 600m}}}",
     # podLimits: Σ containers 600m + 600m = 1200m, printed in the first term's format
     'pods "p" is forbidden: maximum cpu usage per Pod is 1, but limit is 1200m'),
])
def test_limit_range_bounds_forbid_a_pod(tmp_path, capsys, limits, container, message):
    path = scenario(tmp_path, node(), LIMIT_RANGE.format(namespace="default", limits=limits),
                    pod(spec=f"containers: [{container}]"))
    rc, _, err = simulate(capsys, path)
    assert rc == 2
    assert error_line(err) == f"error: {path}: Pod/p: spec.containers: {message}"


def test_a_workloads_forbidden_pods_are_not_created(tmp_path, capsys):
    """A Deployment whose template breaks the namespace's max: its ReplicaSet's creates fail (FailedCreate,
    `pods "web-<hash>-" is forbidden: ...`); the scenario loads, the pods are named in a warning, none queued."""
    deployment = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 2, selector: "
                  "{matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: "
                  "c, image: x, resources: {limits: {cpu: '2'}}}]}}}\n")
    path = scenario(tmp_path, node(), LIMIT_RANGE.format(namespace="default", limits="{type: Container, max: "
                                                                                       "{cpu: '1'}}"), deployment)
    rc, out, err = simulate(capsys, path)
    assert rc == 0, err
    assert out["steps"] == []
    [note] = [w for w in out["warnings"] if w.startswith("Deployment/web")]
    assert note.startswith('Deployment/web: its controller cannot create 2 pod(s): pods "web-')
    assert note.endswith('-" is forbidden: maximum cpu usage per Container is 1, but limit is 2')


def test_a_limit_range_whose_default_exceeds_its_max_is_refused(tmp_path, capsys):
    """`default: {cpu: '2'}, max: {cpu: '1'}`: SetDefaults_LimitRangeItem first copies the default into
    defaultRequest (2); ValidateLimitRange then finds, for cpu, defaultRequest 2 > max 1 (bad value: the default
    request) and default 2 > max 1 (bad value: upstream passes the max). v1.34 prints a Quantity bad value as
    its JSON string; the two errors are aggregated in brackets."""
    path = scenario(tmp_path, node(), LIMIT_RANGE.format(namespace="default", limits=(
        "{type: Container, default: {cpu: '2'}, max: {cpu: '1'}}")))
    rc, _, err = simulate(capsys, path)
    assert rc == 2
    assert error_line(err) == (
        f'error: {path}: LimitRange/limits: [spec.limits[0].defaultRequest[cpu]: Invalid value: "2": default request '
        f'value 2 is greater than max value 1, spec.limits[0].default[cpu]: Invalid value: "1": default value 2 is '
        f'greater than max value 1]')


def test_a_limit_range_in_another_namespace_does_not_apply(tmp_path, capsys):
    """LimitRanger lists the LimitRanges of the pod's own namespace only."""
    path = scenario(tmp_path, node(), LIMIT_RANGE.format(namespace="other", limits="{type: Container, "
                                                                                    "defaultRequest: {cpu: 300m}}"),
                    pod())
    assert simulate(capsys, path)[1]["final"]["n1"]["requested"]["cpu"] == 0


# --------------------------------------------------------------------------- RuntimeClass

def test_runtime_class_adds_overhead_node_selector_and_tolerations(tmp_path, capsys):
    """setOverhead: spec.overhead = podFixed (cpu 250m, memory 64Mi), added to the pod's request (100m → 350m);
    setScheduling: nodeSelector sandbox=true (only n2 has it) and the toleration of n2's `sandbox:NoSchedule`
    taint merged in, so the pod goes to n2, which it could not tolerate before."""
    path = scenario(tmp_path, node("n1"), node("n2", labels=", sandbox: 'true'",
                                                taints="{key: sandbox, value: x, effect: NoSchedule}"),
                    RUNTIME_CLASS, pod(spec="runtimeClassName: gvisor, containers: [{name: c, image: x, resources: "
                                            "{requests: {cpu: 100m, memory: 100Mi}}}]"))
    rc, out, err = simulate(capsys, path)
    assert rc == 0, err
    assert out["placement"] == {"n2": 1}
    assert out["final"]["n2"]["requested"]["cpu"] == 350
    assert out["final"]["n2"]["requested"]["memory"] == 164 * MI


@pytest.mark.parametrize(("spec", "message"), [
    ("runtimeClassName: gvisor, nodeSelector: {sandbox: 'false'}",
     # setScheduling: the pod's value differs from the class's for the same key
     "spec.nodeSelector.sandbox: pods \"p\" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] "
     "= true; pod.spec.nodeSelector[sandbox] = false"),
    ("runtimeClassName: gvisor, overhead: {cpu: 100m}",
     # setOverhead: an overhead already set must equal podFixed
     "spec.overhead: pods \"p\" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined "
     "Overhead"),
    ("overhead: {cpu: 100m}",
     # validateOverhead: an overhead without a RuntimeClass defining one
     "spec.overhead: pods \"p\" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass "
     "defined Overhead"),
    ("runtimeClassName: kata",
     # prepareObjects: the lister and the live lookup both miss it
     "spec.runtimeClassName: pods \"p\" is forbidden: pod rejected: RuntimeClass \"kata\" not found"),
])
def test_runtime_class_refusals(tmp_path, capsys, spec, message):
    path = scenario(tmp_path, node(), RUNTIME_CLASS, pod(spec=f"{spec}, containers: [{{name: c, image: x}}]"))
    rc, _, err = simulate(capsys, path)
    assert rc == 2
    assert error_line(err) == f"error: {path}: Pod/p: {message}"


def test_an_equal_overhead_is_admitted(tmp_path, capsys):
    """setOverhead accepts an overhead equal (Semantic.DeepEqual: by value) to podFixed: 0.25 cpu == 250m."""
    path = scenario(tmp_path, node(), RUNTIME_CLASS, node("n2", labels=", sandbox: 'true'"),
                    pod(spec="runtimeClassName: gvisor, overhead: {cpu: '0.25', memory: 64Mi}, "
                             "containers: [{name: c, image: x}]"))
    rc, out, err = simulate(capsys, path)
    assert rc == 0, err
    assert out["final"]["n2"]["requested"]["cpu"] == 250


# --------------------------------------------------------------------------- DefaultTolerationSeconds

def test_default_toleration_seconds_tolerates_not_ready_no_execute(tmp_path, capsys):
    """DefaultTolerationSeconds adds `node.kubernetes.io/not-ready:NoExecute` and `unreachable:NoExecute`
    tolerations (300 s) to a pod that has none: a node tainted only `not-ready:NoExecute` is then feasible
    (TaintToleration filters NoSchedule and NoExecute taints). As given (`--no-admission`) the pod tolerates
    nothing and stays pending."""
    path = scenario(tmp_path, node(taints="{key: node.kubernetes.io/not-ready, effect: NoExecute}"), pod())
    rc, out, err = simulate(capsys, path)
    assert rc == 0, err
    assert out["placement"] == {"n1": 1}
    assert any(w.startswith("admission: DefaultTolerationSeconds:") and "(n1)" in w for w in out["warnings"])
    rc, out, err = simulate(capsys, path, "--no-admission")
    assert out["placement"] == {} and "untolerated taint" in out["steps"][0]["message"]


def test_default_toleration_seconds_is_silent_where_it_changes_nothing(tmp_path, capsys):
    """Without a not-ready/unreachable NoExecute taint anywhere the tolerations change no answer: no note."""
    out = simulate(capsys, scenario(tmp_path, node(), pod()))[1]
    assert not any("DefaultTolerationSeconds" in w for w in out.get("warnings", []))


@pytest.mark.parametrize(("first", "second", "merged"), [
    # tolerations_test.go "merge redundant": an Exists toleration of a key is a superset of an Equal one
    ([{"key": "foo", "operator": "Exists", "effect": "NoSchedule"}],
     [{"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule"}],
     [{"key": "foo", "operator": "Exists", "effect": "NoSchedule"}]),
    # an empty effect matches every effect: the superset comes later and wins
    ([{"key": "foo", "operator": "Exists", "effect": "NoSchedule"}],
     [{"key": "foo", "operator": "Exists"}],
     [{"key": "foo", "operator": "Exists"}]),
    # equal tolerations: the first is kept once
    ([{"key": "a", "operator": "Exists"}], [{"key": "a", "operator": "Exists"}], [{"key": "a", "operator": "Exists"}]),
    # NoExecute: tolerating 300 s is a superset of tolerating 60 s (isSuperset: t's seconds must not exceed ss's)
    ([{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}],
     [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
     [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]),
    # different keys: both kept, in order
    ([{"key": "a", "operator": "Exists"}], [{"key": "b", "operator": "Exists"}],
     [{"key": "a", "operator": "Exists"}, {"key": "b", "operator": "Exists"}]),
])
def test_merge_tolerations_keeps_the_supersets(first, second, merged):
    """`tolerations.MergeTolerations` (pkg/util/tolerations): a toleration is dropped when another one of the
    union tolerates a superset of it (NoExecute: a toleration with tolerationSeconds is a superset only of those
    with fewer or equal seconds)."""
    assert merge_tolerations(first, second) == merged


# --------------------------------------------------------------------------- DefaultStorageClass

def test_a_claim_without_class_gets_the_default_class(tmp_path, capsys):
    """DefaultStorageClass: a claim with no storageClassName (and no beta annotation) gets the class annotated
    `storageclass.kubernetes.io/is-default-class: "true"`; here a WaitForFirstConsumer class whose allowed
    topology is zone b, so the pod using the claim can go only to n2 (zone b)."""
    sc = ("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: zonal, annotations: "
          "{storageclass.kubernetes.io/is-default-class: 'true'}}\nprovisioner: ebs.csi.aws.com\n"
          "volumeBindingMode: WaitForFirstConsumer\nallowedTopologies: [{matchLabelExpressions: "
          "[{key: topology.kubernetes.io/zone, values: [b]}]}]\n")
    claim = ("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec: {accessModes: "
             "[ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n")
    path = scenario(tmp_path, node("n1", labels=", topology.kubernetes.io/zone: a"),
                    node("n2", labels=", topology.kubernetes.io/zone: b"), sc, claim,
                    pod(spec="volumes: [{name: d, persistentVolumeClaim: {claimName: data}}], "
                             "containers: [{name: c, image: x}]"))
    rc, out, err = simulate(capsys, path)
    assert rc == 0, err
    assert out["placement"] == {"n2": 1}
    assert any(w.startswith("DefaultStorageClass admission:") and "'zonal'" in w for w in out["warnings"])
