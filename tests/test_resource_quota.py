"""ResourceQuota admission of the pods a scenario creates (kubefit.manifests.quota), through `kubefit simulate` and
`kubefit capacity`.

Every expected value is derived in the test's docstring from the upstream sources named there, not copied from
kubefit's output:

- staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go `CheckRequest` (the messages
  `exceeded quota: %s, requested: %s, used: %s, limited: %s` with `prettyPrint`'s sorted `name=value` lists,
  `failed quota: %s: %v` of `Constraints`, the usage masked to the quota's hard names);
- pkg/quota/v1/evaluator/core/pods.go (`PodUsageFunc`, `podComputeUsageHelper`, `Constraints`' `must specify
  %s for: %s`, `podMatchesScopeFunc`, `isTerminating`, `isBestEffort`, `podMatchesSelector`);
- staging/src/k8s.io/apiserver/pkg/quota/v1/generic/evaluator.go `Matches` (a hard name the evaluator counts, and
  every scope selector);
- pkg/apis/core/validation/validation.go `ValidateResourceQuota` (its messages).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

import kubefit
from tests_support import run_json

NODE = """apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "64", memory: 256Gi, pods: "110", nvidia.com/gpu: "8"}}
"""


def quota(name: str, hard: str, extra: str = "", namespace: str = "team") -> str:
    return (f"apiVersion: v1\nkind: ResourceQuota\nmetadata: {{name: {name}, namespace: {namespace}}}\n"
            f"spec:\n  hard: {{{hard}}}\n{extra}")


def pod(name: str, resources: str = "", spec: str = "", namespace: str = "team", meta: str = "") -> str:
    res = f", resources: {{{resources}}}" if resources else ""
    return (f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: {namespace}{meta}}}\n"
            f"spec: {{containers: [{{name: app, image: x{res}}}]{spec}}}\n")


def deployment(name: str, replicas: int, resources: str = "", namespace: str = "team") -> str:
    res = f", resources: {{{resources}}}" if resources else ""
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: {namespace}}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers: [{{name: app, image: x{res}}}]
"""


def scenario(tmp_path: Path, *docs: str) -> str:
    path = tmp_path / "scenario.yaml"
    path.write_text("---\n".join([NODE, *docs]))
    return str(path)


def simulate(capsys, path: str, *extra: str) -> tuple[int, dict, str]:
    return run_json(capsys, "simulate", "-f", path, "--tie-break", "first", *extra)


def outcome(out: dict) -> dict[str, str | None]:
    """pod → its node, or the message of a pod not created."""
    return {s["pod"]: (s["message"] if s.get("notCreated") else s["node"]) for s in out["steps"]}


def refused(out: dict) -> list[str]:
    return [s["message"] for s in out["steps"] if s.get("notCreated")]


# --------------------------------------------------------------------------- the rules

def test_pods_quota_refuses_the_third_replica(tmp_path, capsys):
    """`pods: "2"` and a Deployment of 3 (issue #38, defect 5).

    PodUsageFunc charges `pods=1` per pod not terminal. The first two creates find used 0 then 1 (≤ 2); the
    third's `quota.LessThanOrEqual(used 2 + 1, hard 2)` fails: `exceeded quota: pod-count, requested: pods=1,
    used: pods=2, limited: pods=2`, wrapped by `admission.NewForbidden` for a pod named from its ReplicaSet's
    prefix (`pods "web-<hash>-" is forbidden: ...`). The ReplicaSet controller's create fails: 2 pods run, the
    third is not created.
    """
    rc, out, err = simulate(capsys, scenario(tmp_path, quota("pod-count", 'pods: "2"'), deployment("web", 3)))
    assert rc == 0
    assert out["scheduled"] == 2 and out["notCreated"] == 1 and out["unschedulable"] == 0
    [message] = refused(out)
    assert message.startswith('pods "web-') and message.endswith(
        '-" is forbidden: exceeded quota: pod-count, requested: pods=1, used: pods=2, limited: pods=2')
    assert "Deployment/web: its controller cannot create 1 pod(s)" in err


def test_requests_cpu_sums_and_refuses_bare_pod(tmp_path, capsys):
    """`requests.cpu: "1"` with three bare pods requesting 400m each.

    podComputeUsageHelper charges `requests.cpu` (and `cpu`, not limited here) the pod's request; a and b bring
    used to 800m (`quota.Add`, printed by `Quantity.String()`: 800m); c would make 1200m > 1: `exceeded quota:
    compute, requested: requests.cpu=400m, used: requests.cpu=800m, limited: requests.cpu=1`. A bare pod the
    API server refuses is not created (kubectl's create of it fails), the others are.
    """
    rc, out, err = simulate(capsys, scenario(tmp_path, quota("compute", 'requests.cpu: "1"'),
                                             *(pod(n, "requests: {cpu: 400m}") for n in "abc")))
    assert rc == 0
    assert outcome(out) == {"a": "n1", "b": "n1", "c": 'pods "c" is forbidden: exceeded quota: compute, requested: '
                            'requests.cpu=400m, used: requests.cpu=800m, limited: requests.cpu=1'}
    assert "Pod/c" in err and "is not created" in err


def test_cpu_quota_needs_every_container_to_request_cpu(tmp_path, capsys):
    """`requests.cpu` limited, a pod without a cpu request: `Constraints` intersects the quota's pod resources
    with `validationSet` ({requests.cpu}); the container's podComputeUsageHelper names lack it: `failed quota:
    compute: must specify requests.cpu for: app`."""
    rc, out, _ = simulate(capsys, scenario(tmp_path, quota("compute", 'requests.cpu: "1"'), pod("p")))
    assert rc == 0
    assert refused(out) == ['pods "p" is forbidden: failed quota: compute: must specify requests.cpu for: app']


def test_limits_memory_needs_limits(tmp_path, capsys):
    """`limits.memory: 1Gi` and a Deployment whose container requests memory but sets no limit.

    Constraints: required = {limits.memory} ∩ validationSet; the container states `memory` and
    `requests.memory` only (no limit: podComputeUsageHelper sets limits.memory only from limits): `failed quota:
    mem: must specify limits.memory for: app`. Every replica is refused alike: none is created. A second
    Deployment with a 300Mi limit (SetDefaults_Pod copies it into the request) is charged `limits.memory`:
    3 × 300Mi = 900Mi ≤ 1Gi, all three created.
    """
    rc, out, err = simulate(capsys, scenario(tmp_path, quota("mem", "limits.memory: 1Gi"),
                                             deployment("nolimit", 2, "requests: {memory: 100Mi}"),
                                             deployment("limited", 3, "limits: {memory: 300Mi}")))
    assert rc == 0
    assert out["scheduled"] == 3 and out["notCreated"] == 2
    assert {m.split(" is forbidden: ")[1] for m in refused(out)} == {
        "failed quota: mem: must specify limits.memory for: app"}
    assert "Deployment/nolimit: its controller cannot create 2 pod(s)" in err


def test_count_pods_counts_terminal_pods(tmp_path, capsys):
    """`count/pods: "2"`, `pods: "2"`, a stored Succeeded pod and a Deployment of 2.

    PodUsageFunc: `count/pods` "tracks all pods independent of state", `pods` only non-terminal ones
    (QuotaV1Pod). The quota controller computes used count/pods=1, pods=0. The first replica makes
    count/pods=2, pods=1; the second exceeds count/pods only: `exceeded quota: objects, requested:
    count/pods=1, used: count/pods=2, limited: count/pods=2` (prettyPrint masks to the exceeded names).
    """
    done = pod("done", meta=", uid: u-1", spec=", nodeName: n1") + "status: {phase: Succeeded}\n"
    rc, out, _ = simulate(capsys, scenario(tmp_path, quota("objects", 'count/pods: "2", pods: "2"'), done,
                                           deployment("web", 2)))
    assert rc == 0
    assert out["scheduled"] == 1
    [message] = refused(out)
    assert message.endswith("exceeded quota: objects, requested: count/pods=1, used: count/pods=2, "
                            "limited: count/pods=2")


def test_extended_resource_quota(tmp_path, capsys):
    """`requests.nvidia.com/gpu: "1"`: MatchingResources takes a non-native `requests.` name
    (isExtendedResourceNameForQuota); podComputeUsageHelper charges `requests.nvidia.com/gpu` the request (the
    limit, copied into the request by SetDefaults_Pod). The second GPU pod: `exceeded quota: gpu, requested:
    requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=1, limited: requests.nvidia.com/gpu=1`; a pod
    without a GPU is not matched by the quota's only resource's usage (zero usage is removed) and is created."""
    gpu = "limits: {nvidia.com/gpu: 1}"
    rc, out, _ = simulate(capsys, scenario(tmp_path, quota("gpu", 'requests.nvidia.com/gpu: "1"'),
                                           pod("g1", gpu), pod("g2", gpu), pod("cpu-only", "requests: {cpu: 1}")))
    assert rc == 0
    assert outcome(out) == {"g1": "n1", "cpu-only": "n1", "g2": (
        'pods "g2" is forbidden: exceeded quota: gpu, requested: requests.nvidia.com/gpu=1, used: '
        'requests.nvidia.com/gpu=1, limited: requests.nvidia.com/gpu=1')}


def test_best_effort_and_not_best_effort_scopes(tmp_path, capsys):
    """`scopes: [BestEffort]` with `pods: "1"` and `scopes: [NotBestEffort]` with `pods: "1"`.

    podMatchesScopeFunc: BestEffort is `qos.GetPodQOS(pod) == BestEffort` (no cpu or memory request or limit
    in any container). be-1 is charged to the BestEffort quota, be-2 refused by it; burst-1 (a cpu request)
    matches NotBestEffort only, burst-2 is refused by that one.
    """
    rc, out, _ = simulate(capsys, scenario(
        tmp_path, quota("be", 'pods: "1"', "  scopes: [BestEffort]\n"),
        quota("not-be", 'pods: "1"', "  scopes: [NotBestEffort]\n"),
        pod("be-1"), pod("burst-1", "requests: {cpu: 100m}"), pod("be-2"), pod("burst-2", "requests: {cpu: 100m}")))
    assert rc == 0
    got = outcome(out)
    assert got["be-1"] == got["burst-1"] == "n1"
    assert got["be-2"].endswith("exceeded quota: be, requested: pods=1, used: pods=1, limited: pods=1")
    assert got["burst-2"].endswith("exceeded quota: not-be, requested: pods=1, used: pods=1, limited: pods=1")


def test_terminating_scope_reads_active_deadline(tmp_path, capsys):
    """`scopes: [Terminating]`, `pods: "1"`: isTerminating is `activeDeadlineSeconds >= 0`. Two pods with a
    deadline: the second is refused; a pod without one does not match the quota and is created."""
    deadline = ", activeDeadlineSeconds: 600"
    rc, out, _ = simulate(capsys, scenario(tmp_path, quota("batch", 'pods: "1"', "  scopes: [Terminating]\n"),
                                           pod("t1", spec=deadline), pod("t2", spec=deadline), pod("long")))
    assert rc == 0
    got = outcome(out)
    assert got["t1"] == got["long"] == "n1"
    assert got["t2"] == 'pods "t2" is forbidden: exceeded quota: batch, requested: pods=1, used: pods=1, limited: pods=1'


def test_priority_class_scope_selector(tmp_path, capsys):
    """`scopeSelector: {matchExpressions: [{scopeName: PriorityClass, operator: In, values: [high]}]}`, `pods:
    "1"`: podMatchesSelector matches the label set {PriorityClass: <priorityClassName>}. Two `high` pods: the
    second is refused; a pod with no class (an empty label set) does not match In and is created."""
    pc = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n"
    selector = "  scopeSelector:\n    matchExpressions: [{scopeName: PriorityClass, operator: In, values: [high]}]\n"
    high = ", priorityClassName: high"
    rc, out, _ = simulate(capsys, scenario(tmp_path, pc, quota("high", 'pods: "1"', selector),
                                           pod("h1", spec=high), pod("h2", spec=high), pod("plain")))
    assert rc == 0
    got = outcome(out)
    assert got["h1"] == got["plain"] == "n1"
    assert got["h2"].endswith("exceeded quota: high, requested: pods=1, used: pods=1, limited: pods=1")


def test_snapshot_status_used_is_kept(tmp_path, capsys):
    """A quota with a status (a live snapshot): CheckRequest compares with `status.used` and `status.hard` as
    stored, and the stored pods are not counted again. used pods=2 of 3 and a Deployment of 2: the first
    replica is admitted (3 ≤ 3), the second refused with used pods=3."""
    status = 'status: {hard: {pods: "3"}, used: {pods: "2"}}\n'
    rc, out, _ = simulate(capsys, scenario(tmp_path, quota("pods", 'pods: "3"') + status,
                                           pod("old", meta=", uid: u-1", spec=", nodeName: n1"),
                                           deployment("web", 2)))
    assert rc == 0
    [message] = refused(out)
    assert message.endswith("exceeded quota: pods, requested: pods=1, used: pods=3, limited: pods=3")


def test_bound_pods_count_in_a_quota_without_status(tmp_path, capsys):
    """Without a status the quota controller computes used from the pods of the namespace
    (`CalculateUsageStats`): a pod bound by spec.nodeName later in the file counts before any creation. `pods:
    "2"`, a Deployment of 2 and then a bound pod: one replica is created."""
    rc, out, _ = simulate(capsys, scenario(tmp_path, quota("q", 'pods: "2"'), deployment("web", 2),
                                           pod("running", spec=", nodeName: n1")))
    assert rc == 0
    assert out["scheduled"] == 1 and out["notCreated"] == 1


def test_no_admission_does_not_enforce(tmp_path, capsys):
    """`--no-admission` takes pods as given: the quota is not enforced, and a warning says so."""
    rc, out, err = simulate(capsys, scenario(tmp_path, quota("q", 'pods: "1"'), deployment("web", 3)),
                            "--no-admission")
    assert rc == 0 and out["scheduled"] == 3
    assert "ResourceQuota(s) not enforced" in err


def test_capacity_stops_at_the_quota(tmp_path, capsys):
    """`kubefit capacity` of a pod in a namespace with `pods: "3"` and one pod: the node takes far more, but the
    API server admits 2 more pods; creating the third copy fails (cluster-capacity's FailedCreatingPod) with
    `exceeded quota: q, requested: pods=1, used: pods=3, limited: pods=3`."""
    rc, out, _ = run_json(capsys, "capacity", "-f", scenario(tmp_path, quota("q", 'pods: "3"'),
                                                             pod("p", "requests: {cpu: 100m}")), "--pod", "team/p")
    assert rc == 0
    assert out["count"] == 2 and out["stopReason"] == "FailedCreatingPod"
    assert out["message"] == ('pods "p" is forbidden: exceeded quota: q, requested: pods=1, used: pods=3, '
                              'limited: pods=3')


# --------------------------------------------------------------------------- bad quotas

def error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, err
    return lines[0]


def test_negative_hard_limit_is_refused(tmp_path, capsys):
    """ValidateResourceQuantityValue → ValidateNonnegativeQuantity: `spec.hard[pods]: Invalid value: "-1": must
    be greater than or equal to 0` (the API server's ResourceQuota "bad" is invalid), exit 2 with file, object
    and field."""
    path = scenario(tmp_path, quota("bad", 'pods: "-1"'))
    rc, _, err = simulate(capsys, path)
    assert rc == 2
    line = error_line(err)
    assert f"{path}: ResourceQuota/bad: spec.hard[pods]: " in line
    assert 'spec.hard[pods]: Invalid value: "-1": must be greater than or equal to 0' in line


def test_bad_scope_selectors_are_refused(tmp_path, capsys):
    """validateScopedResourceSelectorRequirement: In without values is `Required value: must be at least one
    value when `operator` is 'In' or 'NotIn' for scope selector`; an unknown operator `not a valid selector
    operator`; BestEffort with DoesNotExist `must be 'Exist' when scope is any of ...`."""
    cases = {
        "[{scopeName: PriorityClass, operator: In}]":
            "spec.scopeSelector.matchExpressions.values: Required value: must be at least one value when "
            "`operator` is 'In' or 'NotIn' for scope selector",
        "[{scopeName: PriorityClass, operator: Near, values: [a]}]":
            'spec.scopeSelector.matchExpressions.operator: Invalid value: "Near": not a valid selector operator',
        "[{scopeName: BestEffort, operator: DoesNotExist}]":
            'spec.scopeSelector.matchExpressions.operator: Invalid value: "DoesNotExist": must be \'Exist\' when '
            "scope is any of ResourceQuotaScopeTerminating",
    }
    for expressions, message in cases.items():
        extra = f"  scopeSelector:\n    matchExpressions: {expressions}\n"
        rc, _, err = simulate(capsys, scenario(tmp_path, quota("bad", 'pods: "1"', extra)))
        assert rc == 2, expressions
        assert message in error_line(err), err


def test_bad_names_scopes_and_fractions_are_refused(tmp_path, capsys):
    """ValidateResourceQuotaResourceName: `widgets` is no standard resource (`must be a standard resource type or
    fully qualified`); `pods: 1500m` is `must be an integer` (IsIntegerResourceName); BestEffort with
    `requests.cpu` is `unsupported scope applied to resource` (IsResourceQuotaScopeValidForResource); BestEffort
    with NotBestEffort is `conflicting scopes`."""
    cases = [('widgets: "1"', "", 'spec.hard[widgets]: Invalid value: "widgets": must be a standard resource type '
              "or fully qualified"),
             ("pods: 1500m", "", 'spec.hard[pods]: Invalid value: "1500m": must be an integer'),
             ('requests.cpu: "1"', "  scopes: [BestEffort]\n", "unsupported scope applied to resource"),
             ('pods: "1"', "  scopes: [BestEffort, NotBestEffort]\n", "conflicting scopes")]
    for hard, extra, message in cases:
        rc, _, err = simulate(capsys, scenario(tmp_path, quota("bad", hard, extra)))
        assert rc == 2, hard
        assert message in error_line(err), err


# --------------------------------------------------------------------------- property

@settings(max_examples=25, deadline=None)
@given(limit=st.integers(0, 4), replicas=st.lists(st.integers(0, 4), min_size=1, max_size=3),
       bare=st.integers(0, 3), bound=st.integers(0, 2))
def test_never_more_pods_than_the_quota_admits(limit, replicas, bare, bound):
    """Whatever the workloads, bare pods and running pods of a namespace with `pods: N`: the pods that exist
    there (bound before, placed or pending after the simulation) never exceed max(N, the pods running already)
    — the quota admits a creation only while used + 1 ≤ N (CheckRequest), and never removes a running pod —
    and every pod not created was refused by that quota."""
    docs = [NODE, quota("q", f'pods: "{limit}"')]
    docs += [pod(f"run-{i}", spec=", nodeName: n1") for i in range(bound)]
    docs += [deployment(f"d{i}", r) for i, r in enumerate(replicas)]
    docs += [pod(f"bare-{i}") for i in range(bare)]
    docs.append(deployment("other", 2, namespace="elsewhere"))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.yaml"
        path.write_text("---\n".join(docs))
        result = kubefit.simulate([str(path)], tie_break="first", warn=lambda _: None)
    steps = result.to_dict()["steps"]
    created = [s for s in steps if s["namespace"] == "team" and not s.get("notCreated")]
    assert bound + len(created) <= max(limit, bound)
    wanted = sum(replicas) + bare
    assert len(created) == min(wanted, max(limit - bound, 0))
    assert all("exceeded quota: q, requested: pods=1" in s["message"] for s in steps if s.get("notCreated"))
    assert sum(1 for s in steps if s["namespace"] == "elsewhere" and s["node"]) == 2


@settings(max_examples=40, deadline=None)
@given(hard_pods=st.integers(0, 4), hard_cpu=st.sampled_from([1000, 2000, 3000, 4000]), count=st.booleans(),
       running=st.lists(st.sampled_from([500, 1000, 2000]), max_size=4),
       queued=st.lists(st.tuples(st.booleans(), st.sampled_from([500, 1000, 2000]), st.booleans()), max_size=5))
def test_no_create_takes_a_namespace_over_its_quota(hard_pods, hard_cpu, count, running, queued):
    """Issue #38: whatever is preempted and recreated, every pod created in namespace team — at load or by a
    victim's controller during the run — leaves the pods there within the quota: CheckRequest admits a create only
    while used + requested ≤ hard for each limited name (`pods`, `requests.cpu`, `count/pods`), with `status.used`
    as it stands then (the victims deleted released: `replenishQuota`). The quota is a snapshot's, possibly
    lowered under the usage of the ReplicaSet pods running on the 4-cpu node; urgent pods (priority 1000) preempt
    them. Replayed from the steps: the pods of team after the load and after each replacement created, summed
    as `PodUsageFunc` counts them, are within `hard` (or, after the load, within what ran already)."""
    hard = {"pods": hard_pods * 1000, "requests.cpu": hard_cpu, **({"count/pods": hard_pods * 1000} if count else {})}
    docs = [NODE.replace('cpu: "64"', 'cpu: "4"'),
            "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n"]
    cpu: dict[str, int] = {}
    placed = 0
    for i, milli in enumerate(running):
        if placed + milli > 4000:
            continue
        placed += milli
        cpu[f"team/run-{i}-x7k2p"] = milli
        docs.append(deployment(f"run-{i}", 1, f"requests: {{cpu: {milli}m}}").replace("kind: Deployment",
                                                                                      "kind: ReplicaSet"))
        docs.append(pod(f"run-{i}-x7k2p", f"requests: {{cpu: {milli}m}}", spec=", nodeName: n1",
                        meta=f", uid: u-{i}, labels: {{app: run-{i}}}, ownerReferences: [{{apiVersion: apps/v1, "
                             f"kind: ReplicaSet, name: run-{i}, uid: rs-{i}, controller: true}}]")
                    + "status: {phase: Running}\n")
    used = {"pods": len(cpu) * 1000, "requests.cpu": sum(cpu.values()), "count/pods": len(cpu) * 1000}
    shown = ", ".join(f"{k}: {v}m" for k, v in hard.items())
    docs.append(quota("q", shown) + f"status: {{hard: {{{shown}}}, used: {{"
                + ", ".join(f"{k}: {used[k]}m" for k in hard) + "}}\n")
    for i, (team, milli, urgent) in enumerate(queued):
        name = f"new-{i}"
        if team:
            cpu[f"team/{name}"] = milli
        docs.append(pod(name, f"requests: {{cpu: {milli}m}}", namespace="team" if team else "default",
                        spec=", priorityClassName: high" if urgent else ""))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.yaml"
        path.write_text("---\n".join(docs))
        result = kubefit.simulate([str(path)], tie_break="first", warn=lambda _: None)

    def usage(keys: set[str]) -> dict[str, int]:
        return {"pods": 1000 * len(keys), "count/pods": 1000 * len(keys), "requests.cpu": sum(cpu[k] for k in keys)}

    refused = {s.pod.key for s in result.steps if s.not_created and s.replaces is None}
    alive = {k for k in cpu if k not in refused}  # after the load: the running pods and every pod admitted
    start = usage({k for k in cpu if k.startswith("team/run-")})
    assert all(usage(alive)[n] <= max(hard[n], start[n]) for n in hard)
    for s in result.steps:
        alive -= set(s.victims)
        if s.replaces is not None and not s.not_created and s.pod.key not in alive:  # a controller's create
            cpu[s.pod.key] = cpu[s.replaces]
            alive.add(s.pod.key)
            assert all(usage(alive)[n] <= hard[n] for n in hard), (s.pod.key, usage(alive), hard)
    assert all("exceeded quota: q" in s.message for s in result.steps if s.not_created)


@settings(max_examples=40, deadline=None)
@given(hard_pods=st.integers(0, 3), hard_cpu=st.sampled_from([1000, 2000, 3000]),
       pods=st.lists(st.tuples(st.integers(0, 20), st.one_of(st.none(), st.integers(1, 10)), st.booleans(),
                               st.sampled_from([500, 1000, 2000])), max_size=6))
def test_a_timeline_never_holds_more_than_the_quota_admits(hard_pods, hard_cpu, pods):
    """Issue #38, in time: bare pods of team arrive (`kubefit.io/arrival`), some end (`kubefit.io/duration`:
    deleted if they restart always, Succeeded if Never); each is created when it arrives, so at every instant the
    pods that exist there — from their arrival until their deletion, pending ones included; a Succeeded pod
    still counting in `count/pods` (`PodUsageFunc`) — are within `pods`, `count/pods` and `requests.cpu`
    (CheckRequest admits a create only while used + requested ≤ hard; nothing else adds usage)."""
    hard = {"pods": hard_pods, "count/pods": hard_pods, "requests.cpu": hard_cpu}
    docs = [NODE, quota("q", f'pods: "{hard_pods}", count/pods: "{hard_pods}", requests.cpu: {hard_cpu}m')]
    for i, (arrival, duration, always, milli) in enumerate(pods):
        times = f"kubefit.io/arrival: {arrival}s" + (f", kubefit.io/duration: {duration}s" if duration else "")
        docs.append(pod(f"p{i}", f"requests: {{cpu: {milli}m}}", meta=f", annotations: {{{times}}}",
                        spec=f", restartPolicy: {'Always' if always else 'Never'}"))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.yaml"
        path.write_text("---\n".join(docs))
        result = kubefit.timeline([str(path)], tie_break="first", warn=lambda _: None).to_dict()
    runs = [(r, pods[int(r["pod"][1:])]) for r in result["pods"] if not r.get("notCreated")]
    for t in sorted({arrival for arrival, *_ in pods}):
        live = [(r, p) for r, p in runs if r["arrival"] <= t and (r["end"] is None or t < r["end"])]
        done = [(r, p) for r, p in runs if r["end"] is not None and r["end"] <= t and not p[2]]  # Succeeded
        used = {"pods": len(live), "count/pods": len(live) + len(done), "requests.cpu": sum(p[3] for _, p in live)}
        assert all(used[n] <= hard[n] for n in hard), (t, used, hard)
    assert all("exceeded quota: q" in r["message"] for r in result["pods"] if r.get("notCreated"))
