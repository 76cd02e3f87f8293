"""The VPA admission controller's rewrite, as upstream's own tables check it.

Ported from kubernetes/autoscaler vertical-pod-autoscaler/v1.7.1: `pkg/utils/vpa/limit_and_request_scaling_test.go`
(`TestGetProportionalResourceLimitCPU`, `...Mem`, `TestScaleQuantityProportionallyCPU`), `pkg/utils/vpa/
capping_test.go` (`TestRecommendationToLimitCapping`, `TestRecommendationCappedToMinMaxPolicy`,
`TestApplyCapsToLimitRange`, `TestApplyPodLimitRange`) and `pkg/admission-controller/resource/pod/recommendation/
recommendation_provider_test.go` (`TestUpdateResourceRequests`): the same inputs, upstream's expected values.
"""

from __future__ import annotations

import pytest

from kubefit.k8s.quantity import parse_quantity
from kubefit.manifests.usage.vpa import ContainerPolicy, ContainerRecommendation, VerticalPodAutoscaler
from kubefit.manifests.usage.vpaadmission import (
    LimitRangeItem,
    Resources,
    admit,
    apply_pod_limit_range,
    cap_to_pod_limit_range,
    capped_for_container,
    limit_range_item,
    milli_value,
    proportional_limit,
    proportional_resource_limit,
    scale_cpu,
)

MAX_INT64 = 2**63 - 1


def q(text: str | None) -> int:
    return 0 if text is None else parse_quantity(text)


def rl(**values: str) -> dict[str, int]:
    return {k: parse_quantity(v) for k, v in values.items()}


def vpa(recs: list[ContainerRecommendation] | None, policies: tuple[ContainerPolicy, ...] = ()) -> VerticalPodAutoscaler:
    return VerticalPodAutoscaler("default", "vpa", "Deployment", "web", "Recreate", policies,
                                 None if recs is None else tuple(recs))


# limit_and_request_scaling_test.go: (name, originalLimit, originalRequest, recommendedRequest, defaultLimit,
# expectLimit, expectAnnotation); None is a nil pointer (kubefit: an absent quantity, 0)
CPU_CASES = [
    ("scale proportionally", "2", "1", "10", None, "20", False),
    ("scale proportionally with default", None, "1", "10", "2", "20", False),
    ("no original limit", None, "1", "10", None, None, True),
    ("no original request", "2", None, "10", None, "10", False),
    ("no recommendation", None, "1", "0", "2", None, True),
    ("limit equal to request", "1", "1", "10", None, "10", False),
    ("handle non-integer ratios", "2", "1.50", "1", None, "1.333", False),
    ("go over milli cap", "10G", "1m", "10G", None, f"{MAX_INT64}m", True),
]
MEMORY_CASES = [
    ("scale proportionally", "2", "1", "10", None, "20", False),
    ("scale proportionally with default", None, "1", "10", "2", "20", False),
    ("no original limit", None, "1", "10", None, None, True),
    ("no original request", "2", None, "10", None, "10", False),
    ("no recommendation", None, "1", "0", "2", None, True),
    ("limit equal to request", "1", "1", "10", None, "10", False),
    ("handle non-integer ratios", "200", "150", "100", None, "133", False),
    ("go over milli cap", "10G", "1m", "10G", None, str(MAX_INT64), True),
]


@pytest.mark.parametrize("resource,case", [("cpu", c) for c in CPU_CASES] + [("memory", c) for c in MEMORY_CASES],
                         ids=[f"cpu-{c[0]}" for c in CPU_CASES] + [f"memory-{c[0]}" for c in MEMORY_CASES])
def test_proportional_resource_limit(resource, case):
    _, limit, request, recommended, default, expect, annotation = case
    got, note = proportional_resource_limit(resource, q(limit), q(request), q(recommended), q(default))
    if expect is None:
        assert got is None
    else:
        assert got is not None and milli_value(got) == milli_value(q(expect))  # upstream compares MilliValue()
    assert (note != "") == annotation


def test_scale_cpu_division_by_zero_returns_the_scaled_quantity():
    """TestScaleQuantityProportionallyCPU: scaleBase 0 → scaledQuantity, divisionByZero."""
    assert scale_cpu(q("1"), 0, q("20"), 1) == (q("1"), "divisionByZero")


CONTAINER = "ctr-name"
RECOMMENDATION = ContainerRecommendation(CONTAINER, target=rl(cpu="20", memory="80000"),
                                         upper_bound=rl(cpu="100", memory="90000"))  # NewScaledQuantity(2, 1) = 20


@pytest.mark.parametrize("name,values,target,upper,annotated", [
    ("no capping for default policy", None, rl(cpu="20", memory="80000"), rl(cpu="100", memory="90000"), False),
    ("no capping for RequestsAndLimits policy", "RequestsAndLimits", rl(cpu="20", memory="80000"),
     rl(cpu="100", memory="90000"), False),
    ("capping for RequestsOnly policy", "RequestsOnly", rl(cpu="20", memory="70000"), rl(cpu="30", memory="70000"),
     True),
])
def test_recommendation_to_limit_capping(name, values, target, upper, annotated):
    """TestRecommendationToLimitCapping: limits cpu 30, memory 70000 (NewScaledQuantity(3, 1), (7000, 1))."""
    container = Resources(CONTAINER, {}, rl(cpu="30", memory="70000"))
    policies = (ContainerPolicy("*", controlled_values=values),) if values else ()
    got, notes = capped_for_container(container, RECOMMENDATION, vpa([RECOMMENDATION], policies), None)
    assert got.target == target and got.upper_bound == upper
    assert ("memory capped to container limit" in notes) == annotated


def test_recommendation_capped_to_min_max_policy():
    """TestRecommendationCappedToMinMaxPolicy."""
    rec = ContainerRecommendation(CONTAINER, target=rl(cpu="300", memory="50000"),
                                  lower_bound=rl(cpu="200", memory="43000"), upper_bound=rl(cpu="500", memory="55000"))
    policy = ContainerPolicy(CONTAINER, min_allowed=rl(cpu="400", memory="40000"),
                             max_allowed=rl(cpu="450", memory="45000"))
    got, notes = capped_for_container(Resources(CONTAINER), rec, vpa([rec], (policy,)), None)
    assert got.target == rl(cpu="400", memory="45000")
    assert {"cpu capped to minAllowed", "memory capped to maxAllowed"} <= set(notes)
    assert got.lower_bound == rl(cpu="400", memory="43000")
    assert got.upper_bound == rl(cpu="450", memory="45000")


def test_apply_caps_to_limit_range():
    """TestApplyCapsToLimitRange: a Container item with max cpu 1 and min memory 500M."""
    item = LimitRangeItem(max=rl(cpu="1"), min=rl(memory="500M"))
    rec = ContainerRecommendation("container", target=rl(cpu="2", memory="200M"))
    container = Resources("container", rl(cpu="1", memory="1G"), rl(cpu="1", memory="1G"))
    got, notes = capped_for_container(container, rec, vpa([rec]), item)
    assert got.target == rl(cpu="1000m", memory="500000000")
    assert sorted(notes) == ["cpu capped to fit Max in container LimitRange",
                             "memory capped to fit Min in container LimitRange"]


def _two(requests: dict[str, int], limits: dict[str, int]) -> list[Resources]:
    return [Resources("container1", dict(requests), dict(limits)), Resources("container2", dict(requests), dict(limits))]


@pytest.mark.parametrize("name,resource,targets,containers,item,expect", [
    ("cap target cpu to max", "cpu", {"container1": rl(cpu="1"), "container2": rl(cpu="1")},
     _two(rl(cpu="1"), rl(cpu="1")), LimitRangeItem(max=rl(cpu="1")),
     {"container1": rl(cpu="500m"), "container2": rl(cpu="500m")}),
    ("cap mem to min", "memory", {"container1": rl(memory="1G"), "container2": rl(memory="1G")},
     _two(rl(memory="1"), rl(memory="1")), LimitRangeItem(min=rl(memory="4G")),
     {"container1": rl(memory="2000000000"), "container2": rl(memory="2000000000")}),
    ("cap mem request to pod min", "memory", {"container1": rl(memory="1G"), "container2": rl(memory="1G")},
     _two(rl(memory="1"), rl(memory="2")), LimitRangeItem(max=rl(memory="10G"), min=rl(memory="4G")),
     {"container1": rl(memory="2000000000"), "container2": rl(memory="2000000000")}),
])
def test_apply_pod_limit_range(name, resource, targets, containers, item, expect):
    """TestApplyPodLimitRange (the target's list; upstream calls applyPodLimitRange with getTarget)."""
    recs = {k: dict(v) for k, v in targets.items()}
    apply_pod_limit_range(recs, containers, item, resource)
    assert recs == expect


def test_pod_limit_range_cpu_min_rounds_up():
    """TestApplyPodLimitRange "cap target cpu to pod min": requests and limits 1m, targets 15m and 100m, a Pod
    item's min 150m: ceil(15 * 150 / 115) = 20m, ceil(100 * 150 / 115) = 131m (PR #8946)."""
    recs = {"container1": rl(cpu="15m"), "container2": rl(cpu="100m")}
    apply_pod_limit_range(recs, _two(rl(cpu="1m"), rl(cpu="1m")), LimitRangeItem(min=rl(cpu="150m")), "cpu")
    assert recs == {"container1": rl(cpu="20m"), "container2": rl(cpu="131m")}


def test_limit_range_min_applies_to_the_request_itself():
    """TestApplyLimitRangeMinToRequest "caps to min range if above container limit": request 50M, limit 600M, a
    Container item's min 500M: the request may not go below 500M itself (at the ratio, the limit's min would
    allow 41.6M)."""
    rec = ContainerRecommendation("container", target=rl(cpu="1", memory="200M"))
    container = Resources("container", rl(cpu="1", memory="50M"), rl(cpu="1", memory="600M"))
    got, notes = capped_for_container(container, rec, vpa([rec]), LimitRangeItem(min=rl(memory="500M")))
    assert got.target == rl(cpu="1", memory="500M")
    assert notes == ["memory capped to fit Min in container LimitRange"]


def test_pod_limit_range_inserts_requests_for_containers_without_recommendation():
    """`insertRequestsForMissingRecommendations`: with a Pod item, a container without a recommendation counts
    with its requests (and so keeps them)."""
    containers = [Resources("a", rl(cpu="1"), rl(cpu="1")), Resources("b", rl(cpu="1"), rl(cpu="1"))]
    got = cap_to_pod_limit_range([ContainerRecommendation("a", rl(cpu="1"))], containers,
                                 LimitRangeItem(max=rl(cpu="1")))
    assert {r.container_name: r.target for r in got} == {"a": rl(cpu="500m"), "b": rl(cpu="500m")}


# recommendation_provider_test.go TestUpdateResourceRequests: the VPA's target 2 cpu / 200Mi, minAllowed 1 /
# 100Mi, maxAllowed 3 / 1Gi unless the case says otherwise.
def provider_vpa(target=("2", "200Mi"), low=("1", "100Mi"), high=("3", "1Gi"), values=None):
    rec = ContainerRecommendation(CONTAINER, target=rl(cpu=target[0], memory=target[1]))
    policy = ContainerPolicy(CONTAINER, min_allowed={k: parse_quantity(v) for k, v in zip(("cpu", "memory"), low, strict=False) if v},
                             max_allowed={k: parse_quantity(v) for k, v in zip(("cpu", "memory"), high, strict=False) if v},
                             controlled_values=values)
    return vpa([rec], (policy,))


UNINITIALIZED = Resources(CONTAINER)
INITIALIZED = Resources(CONTAINER, rl(cpu="2", memory="100Mi"))
DOUBLE_LIMIT = Resources(CONTAINER, rl(cpu="1", memory="100Mi"), rl(cpu="2", memory="200Mi"))
TENFOLD = Resources(CONTAINER, rl(cpu="1", memory="100Mi"), rl(cpu="10", memory="1000Mi"))
GUARANTEED = Resources(CONTAINER, rl(cpu="2", memory="200Mi"), rl(cpu="2", memory="200Mi"))


@pytest.mark.parametrize("name,container,the_vpa,item,cpu,memory,cpu_limit,memory_limit,notes", [
    ("uninitialized pod", UNINITIALIZED, provider_vpa(), None, "2", "200Mi", None, None, []),
    ("target below min", UNINITIALIZED, provider_vpa(("3", "150Mi"), ("4", "300Mi"), ("5", "1Gi")), None, "4",
     "300Mi", None, None, ["cpu capped to minAllowed", "memory capped to minAllowed"]),
    ("target above max", UNINITIALIZED, provider_vpa(("7", "2Gi"), ("4", "300Mi"), ("5", "1Gi")), None, "5", "1Gi",
     None, None, ["cpu capped to maxAllowed", "memory capped to maxAllowed"]),
    ("initialized pod", INITIALIZED, provider_vpa(), None, "2", "200Mi", None, None, []),
    ("high memory", INITIALIZED, provider_vpa(("2", "1000Mi"), ("", ""), ("3", "3Gi")), None, "2", "1000Mi", None,
     None, []),
    ("guaranteed resources", GUARANTEED, provider_vpa(), None, "2", "200Mi", "2", "200Mi", []),
    ("proportional limit - as default", DOUBLE_LIMIT, provider_vpa(), None, "2", "200Mi", "4", "400Mi", []),
    ("proportional limit - set explicit", DOUBLE_LIMIT, provider_vpa(values="RequestsAndLimits"), None, "2", "200Mi",
     "4", "400Mi", []),
    ("disabled limit scaling", DOUBLE_LIMIT, provider_vpa(values="RequestsOnly"), None, "2", "200Mi", None, None, []),
    ("disabled limit scaling - requests capped at limit", DOUBLE_LIMIT,
     provider_vpa(("3", "500Mi"), high=("5", "1Gi"), values="RequestsOnly"), None, "2", "200Mi", None, None,
     ["cpu capped to container limit", "memory capped to container limit"]),
    ("limit over int64", TENFOLD, provider_vpa(("1Ei", "1Ei"), ("", ""), ("1Ei", "1Ei")), None, "1Ei", "1Ei",
     f"{MAX_INT64}m", str(MAX_INT64), ["cpu: failed to keep limit to request ratio; capping limit to int64",
                                       "memory: failed to keep limit to request ratio; capping limit to int64"]),
    ("proportional limit from default", INITIALIZED, provider_vpa(),
     LimitRangeItem(default=rl(cpu="2", memory="100Mi")), "2", "200Mi", "2", "200Mi", []),
])
def test_update_resource_requests(name, container, the_vpa, item, cpu, memory, cpu_limit, memory_limit, notes):
    """What the webhook writes: requests compared by Value(), limits by MilliValue(), as upstream compares."""
    [got] = admit(the_vpa, [container], item, None)
    assert -(-got.requests["cpu"] // 10**9) == -(-q(cpu) // 10**9)
    assert -(-got.requests["memory"] // 10**9) == -(-q(memory) // 10**9)
    for resource, expect in (("cpu", cpu_limit), ("memory", memory_limit)):
        if expect is None:
            assert resource not in got.limits
        else:
            assert milli_value(got.limits[resource]) == milli_value(q(expect))
    assert sorted(got.notes) == sorted(notes)


def test_nil_recommendation_changes_nothing():
    """`GetContainersResourcesForPod` without `status.recommendation`: no container is rewritten."""
    assert admit(vpa(None), [INITIALIZED], None, None) == []


def test_limit_range_items_merged_as_the_calculator_merges_them():
    """`getLimitRangeItem`: the lowest max and highest min of cpu and memory, the last default; none → None."""
    merged = limit_range_item([(rl(cpu="2", memory="4Gi"), rl(cpu="100m"), rl(cpu="1")),
                               (rl(cpu="1"), rl(cpu="200m", memory="64Mi"), rl(memory="1Gi"))])
    assert merged == LimitRangeItem(max=rl(cpu="1", memory="4Gi"), min=rl(cpu="200m", memory="64Mi"),
                                    default=rl(memory="1Gi"))
    assert limit_range_item([({}, {}, {})]) is None


def test_proportional_limit_says_the_missing_one_only_when_another_is_set():
    """`GetProportionalLimit`: cpu scaled, memory not set (no limit) said; neither set: nothing said."""
    limits, notes = proportional_limit(rl(cpu="2"), rl(cpu="1", memory="1Gi"), rl(cpu="500m", memory="2Gi"), {})
    assert limits == rl(cpu="1") and notes == ["memory: limit NOT set since originalLimit is nil or 0"]
    assert proportional_limit({}, rl(cpu="1"), rl(cpu="2"), {}) == (None, [])
