"""The VPA recommender's recommendation from its checkpoints: what it would write into `status.recommendation`.

A port of kubernetes/autoscaler `vertical-pod-autoscaler/pkg/recommender` at vertical-pod-autoscaler/v1.7.1, with
its default flags (`config/config.go` `DefaultRecommenderConfig`):

- `logic/recommender.go` `CreatePodResourceRecommender`: target = the 90th percentile of the cpu histogram and of
  the memory peaks, lower bound the 50th, upper bound the 95th, each plus a 15 % safety margin
  (`WithCPUMargin`: `base + ScaleResource(base, 0.15)`); the upper bound times `(1 + 1/confidence)^1`, the lower
  bound times `(1 + 0.001/confidence)^-2` (`WithCPUConfidenceMultiplier`, `math.Pow` as Go computes it), the
  confidence being `min(days between the first and last sample, samples / 1440)` (`estimator.go`
  `getConfidence`); then at least 25 millicores and 250 MiB shared among the VPA's containers
  (`GetRecommendedPodResources`: `ScaleResource(min, 1/containers)`).
- `model/types.go`: amounts are int64 (millicores, bytes), truncated from float64 (`resourceAmountFromFloat`,
  capped at 1e14, negatives 0); cpu becomes a milli-quantity, memory a byte quantity.
- `logic/recommender.go` `FilterControlledResources`: only the container policy's `controlledResources`
  (default cpu and memory); a container whose policy `mode` is Off gets none (`NeedsRecommendation`).
- `routines/capping_post_processor.go` → `utils/vpa/capping.go` `ApplyVPAPolicy`: target and bounds capped to the
  policy's `minAllowed`/`maxAllowed`; `uncappedTarget` is the target before.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from kubefit.k8s.gomath import go_pow
from kubefit.manifests.usage.vpa import Checkpoint, ContainerRecommendation, VerticalPodAutoscaler

SAFETY_MARGIN = 0.15
POD_MIN_CPU_MILLICORES = 25.0
POD_MIN_MEMORY_MB = 250.0
TARGET, LOWER, UPPER = 0.9, 0.5, 0.95  # cpu and memory percentiles alike
CONFIDENCE_INTERVAL = 24 * 3600.0  # seconds (ConfidenceIntervalCPU / Memory)
MAX_RESOURCE_AMOUNT = 10**14  # model.MaxResourceAmount
MIN_INT64 = -(2**63)
MILLI, NANO = 10**6, 10**9


def amount_from_float(amount: float) -> int:
    """`resourceAmountFromFloat`: int64 truncation, capped at 1e14, negatives 0; NaN converts as amd64 does
    (the int64 minimum)."""
    if math.isnan(amount):
        return MIN_INT64
    if amount > float(MAX_RESOURCE_AMOUNT):
        return MAX_RESOURCE_AMOUNT
    if amount < 0:
        amount = 0.0
    return int(amount)


def scale(amount: int, factor: float) -> int:
    """`ScaleResource`: `resourceAmountFromFloat(float64(amount) * factor)`."""
    return amount_from_float(float(amount) * factor)


def confidence(checkpoint: Checkpoint) -> float:
    """`getConfidence`: the lesser of the days between the first and last sample and the samples / 1440."""
    first, last = checkpoint.first_sample_start, checkpoint.last_sample_start
    span = 0.0 if first is None or last is None else (last - first)
    days = span / CONFIDENCE_INTERVAL
    samples = float(checkpoint.total_samples) / (CONFIDENCE_INTERVAL / 60.0)
    return min(days, samples)


def _multiplier(multiplier: float, exponent: float, conf: float) -> float:
    """`math.Pow(1.+multiplier/confidence, exponent)` (confidence 0: +Inf to the power)."""
    base = math.inf if conf == 0 else 1.0 + multiplier / conf
    return go_pow(base, exponent)


def _estimate(percentile_value: float, to_amount: float, minimum: int, confidence_scale: float | None) -> int:
    """percentile → amount, + margin, × confidence multiplier, ≥ minimum (the estimator chain's order)."""
    base = amount_from_float(percentile_value * to_amount)
    base = base + scale(base, SAFETY_MARGIN)
    if confidence_scale is not None:
        base = scale(base, confidence_scale)
    return max(base, minimum)


def recommend(vpa: VerticalPodAutoscaler, checkpoints: Sequence[Checkpoint]) -> tuple[ContainerRecommendation, ...]:
    """The recommendation the recommender computes for `vpa` from its containers' checkpoints, sorted by
    container name, after the capping post-processor; quantities in nano-units."""
    wanted = [c for c in checkpoints if (p := vpa.policy(c.container_name)) is None or p.mode != "Off"]
    if not wanted:
        return ()
    fraction = 1.0 / float(len(wanted))
    min_cpu = scale(amount_from_float(POD_MIN_CPU_MILLICORES * 0.001 * 1000.0), fraction)
    min_memory = scale(amount_from_float(POD_MIN_MEMORY_MB * 1024 * 1024), fraction)
    out = []
    for c in sorted(wanted, key=lambda c: c.container_name):
        conf = confidence(c)
        bounds = {}
        for label, pct, conf_scale in (("target", TARGET, None), ("lower", LOWER, _multiplier(0.001, -2.0, conf)),
                                       ("upper", UPPER, _multiplier(1.0, 1.0, conf))):
            cpu = _estimate(c.cpu.percentile(pct), 1000.0, min_cpu, conf_scale)
            memory = _estimate(c.memory.percentile(pct), 1.0, min_memory, conf_scale)
            bounds[label] = {"cpu": cpu * MILLI, "memory": memory * NANO}
        policy = vpa.policy(c.container_name)
        controlled = policy.controlled_resources if policy and policy.controlled_resources is not None else (
            "cpu", "memory")
        kept = {k: {r: v for r, v in b.items() if r in controlled} for k, b in bounds.items()}
        out.append(ContainerRecommendation(
            c.container_name, _capped(kept["target"], policy), _capped(kept["lower"], policy),
            _capped(kept["upper"], policy), dict(kept["target"])))
    return tuple(out)


def _capped(recommendation: dict[str, int], policy) -> dict[str, int]:  # noqa: ANN001
    """`applyVPAPolicyForContainer` (no global maximum): each resource raised to `minAllowed`, lowered to
    `maxAllowed` (a zero bound is no bound: `maybeCapToMin`/`maybeCapToMax`)."""
    if policy is None:
        return dict(recommendation)
    out = {}
    for name, value in recommendation.items():
        low, high = policy.min_allowed.get(name, 0), policy.max_allowed.get(name, 0)
        if low and value < low:
            value = low
        if high and value > high:
            value = high
        out[name] = value
    return out
