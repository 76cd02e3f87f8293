"""What the API server refuses beyond the admission plugins' changes: pod-level resources below their containers'
(`validatePodResourceConsistency`, kubefit.manifests.podresources) and LimitRanger's bounds on claims
(`PersistentVolumeClaimValidateLimitFunc`, kubefit.manifests.admission), for Pod and PersistentVolumeClaim
documents, pod templates, and the pods and claims controllers create.

Every expected message is derived in the test's docstring from the upstream v1.34 sources named there:
pkg/apis/core/validation/validation.go `validatePodResources` / `validatePodResourceConsistency`,
k8s.io/component-helpers/resource/helpers.go `AggregateContainerRequests` / `AggregateContainerLimits`,
pkg/apis/core/v1/defaults.go `SetDefaults_Pod`, plugin/pkg/admission/limitranger/admission.go
(`minConstraint`, `maxRequestConstraint`, `runLimitFunc`), pkg/controller/statefulset/stateful_pod_control.go
(`CreateStatefulPod`, `createPersistentVolumeClaims`, `recordPodEvent`); not copied from kubefit's output.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from unittest import mock

import pytest

from kubefit.errors import MAX_MESSAGE, InputError, shorten
from kubefit.manifests.decode import decode_quantities
from kubefit.manifests.documents import Document
from kubefit.manifests.podresources import Resources, consistency_errors
from kubefit.manifests.scenario import load_scenario
from test_admission import LIMIT_RANGE, error_line, node, pod, scenario, simulate
from tests_support import run_json

INVALID = 'Invalid value'


def _invalid(path: str, value: str, detail: str) -> str:
    """`field.Invalid(path, quantity.String(), detail)` as `field.Error.Error()` prints it (v1.34: a string bad
    value in Go's %q)."""
    return f'{path}: {INVALID}: "{value}": {detail}'


def _requests(name: str, pod_value: str, aggregate: str) -> str:
    return _invalid(f"spec.resources.requests[{name}]", pod_value,
                    f"must be greater than or equal to aggregate container requests of {aggregate}")


# --------------------------------------------------------------------------- pod-level resources: Pods

@pytest.mark.parametrize(("spec", "errors"), [
    # AggregateContainerRequests: 600m + 400m = 1000m, Add keeps the first term's DecimalSI: String() "1" > 500m
    ("resources: {requests: {cpu: 500m}}, containers: [{name: a, image: x, resources: {requests: {cpu: 600m}}}, "
     "{name: b, image: x, resources: {requests: {cpu: 400m}}}]",
     [_requests("cpu", "500m", "1")]),
    # containers + sidecars: 512Mi + 256Mi = 768Mi; the init container after the sidecar peaks at its own 1Gi plus
    # the sidecar's 256Mi = 1280Mi (printed in 1Gi's BinarySI); max(768Mi, 1280Mi) = 1280Mi > 1Gi
    ("resources: {requests: {memory: 1Gi}}, containers: [{name: app, image: x, resources: {requests: "
     "{memory: 512Mi}}}], initContainers: [{name: side, image: x, restartPolicy: Always, resources: {requests: "
     "{memory: 256Mi}}}, {name: init, image: x, resources: {requests: {memory: 1Gi}}}]",
     [_requests("memory", "1Gi", "1280Mi")]),
    # SetDefaults_Pod first copies the container's limit 2 into its missing request: 2 > the pod-level 1
    ("resources: {requests: {cpu: '1'}}, containers: [{name: a, image: x, resources: {limits: {cpu: '2'}}}]",
     [_requests("cpu", "1", "2")]),
    # defaultPodRequests: pod-level cpu request = the aggregate 200m (≤ 1, fine); the container's limit 1500m is
    # above the pod-level limit 1, reported at upstream's path containers[0][cpu].limits
    ("resources: {limits: {cpu: '1'}}, containers: [{name: a, image: x, resources: {requests: {cpu: 200m}, "
     "limits: {cpu: 1500m}}}]",
     [_invalid("spec.resources.containers[0][cpu].limits", "1500m", "must be less than or equal to pod limits of 1")]),
    # hugepages: the pod-level limit 256Mi becomes the pod-level request (defaultPodRequests: a supported resource
    # from the limit), below the container's 512Mi request; the aggregate container limit 512Mi is above the
    # pod-level limit; and so is the one container's limit: three errors, in upstream's order, aggregated
    ("resources: {limits: {cpu: '1', hugepages-2Mi: 256Mi}}, containers: [{name: a, image: x, resources: "
     "{requests: {cpu: 100m, hugepages-2Mi: 512Mi}, limits: {hugepages-2Mi: 512Mi}}}]",
     [_requests("hugepages-2Mi", "256Mi", "512Mi"),
      _invalid("spec.resources.limits[hugepages-2Mi]", "256Mi",
               "must be greater than or equal to aggregate container limits of 512Mi"),
      _invalid("spec.resources.containers[0][hugepages-2Mi].limits", "512Mi",
               "must be less than or equal to pod limits of 256Mi")]),
])
def test_pod_level_resources_below_the_containers_make_a_pod_invalid(tmp_path, capsys, spec, errors):
    """`Pod "p" is invalid: ...` (errors.NewInvalid: the kind and name, then the field errors, one bare or several
    in brackets), exit 2, the one error line naming file, object and field."""
    path = scenario(tmp_path, node(), pod(spec=spec))
    with pytest.raises(InputError) as refused:
        load_scenario([path])
    shown = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
    assert refused.value.message == shorten(f'Pod "p" is invalid: {shown}', MAX_MESSAGE)  # a long one shortened
    assert (refused.value.file, refused.value.obj, refused.value.field) == (path, "Pod/p", "spec.resources")
    rc, _, err = simulate(capsys, path)
    assert rc == 2
    assert error_line(err) == f"error: {refused.value}"


@pytest.mark.parametrize("spec", [
    # equal is enough: 600m + 400m = 1 (Cmp > 0 refuses, equality does not)
    "resources: {requests: {cpu: '1'}}, containers: [{name: a, image: x, resources: {requests: {cpu: 600m}}}, "
    "{name: b, image: x, resources: {requests: {cpu: 400m}}}]",
    # a resource the pod does not request at the pod level is not compared (v1.34 skips it; kubernetes#132449):
    # ephemeral-storage and memory requested by the container only
    "resources: {requests: {cpu: 300m}}, containers: [{name: a, image: x, resources: {requests: "
    "{cpu: 100m, memory: 1Gi, ephemeral-storage: 10Mi}}}]",
    # an init container's peak alone: max(100m, 900m) = 900m ≤ 1
    "resources: {requests: {cpu: '1'}}, containers: [{name: a, image: x, resources: {requests: {cpu: 100m}}}], "
    "initContainers: [{name: i, image: x, resources: {requests: {cpu: 900m}}}]",
    # an init container's limit is not compared with the pod-level limit (upstream walks spec.containers only)
    "resources: {limits: {cpu: '1'}}, containers: [{name: a, image: x}], initContainers: [{name: i, image: x, "
    "resources: {requests: {cpu: 100m}, limits: {cpu: '2'}}}]",
])
def test_consistent_pod_level_resources_load(tmp_path, capsys, spec):
    rc, out, err = simulate(capsys, scenario(tmp_path, node(), pod(spec=spec)))
    assert rc == 0, err
    assert [s["pod"] for s in out["steps"]] == ["p"]


def test_every_error_of_an_inconsistent_pod_in_upstreams_order():
    """The hugepages case above in full (the one-line error shortens it): requests, then the hugepages limits,
    then each container's limits."""
    doc = Document({}, "t", 0)

    def q(**values: str) -> dict:
        return decode_quantities({k.replace("_", "-"): v for k, v in values.items()}, doc, "x")
    container = Resources("a", q(cpu="100m", hugepages_2Mi="512Mi"), q(hugepages_2Mi="512Mi"))
    errors = consistency_errors(q(cpu="100m", hugepages_2Mi="256Mi"), q(cpu="1", hugepages_2Mi="256Mi"),
                                [container], [])
    assert [str(e) for e in errors] == [
        _requests("hugepages-2Mi", "256Mi", "512Mi"),
        _invalid("spec.resources.limits[hugepages-2Mi]", "256Mi",
                 "must be greater than or equal to aggregate container limits of 512Mi"),
        _invalid("spec.resources.containers[0][hugepages-2Mi].limits", "512Mi",
                 "must be less than or equal to pod limits of 256Mi")]


def test_limit_range_defaults_are_validated_with_the_pod(tmp_path, capsys):
    """The API server validates a pod after the mutating plugins: pod-level `limits: {cpu: 1}` and containers
    requesting nothing get the pod-level request cpu 1 (defaultPodRequests: no container request, so the limit);
    then LimitRanger gives each of the 3 containers its `defaultRequest` 400m, 1200m in all (DecimalSI: "1200m"),
    above the pod's 1. Without the LimitRange the pod loads."""
    limits = LIMIT_RANGE.format(namespace="default", limits="{type: Container, defaultRequest: {cpu: 400m}}")
    spec = ("resources: {limits: {cpu: '1'}}, containers: [{name: a, image: x}, {name: b, image: x}, "
            "{name: c, image: x}]")
    path = scenario(tmp_path, node(), limits, pod(spec=spec))
    rc, _, err = simulate(capsys, path)
    assert rc == 2
    assert error_line(err) == (f'error: {path}: Pod/p: spec.resources: Pod "p" is invalid: '
                               f'{_requests("cpu", "1", "1200m")}')
    assert simulate(capsys, scenario(tmp_path, node(), pod(spec=spec)))[0] == 0


def test_admission_off_takes_the_pod_as_written(tmp_path, capsys):
    """`--no-admission` takes pods as kube-scheduler's own tests create them, without the API server: the pod
    invalid above loads, and its pod-level request (500m) is what the scheduler counts."""
    spec = ("resources: {requests: {cpu: 500m}}, containers: [{name: a, image: x, resources: {requests: "
            "{cpu: '1'}}}]")
    rc, out, err = simulate(capsys, scenario(tmp_path, node(), pod(spec=spec)), "--no-admission")
    assert rc == 0, err
    assert out["final"]["n1"]["requested"]["cpu"] == 500


# --------------------------------------------------------------------------- pod-level resources: templates

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec: {{{spec}}}
"""


def test_an_inconsistent_template_refuses_its_workload(tmp_path, capsys):
    """ValidatePodTemplateSpec → ValidatePodSpec: the Deployment itself is invalid (exit 2), at the template's
    path: 500m < the container's 1."""
    spec = ("resources: {requests: {cpu: 500m}}, containers: [{name: a, image: x, resources: {requests: "
            "{cpu: '1'}}}]")
    path = scenario(tmp_path, node(), DEPLOYMENT.format(spec=spec))
    rc, _, err = simulate(capsys, path)
    assert rc == 2
    assert error_line(err) == (f'error: {path}: Deployment/web: ' + _invalid(
        "spec.template.spec.resources.requests[cpu]", "500m",
        "must be greater than or equal to aggregate container requests of 1"))


def test_a_template_is_not_defaulted_but_its_pods_are(tmp_path, capsys):
    """A template gets none of SetDefaults_Pod: its container limiting cpu 2 requests nothing, so the template
    (pod-level request 1) is valid and the Deployment loads. Each pod its ReplicaSet creates is defaulted (request
    2 > 1) and invalid: the creates fail, the scenario loads with no pod, and the note quotes the API server's
    error, naming the pod by its generated name (validation runs after name generation)."""
    spec = "resources: {requests: {cpu: '1'}}, containers: [{name: a, image: x, resources: {limits: {cpu: '2'}}}]"
    rc, out, err = simulate(capsys, scenario(tmp_path, node(), DEPLOYMENT.format(spec=spec)))
    assert rc == 0, err
    assert out["steps"] == []
    [note] = [w for w in out["warnings"] if w.startswith("Deployment/web")]
    head, _, tail = note.partition(' is invalid: ')
    assert head.startswith('Deployment/web: its controller cannot create 2 pod(s): Pod "web-')
    assert len(head.rsplit('-', 1)[1]) == len('x7k2p"')  # <replicaset>-<5 chars>
    assert tail == _requests("cpu", "1", "2")


def _pod_list(tmp_path: Path, spec: dict) -> Path:
    """A kubectl-style JSON List holding one pod not stored yet (so it is admitted and validated)."""
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": spec}
    node_body = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {}},
                 "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}}}
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [node_body, body]}))
    return path


def _outcome(path: Path, streamed: bool):
    """The scenario, or the error's type and text, by the stream (msgspec's fast pods) or the reference."""
    with mock.patch.dict(os.environ, {"KUBEFIT_STREAM": "always" if streamed else "0"}):
        try:
            return load_scenario([path])
        except Exception as exc:  # noqa: BLE001 - compared, whatever it is
            return type(exc).__name__, str(exc)


@pytest.mark.parametrize(("requests", "valid"), [("500m", False), ("1", True)])
def test_both_readings_refuse_alike(tmp_path, requests, valid):
    """The streamed reading (fastpod's decoding) and the reference give the same answer: the pod's 1-cpu
    container against a pod-level request of 500m (invalid) or 1 (valid, the scenarios equal)."""
    path = _pod_list(tmp_path, {"resources": {"requests": {"cpu": requests}},
                                "containers": [{"name": "a", "image": "x", "resources": {"requests": {"cpu": "1"}}}]})
    streamed, reference = _outcome(path, True), _outcome(path, False)
    assert streamed == reference
    if valid:
        assert [p.name for p in streamed.pods] == ["p"]
    else:
        assert streamed[1] == (f'{path}: Pod/p: spec.resources: Pod "p" is invalid: '
                               f'{_requests("cpu", "500m", "1")}')


# --------------------------------------------------------------------------- LimitRanger on claims

CLAIM = """apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: {name}{meta}}}
spec: {{accessModes: [ReadWriteOnce], resources: {{requests: {{storage: {storage}}}}}}}
"""
CLAIM_LIMITS = "{type: PersistentVolumeClaim, min: {storage: 1Gi}, max: {storage: 5G}}"


@pytest.mark.parametrize(("storage", "message"), [
    # minConstraint: 500Mi = 524,288,000 bytes < 1Gi = 1,073,741,824
    ("500Mi", "minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi"),
    # maxRequestConstraint: 5Gi = 5,368,709,120 bytes > 5G = 5,000,000,000 (binary above decimal)
    ("5Gi", "maximum storage usage per PersistentVolumeClaim is 5G, but request is 5Gi"),
])
def test_limit_range_bounds_forbid_a_claim(tmp_path, capsys, storage, message):
    """`persistentvolumeclaims "data" is forbidden: ...` (admission.NewForbidden over the plugin's error), exit 2."""
    path = scenario(tmp_path, node(), LIMIT_RANGE.format(namespace="default", limits=CLAIM_LIMITS),
                    CLAIM.format(name="data", meta="", storage=storage))
    rc, _, err = simulate(capsys, path)
    assert rc == 2
    assert error_line(err) == (f'error: {path}: PersistentVolumeClaim/data: spec.resources.requests: '
                               f'persistentvolumeclaims "data" is forbidden: {message}')


@pytest.mark.parametrize(("storage", "meta", "namespace"), [
    ("1Gi", "", "default"),  # the min itself: not below it (observed < enforced refuses)
    ("5G", "", "default"),  # the max itself: not above it
    ("500Mi", ", uid: 9f2c", "default"),  # stored by an API server: admitted when it was created
    ("500Mi", "", "other"),  # a LimitRange of another namespace
])
def test_claims_the_limit_range_admits(tmp_path, capsys, storage, meta, namespace):
    path = scenario(tmp_path, node(), LIMIT_RANGE.format(namespace=namespace, limits=CLAIM_LIMITS),
                    CLAIM.format(name="data", meta=meta, storage=storage))
    assert simulate(capsys, path)[0] == 0


def test_a_claim_is_not_bounded_with_admission_off(tmp_path, capsys):
    path = scenario(tmp_path, node(), LIMIT_RANGE.format(namespace="default", limits=CLAIM_LIMITS),
                    CLAIM.format(name="data", meta="", storage="500Mi"))
    assert simulate(capsys, path, "--no-admission")[0] == 0


STATEFUL_SET = """apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: db}}
spec:
  replicas: 3
  podManagementPolicy: {policy}
  selector: {{matchLabels: {{app: db}}}}
  template:
    metadata: {{labels: {{app: db}}}}
    spec: {{containers: [{{name: c, image: x}}]}}
  volumeClaimTemplates:
  - metadata: {{name: data}}
    spec: {{accessModes: [ReadWriteOnce], resources: {{requests: {{storage: 500Mi}}}}}}
  - metadata: {{name: logs}}
    spec: {{accessModes: [ReadWriteOnce], resources: {{requests: {{storage: 2Gi}}}}}}
"""
EVENT = ('create Pod db-{n} in StatefulSet db failed error: failed to create PVC data-db-{n}: persistentvolumeclaims '
         '"data-db-{n}" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi')


def _stateful(tmp_path: Path, policy: str, *extra: str) -> str:
    return scenario(tmp_path, node(), LIMIT_RANGE.format(namespace="default", limits=CLAIM_LIMITS),
                    STATEFUL_SET.format(policy=policy), *extra)


@pytest.mark.parametrize(("policy", "created", "claims", "failed"), [
    # OrderedReady: db-0's `data` claim (500Mi < 1Gi) is refused, its `logs` claim (2Gi) created, db-0 not; the
    # monotonic pass stops there: db-1 and db-2 are not tried (3 pods not created, no more claims)
    ("OrderedReady", [], ["data-db-1", "logs-db-0"], 3),
    # Parallel: every ordinal is tried; db-1's `data` claim exists (given, 1Gi), so db-1 is created with both
    # claims; db-0 and db-2 fail (their `logs` claims are created)
    ("Parallel", ["db-1"], ["data-db-1", "logs-db-0", "logs-db-1", "logs-db-2"], 2),
])
def test_a_stateful_sets_refused_claims_keep_their_pods_from_being_created(tmp_path, capsys, policy, created, claims,
                                                                          failed):
    """CreateStatefulPod creates a pod only once createPersistentVolumeClaims created all its claims (each claim
    tried; the errors aggregated as `failed to create PVC <name>: <error>`); the FailedCreate event is
    recordPodEvent's `create Pod <pod> in StatefulSet <set> failed error: <err>`."""
    given = CLAIM.format(name="data-db-1", meta="", storage="1Gi")
    path = _stateful(tmp_path, policy, given)
    rc, out, err = simulate(capsys, path)
    assert rc == 0, err
    assert [s["pod"] for s in out["steps"]] == created
    assert f"StatefulSet/db: its controller cannot create {failed} pod(s): {EVENT.format(n=0)}" in out["warnings"]
    names = sorted(c.meta.name for c in load_scenario([path]).objects.of("PersistentVolumeClaim"))
    assert names == claims


def test_a_stateful_sets_claims_without_admission_are_created(tmp_path, capsys):
    """`--no-admission`: no LimitRanger, the three pods and their six claims are created."""
    path = _stateful(tmp_path, "OrderedReady")
    rc, out, err = simulate(capsys, path, "--no-admission")
    assert rc == 0, err
    assert [s["pod"] for s in out["steps"]] == ["db-0", "db-1", "db-2"]


def test_capacity_of_a_stateful_set_whose_claims_are_refused(tmp_path, capsys):
    """`capacity --pod sts/db` copies the next ordinal (3): its claim `data-db-3` is refused, so there is no
    such pod to count: one error line."""
    path = _stateful(tmp_path, "Parallel")
    rc, _, err = run_json(capsys, "capacity", "-f", path, "--pod", "sts/db")
    assert rc == 2
    assert error_line(err) == ("error: --pod: StatefulSet/db: its controller cannot create db-3: "
                               + EVENT.format(n=3))


def test_add_takes_the_second_format_after_a_zero(tmp_path, capsys):
    """apimachinery's `Quantity.Add`: a zero sum so far takes the added quantity's format. Containers requesting
    memory "0" (DecimalSI) then 1Gi (BinarySI) aggregate to 1Gi printed "1Gi" (in the first term's DecimalSI it
    would print "1073741824"), above the pod-level 512Mi."""
    spec = ("resources: {requests: {memory: 512Mi}}, containers: [{name: a, image: x, resources: {requests: "
            "{memory: '0'}}}, {name: b, image: x, resources: {requests: {memory: 1Gi}}}]")
    path = scenario(tmp_path, node(), pod(spec=spec))
    rc, _, err = simulate(capsys, path)
    assert rc == 2
    assert error_line(err).endswith(f'Pod "p" is invalid: {_requests("memory", "512Mi", "1Gi")}')


def test_a_claims_request_is_compared_in_milli_units(tmp_path, capsys):
    """requestLimitEnforcedValues compares MilliValue() when no value overflows it: 1500m < 2 (1500 < 2000), so
    `min: {storage: '2'}` refuses a request of 1500m (in whole units, Value() rounds 1500m up to 2, not below)."""
    path = scenario(tmp_path, node(), LIMIT_RANGE.format(namespace="default", limits=(
        "{type: PersistentVolumeClaim, min: {storage: '2'}}")), CLAIM.format(name="data", meta="", storage="1500m"))
    rc, _, err = simulate(capsys, path)
    assert rc == 2
    assert error_line(err).endswith("minimum storage usage per PersistentVolumeClaim is 2, but request is 1500m")
