"""The VPA admission controller: the requests and limits it writes into a pod its VPA controls.

A port of kubernetes/autoscaler `vertical-pod-autoscaler` at vertical-pod-autoscaler/v1.7.1, the path a pod's
creation takes through the webhook (`pkg/admission-controller/resource/pod/handler.go` `GetPatches`):

- `recommendation/recommendation_provider.go` `GetContainersResourcesForPod`: the VPA's `status.recommendation`
  through the capping processor, then per container of `spec.containers` (init and sidecar containers are never
  touched: the provider iterates `pod.Spec.Containers` only) its target as the new requests; a container without a
  recommendation is left as it is (`addAll` false). With `controlledValues: RequestsAndLimits` (the default) the
  limits are scaled to keep the container's request:limit ratio (`GetProportionalLimit`, the LimitRange's default
  limit standing in for a missing one); `RequestsOnly` leaves them. A VPA whose `updateMode` is Off passes no
  resource policy here (its recommendation is applied as if it were on, see `rewrite`).
- `pkg/utils/vpa/capping.go` `cappingRecommendationProcessor.Apply`: first `capProportionallyToPodLimitRange` (a
  `Pod` LimitRange item's min and max on the containers' summed limits, `applyPodLimitRange`), then per container
  `getCappedRecommendationForContainer`: the `Container` LimitRange item (`applyContainerLimitRange`: its max and
  min, scaled by the container's request:limit ratio, `GetBoundaryRequest`), then the policy's `minAllowed` and
  `maxAllowed` (`applyVPAPolicy`), and with `RequestsOnly` the container's current limit (`capRecommendationToContainerLimit`).
  Each capping is named as upstream annotates it (`cpu capped to maxAllowed`, ...).
- `pkg/utils/vpa/limit_and_request_scaling.go`: `scaleQuantityProportionallyCPU` on millicores (big integers,
  floor or ceiling), `scaleQuantityProportionallyMem` on whole bytes (`Quantity.Value()`, rounded up).
- `pkg/utils/limitrange/limit_range_calculator.go` `getLimitRangeItem`: the namespace's LimitRanges of one type
  merged: the lowest max, the highest min, the last default (kubefit reads the LimitRanges in name order).

Quantities are nano-units (`kubefit.k8s.quantity`); `Quantity.MilliValue()` and `Value()` round up as Go does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from kubefit.manifests.usage.vpa import (
    REQUESTS_AND_LIMITS,
    REQUESTS_ONLY,
    ContainerPolicy,
    ContainerRecommendation,
    VerticalPodAutoscaler,
)

CPU, MEMORY = "cpu", "memory"
MILLI, NANO = 10**6, 10**9
MAX_INT64 = 2**63 - 1
NO_ROUNDING, ROUND_UP, ROUND_DOWN = 0, 1, 2


def milli_value(nanos: int) -> int:
    """`Quantity.MilliValue()`: millis, rounded up (away from zero for a positive fraction)."""
    return -((-nanos) // MILLI)


def value(nanos: int) -> int:
    """`Quantity.Value()`: whole units, rounded up."""
    return -((-nanos) // NANO)


@dataclass
class Resources:
    """A container's requests and limits (nano-units), what the admission controller reads and writes."""

    name: str
    requests: dict[str, int] = field(default_factory=dict)
    limits: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class LimitRangeItem:
    """The merged LimitRange item of one type in a namespace (`getLimitRangeItem`); None fields are absent."""

    max: dict[str, int] | None = None
    min: dict[str, int] | None = None
    default: dict[str, int] | None = None


def limit_range_item(items: Sequence[tuple[dict[str, int], dict[str, int], dict[str, int]]]) -> LimitRangeItem | None:
    """`getLimitRangeItem` over the namespace's items of one type, each (max, min, default), in the order listed:
    max the lowest and min the highest of cpu and memory, default the last one given; None when none has any."""
    result_max: dict[str, int] | None = None
    result_min: dict[str, int] | None = None
    default: dict[str, int] | None = None
    for item_max, item_min, item_default in items:
        if not (item_max or item_min or item_default):
            continue
        if item_default:
            default = dict(item_default)
        result_max = _merged(result_max, item_max, min)
        result_min = _merged(result_min, item_min, max)
    if result_max is None and result_min is None and default is None:
        return None
    return LimitRangeItem(result_max, result_min, default)


def _merged(result: dict[str, int] | None, item: dict[str, int], pick: Callable[[int, int], int]) -> dict[str, int] | None:
    """`updatedResult` for cpu then memory: the item copied whole when nothing is there yet, else picked."""
    if not item:
        return result
    if result is None:
        return dict(item)
    for name in (CPU, MEMORY):
        if name in item:
            result[name] = item[name] if name not in result else pick(result[name], item[name])
    return result


# --------------------------------------------------------------------------- limit_and_request_scaling.go

def scale_cpu(scaled: int, base: int, result: int, rounding: int) -> tuple[int, str]:
    """`scaleQuantityProportionallyCPU`: `scaled * result / base` in millicores (floor; ceiling with ROUND_UP),
    as nanos, with "success", "capped" (past int64: MaxInt64 millicores) or "divisionByZero" (`scaled` back)."""
    if base == 0:
        return scaled, "divisionByZero"
    q, r = divmod(milli_value(scaled) * milli_value(result), milli_value(base))
    if -(2**63) <= q <= MAX_INT64:
        if r != 0 and rounding == ROUND_UP:
            q += 1
        return q * MILLI, "success"
    return MAX_INT64 * MILLI, "capped"


def scale_memory(scaled: int, base: int, result: int, rounding: int) -> tuple[int, bool]:
    """`scaleQuantityProportionallyMem`: `scaled * result / base` on whole units (`Value()`), big.Int division;
    whether it had to cap at MaxInt64. (Rounding to a full unit changes nothing on whole units.)"""
    b = value(base)
    if b == 0:
        raise ZeroDivisionError("division by zero")  # big.Int.Div panics; callers never reach it
    q = (value(scaled) * value(result)) // b if b > 0 else -((value(scaled) * value(result)) // -b)
    if -(2**63) <= q <= MAX_INT64:
        return q * NANO, False
    return MAX_INT64 * NANO, True


def proportional_resource_limit(name: str, original_limit: int, original_request: int, recommended: int,
                                default_limit: int) -> tuple[int | None, str]:
    """`getProportionalResourceLimit` (absent quantities are 0, as `ResourceList.Cpu()` returns them): the limit
    keeping the request:limit ratio, or None (with why), and an annotation when it had to cap."""
    if value(original_limit) == 0:
        original_limit = default_limit
    if value(original_limit) == 0:
        return None, f"{name}: limit NOT set since originalLimit is nil or 0"
    if value(recommended) == 0:
        return None, f"{name}: limit NOT set since recommendedRequest is nil or 0"
    if value(original_request) == 0:
        return recommended, ""
    if milli_value(original_request) == milli_value(original_limit):
        return recommended, ""
    if name == CPU:
        result, kind = scale_cpu(original_limit, original_request, recommended, NO_ROUNDING)
        return result, ("cpu: failed to keep limit to request ratio; capping limit to int64" if kind == "capped"
                        else "")
    result, capped = scale_memory(original_limit, original_request, recommended, NO_ROUNDING)
    return result, (f"{name}: failed to keep limit to request ratio; capping limit to int64" if capped else "")


def proportional_limit(original_limits: dict[str, int], original_requests: dict[str, int],
                       recommendation: dict[str, int], default_limit: dict[str, int]) -> tuple[dict[str, int] | None,
                                                                                                 list[str]]:
    """`GetProportionalLimit`: cpu and memory limits for the recommended requests and the annotations (a limit
    not set is said too, when the other one is); None and no annotation when neither is set."""
    out: dict[str, int] = {}
    notes: list[str] = []
    for name in (CPU, MEMORY):
        limit, note = proportional_resource_limit(name, original_limits.get(name, 0), original_requests.get(name, 0),
                                                  recommendation.get(name, 0), default_limit.get(name, 0))
        if note:
            notes.append(note)
        if limit is not None:
            out[name] = limit
    return (out, notes) if out else (None, [])


def boundary_request(name: str, original_request: int, original_limit: int, boundary_limit: int,
                     default_limit: int) -> int:
    """`GetBoundaryRequest`: the request whose limit (at the container's ratio) would be `boundary_limit`; 0 (no
    boundary) when the container has no limit and the LimitRange no default."""
    if value(original_limit) == 0:
        original_limit = default_limit
    if value(original_limit) == 0:
        return 0
    if value(original_request) == 0:
        return boundary_limit
    if name == CPU:
        return scale_cpu(original_request, original_limit, boundary_limit, NO_ROUNDING)[0]
    return scale_memory(original_request, original_limit, boundary_limit, NO_ROUNDING)[0]


# --------------------------------------------------------------------------- capping.go

def _cap_min(recommended: int, name: str, bounds: dict[str, int]) -> tuple[int, bool]:
    """`maybeCapToMin`: raised to a non-zero bound."""
    low = bounds.get(name, 0)
    return (low, True) if low != 0 and recommended < low else (recommended, False)


def _cap_max(recommended: int, name: str, bounds: dict[str, int]) -> tuple[int, bool]:
    """`maybeCapToMax`: lowered to a non-zero bound."""
    high = bounds.get(name, 0)
    return (high, True) if high != 0 and recommended > high else (recommended, False)


def _boundary(container: Resources, boundary: dict[str, int] | None, default: dict[str, int]) -> dict[str, int]:
    """`getBoundaryRecommendation`: cpu and memory boundaries at the container's ratio ({} without a bound)."""
    if boundary is None:
        return {}
    return {name: boundary_request(name, container.requests.get(name, 0), container.limits.get(name, 0),
                                   boundary.get(name, 0), default.get(name, 0)) for name in (CPU, MEMORY)}


def apply_container_limit_range(recommendation: dict[str, int], container: Resources,
                                item: LimitRangeItem | None) -> list[str]:
    """`applyContainerLimitRange`: each resource raised to the item's min (for the request and, at the container's
    ratio, for the limit) and lowered to its max at the container's ratio; the cappings named."""
    notes: list[str] = []
    if item is None:
        return notes
    default = item.default or {}
    highest = _boundary(container, item.max, default)
    lowest = _boundary(container, item.min, default)
    if item.min is not None:  # getMinAllowedRecommendation: the request itself may not go below min either
        for name in (CPU, MEMORY):
            if item.min.get(name, 0) > lowest.get(name, 0):
                lowest[name] = item.min[name]
    for name in list(recommendation):
        capped, low = _cap_min(recommendation[name], name, lowest)
        recommendation[name] = capped
        if low:
            notes.append(f"{name} capped to fit Min in container LimitRange")
        capped, high = _cap_max(capped, name, highest)
        recommendation[name] = capped
        if high:
            notes.append(f"{name} capped to fit Max in container LimitRange")
    return notes


def apply_policy(recommendation: dict[str, int], policy: ContainerPolicy | None) -> list[str]:
    """`applyVPAPolicy`: each resource raised to `minAllowed`, then lowered to `maxAllowed`; cappings named."""
    notes: list[str] = []
    if policy is None:
        return notes
    for name in list(recommendation):
        capped, low = _cap_min(recommendation[name], name, policy.min_allowed)
        if low:
            notes.append(f"{name} capped to minAllowed")
        capped, high = _cap_max(capped, name, policy.max_allowed)
        recommendation[name] = capped
        if high:
            notes.append(f"{name} capped to maxAllowed")
    return notes


def cap_to_container_limit(recommendation: dict[str, int], limits: dict[str, int]) -> list[str]:
    """`capRecommendationToContainerLimit` (RequestsOnly): not above the container's current limit (compared in
    millis)."""
    notes: list[str] = []
    for name, limit in limits.items():
        if name in recommendation and milli_value(recommendation[name]) > milli_value(limit):
            recommendation[name] = limit
            notes.append(f"{name} capped to container limit")
    return notes


def capped_for_container(container: Resources, rec: ContainerRecommendation, vpa: VerticalPodAutoscaler,
                         item: LimitRangeItem | None) -> tuple[ContainerRecommendation, list[str]]:
    """`getCappedRecommendationForContainer`: target, lower and upper bound each through the container LimitRange,
    the policy and (RequestsOnly) the container's limit; the target's cappings named."""
    policy = vpa.policy(container.name)
    values = vpa.controlled_values(container.name)
    out = []
    notes: list[str] = []
    for i, recommendation in enumerate((rec.target, rec.lower_bound, rec.upper_bound)):
        recommendation = dict(recommendation)
        found = apply_container_limit_range(recommendation, container, item)
        found += apply_policy(recommendation, policy)
        if values == REQUESTS_ONLY:
            found += cap_to_container_limit(recommendation, container.limits)
        if i == 0:
            notes = found
        out.append(recommendation)
    return ContainerRecommendation(rec.container_name, out[0], out[1], out[2], rec.uncapped_target), notes


def _sum_for(name: str, containers: Sequence[Resources], recs: dict[str, dict[str, int]],
             default_limit: int) -> tuple[int, int]:
    """`applyPodLimitRange`'s sums: each container's proportional limit and its recommendation (its request when
    it has none)."""
    sum_limit = sum_recommendation = 0
    for c in containers:
        request, limit = c.requests.get(name, 0), c.limits.get(name, 0)
        recommended = recs[c.name].get(name, 0) if c.name in recs else request
        proportional, _ = proportional_resource_limit(name, limit, request, recommended, default_limit)
        if proportional is not None:
            sum_limit += proportional
        sum_recommendation += recommended
    return sum_limit, sum_recommendation


def apply_pod_limit_range(recs: dict[str, dict[str, int]], containers: Sequence[Resources], item: LimitRangeItem,
                          name: str) -> None:
    """`applyPodLimitRange` for one resource and one of target, lower or upper bound (`recs`: container → that
    list, changed in place): the containers' summed limits brought within the Pod item's min and max, each
    container's share scaled."""
    low, high = (item.min or {}).get(name, 0), (item.max or {}).get(name, 0)
    sum_limit, sum_recommendation = _sum_for(name, containers, recs, (item.default or {}).get(name, 0))
    if low <= sum_limit and low <= sum_recommendation and (high == 0 or high >= sum_limit):
        return
    scale = scale_memory if name == MEMORY else scale_cpu
    if low > sum_recommendation and sum_limit != 0:
        for c in containers:
            if c.name in recs:
                recs[c.name][name] = scale(recs[c.name].get(name, 0), sum_recommendation, low, ROUND_UP)[0]
        return
    if sum_limit == 0:
        return
    target = 0
    if low > sum_limit:
        target = low
    if high != 0 and high < sum_limit:
        target = high
    for c in containers:
        if c.name not in recs:  # upstream scales the container's own limit here and keeps the result nowhere
            continue
        recs[c.name][name] = scale(recs[c.name].get(name, 0), sum_limit, target, ROUND_DOWN)[0]


def cap_to_pod_limit_range(recs: list[ContainerRecommendation], containers: Sequence[Resources],
                           item: LimitRangeItem | None) -> list[ContainerRecommendation]:
    """`capProportionallyToPodLimitRange`: with a Pod LimitRange item, containers without a recommendation get their
    requests as one (`insertRequestsForMissingRecommendations`), then upper bounds, targets and lower bounds are
    brought within it, cpu then memory."""
    if item is None:
        return recs
    named = {r.container_name for r in recs}
    recs = list(recs) + [ContainerRecommendation(c.name, dict(c.requests)) for c in containers
                         if c.name not in named and c.requests]
    lists = {key: {r.container_name: dict(getattr(r, key)) for r in recs}
             for key in ("upper_bound", "target", "lower_bound")}
    pod_containers = [c for c in containers]
    for key in ("upper_bound", "target", "lower_bound"):
        for name in (CPU, MEMORY):
            apply_pod_limit_range(lists[key], pod_containers, item, name)
    return [ContainerRecommendation(r.container_name, lists["target"][r.container_name],
                                    lists["lower_bound"][r.container_name], lists["upper_bound"][r.container_name],
                                    r.uncapped_target) for r in recs]


# --------------------------------------------------------------------------- recommendation_provider.go

@dataclass
class Admitted:
    """What the webhook writes into one container: new requests and limits (only the resources it sets), and the
    annotations of how it got there (`vpaUpdates`)."""

    name: str
    requests: dict[str, int]
    limits: dict[str, int]
    notes: list[str]


def admit(vpa: VerticalPodAutoscaler, containers: Sequence[Resources], container_item: LimitRangeItem | None,
          pod_item: LimitRangeItem | None, *, policy_applies: bool = True) -> list[Admitted]:
    """`GetContainersResourcesForPod` for a pod with `containers` (its `spec.containers`): per container with a
    recommendation, what the webhook sets. `policy_applies=False` is a VPA whose updateMode is Off (no resource
    policy in `GetContainersResources`: limits scaled as RequestsAndLimits)."""
    recs = list(vpa.recommendations or ())
    if vpa.recommendations is None and not vpa.policies:
        return []
    recs = cap_to_pod_limit_range(recs, containers, pod_item)
    by_name = {c.name: c for c in containers}
    capped: dict[str, tuple[ContainerRecommendation, list[str]]] = {}
    for rec in recs:
        container = by_name.get(rec.container_name)
        if container is None:  # "No matching Container found for recommendation"
            continue
        capped[rec.container_name] = capped_for_container(container, rec, vpa, container_item)
    default_limit = (container_item.default if container_item is not None else None) or {}
    out = []
    for c in containers:
        if c.name not in capped:
            continue  # no recommendation: left as it is
        rec, notes = capped[c.name]
        requests = dict(rec.target)
        limits: dict[str, int] = {}
        values = vpa.controlled_values(c.name) if policy_applies else REQUESTS_AND_LIMITS
        if values == REQUESTS_AND_LIMITS:
            scaled, limit_notes = proportional_limit(c.limits, c.requests, requests, default_limit)
            if scaled is not None:
                limits = scaled
                notes = notes + limit_notes
        out.append(Admitted(c.name, {k: v for k, v in requests.items() if k}, limits, notes))
    return out
