"""The VPA recommender's usage histograms: its bucket scheme, a checkpoint loaded, percentiles read from it.

A port of kubernetes/autoscaler `vertical-pod-autoscaler/pkg/recommender/util` at vertical-pod-autoscaler/v1.7.1:
`histogram_options.go` (`NewExponentialHistogramOptions`: bucket n starts at `first * (ratio^n - 1) / (ratio - 1)`,
`math.Pow` as Go computes it), `histogram.go` (`LoadFromCheckpoint`, `Percentile`: the end of the bucket where
the cumulative weight reaches the percentile, `updateMinAndMaxBucket` with the epsilon below which a bucket is
empty) and `decaying_histogram.go` (a checkpoint's weights already carry the decay: a sample's weight is
multiplied by `2^((t - referenceTimestamp) / halfLife)`, so loading keeps the recorded weights and the reference
time). The options are `model/aggregations_config.go`'s: cpu in cores from 0.01 core to 1000 cores, memory in
bytes from 1e7 to 1e12, buckets 5 % wider each (`DefaultHistogramBucketSizeGrowth`), epsilon `0.001 * 0.1`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from kubefit.k8s.gomath import go_pow

MIN_SAMPLE_WEIGHT = 0.1  # model/aggregations_config.go minSampleWeight
EPSILON = 0.001 * MIN_SAMPLE_WEIGHT  # ... epsilon
BUCKET_GROWTH = 0.05  # DefaultHistogramBucketSizeGrowth
MAX_CHECKPOINT_WEIGHT = 10000  # histogram.go MaxCheckpointWeight


@dataclass(frozen=True)
class ExponentialOptions:
    """`exponentialHistogramOptions`: the number of buckets, the first bucket's size and the growth ratio."""

    num_buckets: int
    first_bucket_size: float
    ratio: float
    epsilon: float = EPSILON

    @classmethod
    def of(cls, max_value: float, first_bucket_size: float, ratio: float) -> ExponentialOptions:
        """`NewExponentialHistogramOptions`: enough buckets that the last one starts at `max_value` or above."""
        count = int(math.ceil(math.log(max_value * (ratio - 1) / first_bucket_size + 1) / math.log(ratio))) + 1
        return cls(count, first_bucket_size, ratio)

    def bucket_start(self, bucket: int) -> float:
        """`GetBucketStart`: 0 for the first bucket, `first * (ratio^bucket - 1) / (ratio - 1)` after."""
        if bucket < 0 or bucket >= self.num_buckets:
            raise IndexError(f"index {bucket} out of range [0..{self.num_buckets - 1}]")
        if bucket == 0:
            return 0.0
        return self.first_bucket_size * (go_pow(self.ratio, float(bucket)) - 1) / (self.ratio - 1)

    def starts(self) -> np.ndarray:
        """Every bucket's start (float64), as `bucket_start` gives them."""
        return np.array([self.bucket_start(b) for b in range(self.num_buckets)], dtype=np.float64)


@dataclass(frozen=True)
class LinearOptions:
    """`linearHistogramOptions`: fixed-size buckets from 0 (upstream's tests use them; the recommender does not)."""

    num_buckets: int
    bucket_size: float
    epsilon: float = EPSILON

    @classmethod
    def of(cls, max_value: float, bucket_size: float, epsilon: float = EPSILON) -> LinearOptions:
        """`NewLinearHistogramOptions`: the last bucket starts at `max_value` or above."""
        return cls(int(math.ceil(max_value / bucket_size)) + 1, bucket_size, epsilon)

    def bucket_start(self, bucket: int) -> float:
        if bucket < 0 or bucket >= self.num_buckets:
            raise IndexError(f"index {bucket} out of range [0..{self.num_buckets - 1}]")
        return float(bucket) * self.bucket_size

    def starts(self) -> np.ndarray:
        return np.arange(self.num_buckets, dtype=np.float64) * self.bucket_size


CPU_OPTIONS = ExponentialOptions.of(1000.0, 0.01, 1.0 + BUCKET_GROWTH)  # cores
MEMORY_OPTIONS = ExponentialOptions.of(1e12, 1e7, 1.0 + BUCKET_GROWTH)  # bytes


class CheckpointError(ValueError):
    """`LoadFromCheckpoint`'s refusal (its message), located by the caller."""


@dataclass
class Histogram:
    """`histogram`: per-bucket weights (float64), their total, the first and last non-empty buckets."""

    options: ExponentialOptions | LinearOptions
    weights: np.ndarray
    total: float = 0.0
    min_bucket: int = 0
    max_bucket: int = 0

    @classmethod
    def empty(cls, options: ExponentialOptions | LinearOptions) -> Histogram:
        """`NewHistogram`: no weight, minBucket the last bucket and maxBucket 0."""
        return cls(options, np.zeros(options.num_buckets), 0.0, options.num_buckets - 1, 0)

    @classmethod
    def from_checkpoint(cls, options: ExponentialOptions | LinearOptions, bucket_weights: dict[int, int],
                        total_weight: float) -> Histogram:
        """`LoadFromCheckpoint` into an empty histogram: every bucket's weight scaled by
        `totalWeight / Σ weights` (the checkpoint stores them normalised to at most 10000), then
        `updateMinAndMaxBucket` (issue #7726: buckets that fell below epsilon are dropped)."""
        h = cls.empty(options)
        if total_weight < 0.0:
            raise CheckpointError(f"cannot load checkpoint with negative weight {_go_float(total_weight)}")
        total = 0
        for bucket, weight in bucket_weights.items():
            total += weight
            if bucket >= options.num_buckets:
                raise CheckpointError(f"checkpoint has bucket {bucket} that is exceeding histogram buckets "
                                      f"{options.num_buckets}")
            if bucket < 0:
                raise CheckpointError(f"checkpoint has a negative bucket {bucket}")
        if total == 0:
            return h
        ratio = total_weight / float(total)
        for bucket, weight in bucket_weights.items():
            h.min_bucket = min(h.min_bucket, bucket)
            h.max_bucket = max(h.max_bucket, bucket)
            h.weights[bucket] += float(weight) * ratio
        h.total += total_weight
        h.update_min_and_max_bucket()
        return h

    def update_min_and_max_bucket(self) -> None:
        """`updateMinAndMaxBucket`: skip buckets whose weight is below epsilon at both ends."""
        last = self.options.num_buckets - 1
        while self.weights[self.min_bucket] < self.options.epsilon and self.min_bucket < last:
            self.min_bucket += 1
        while self.weights[self.max_bucket] < self.options.epsilon and self.max_bucket > 0:
            self.max_bucket -= 1

    def is_empty(self) -> bool:
        """`IsEmpty`: the first non-empty bucket's weight is below epsilon."""
        return bool(self.weights[self.min_bucket] < self.options.epsilon)

    def percentile(self, percentile: float) -> float:
        """`Percentile` (0..1): the end of the first bucket where the running weight reaches `percentile` of the
        total (the start of the last bucket, which has no end); 0 for an empty histogram."""
        if self.is_empty():
            return 0.0
        partial = 0.0
        threshold = percentile * self.total
        bucket = self.min_bucket
        while bucket < self.max_bucket:
            partial += float(self.weights[bucket])
            if partial >= threshold:
                break
            bucket += 1
        if bucket < self.options.num_buckets - 1:
            return self.options.bucket_start(bucket + 1)
        return self.options.bucket_start(bucket)

    def share_above(self, value: float) -> float | None:
        """The share of the (decayed) weight in buckets that start at or above `value`: how often the recorded
        usage exceeded it, to the histogram's resolution (a bucket straddling `value` is not counted). None for
        an empty histogram."""
        if self.is_empty() or self.total <= 0:
            return None
        starts = self.options.starts()
        above = float(self.weights[starts >= value].sum())
        return min(1.0, above / self.total)


def _go_float(x: float) -> str:
    """`%v` of a float64 (Go's shortest representation; exponent form past 1e21)."""
    text = repr(float(x))
    return text[:-2] if text.endswith(".0") else text
