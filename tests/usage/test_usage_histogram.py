"""The VPA recommender's histograms, checkpoints and recommendation, against Go and upstream's tables.

- bucket starts: values printed by Go 1.19 (linux/amd64) running `histogram_options.go`'s `GetBucketStart`
  formula with the recommender's options (`0.01 * (math.Pow(1.05, n) - 1) / (1.05 - 1)` with the ratio a
  variable, as in the struct); Python's `**` differs from Go's `math.Pow` in the last bits for 175 of the 176
  buckets, so these fail if `go_pow` is replaced by `**`;
- percentiles and checkpoint loading: ported from kubernetes/autoscaler vertical-pod-autoscaler/v1.7.1
  `pkg/recommender/util/histogram_test.go` (`TestPercentilesEmptyHistogram`, `TestPercentiles`,
  `TestHistogramLoadFromCheckpoint`, `...ReturnsErrorOnNegativeBucket`, `...OnInvalidBucket`,
  `...NegativeTotaWeight`);
- the recommendation from a checkpoint: derived by hand below.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kubefit.k8s.gomath import go_pow
from kubefit.manifests.documents import parse_documents
from kubefit.manifests.usage.histogram import (
    CPU_OPTIONS,
    MEMORY_OPTIONS,
    CheckpointError,
    Histogram,
    LinearOptions,
)
from kubefit.manifests.usage.recommender import recommend
from kubefit.manifests.usage.vpa import decode_checkpoint, decode_vpa

GO_STARTS = {  # bucket: (cpu cores, memory bytes), from Go
    5: (0.05525631249999998, 5.525631249999998e07), 10: (0.1257789253554882, 1.2577892535548821e08),
    11: (0.14206787162326262, 1.420678716232626e08), 37: (1.0162813885540904, 1.0162813885540904e09),
    61: (3.722629037765819, 3.722629037765819e09), 100: (26.1002515692607, 2.6100251569260696e10),
    175: (1021.1094089048601, 1.02110940890486e12)}


@pytest.mark.parametrize("bucket", sorted(GO_STARTS))
def test_bucket_starts_are_go_s(bucket):
    cpu, memory = GO_STARTS[bucket]
    assert CPU_OPTIONS.bucket_start(bucket) == cpu
    assert MEMORY_OPTIONS.bucket_start(bucket) == memory


def test_bucket_counts():
    """log(1.05, 1000 * 0.05 / 0.01 + 1) = 174.56 → 175 + 1 buckets (and the same for memory)."""
    assert CPU_OPTIONS.num_buckets == MEMORY_OPTIONS.num_buckets == 176


def test_go_pow_integral_powers():
    """`math.Pow(1.05, 10)` printed by Go 1.19: 1.6288946267774416 (Python's 1.05 ** 10 is 1.628894626777442);
    and the recommender's confidence multipliers' cases: Pow(+Inf, -2) = 0, Pow(x, 1) = x."""
    assert go_pow(1.05, 10.0) == 1.6288946267774416
    assert 1.05**10 != 1.6288946267774416
    assert go_pow(float("inf"), -2.0) == 0.0 and go_pow(1.125, 1.0) == 1.125


TEST_OPTIONS = LinearOptions.of(10.0, 1.0, 1e-15)  # histogram_test.go testHistogramOptions


def _linear(weights: dict[int, float]) -> Histogram:
    h = Histogram.empty(TEST_OPTIONS)
    for bucket, w in weights.items():
        h.weights[bucket] += w
        h.total += w
        h.min_bucket, h.max_bucket = min(h.min_bucket, bucket), max(h.max_bucket, bucket)
    return h


def test_percentiles_empty_histogram():
    h = Histogram.empty(TEST_OPTIONS)
    assert [h.percentile(p) for p in (-0.5, 0.0, 0.5, 1.0, 1.5)] == [0.0] * 5


@pytest.mark.parametrize("p,expect", [(0.0, 2), (0.1, 2), (0.2, 3), (0.3, 3), (0.4, 4), (0.5, 4), (0.6, 4),
                                      (0.7, 5), (0.8, 5), (0.9, 5), (1.0, 5)])
def test_percentiles(p, expect):
    """{1: 1, 2: 2, 3: 3, 4: 4}: the end of the bucket reaching the percentile."""
    assert _linear({1: 1, 2: 2, 3: 3, 4: 4}).percentile(p) == expect


def test_load_from_checkpoint():
    h = Histogram.from_checkpoint(TEST_OPTIONS, {0: 1, 1: 2}, 6.0)
    assert h.total == 6.0 and h.weights[0] == 2.0 and h.weights[1] == 4.0


@pytest.mark.parametrize("weights,total,message", [
    ({-1: 1}, 1.0, "checkpoint has a negative bucket -1"),
    ({99: 1}, 1.0, "checkpoint has bucket 99 that is exceeding histogram buckets 11"),
    ({}, -1.0, "cannot load checkpoint with negative weight -1"),
])
def test_load_from_checkpoint_refusals(weights, total, message):
    with pytest.raises(CheckpointError, match=message):
        Histogram.from_checkpoint(TEST_OPTIONS, weights, total)


CHECKPOINT = """
apiVersion: autoscaling.k8s.io/v1
kind: VerticalPodAutoscalerCheckpoint
metadata: {name: web-web, namespace: default}
spec: {vpaObjectName: web, containerName: web}
status:
  version: v3
  lastUpdateTime: "2026-01-09T00:00:00Z"
  firstSampleStart: "2026-01-01T00:00:00Z"
  lastSampleStart: "2026-01-09T00:00:00Z"
  totalSamplesCount: 5760
  cpuHistogram: {referenceTimestamp: "2026-01-09T00:00:00Z", bucketWeights: {"10": 10000}, totalWeight: 100}
  memoryHistogram: {referenceTimestamp: "2026-01-10T00:00:00Z", bucketWeights: {"60": 10000}, totalWeight: 5}
"""
VPA = """
apiVersion: autoscaling.k8s.io/v1
kind: VerticalPodAutoscaler
metadata: {name: web, namespace: default}
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
"""


def test_recommendation_from_checkpoint_by_hand():
    """All cpu weight in bucket 10, all memory weight in bucket 60; 8 days between the first and last sample but
    5760 samples (4 days at one a minute): confidence min(8, 4) = 4.

    - target cpu: p90 is the end of bucket 10 = start of 11 = 0.14206787162326262 cores → int(142.07) = 142m,
      + int(142 * 0.15) = 21 → 163m (above 25m, one container);
    - target memory: start of 61 = 3722629037.765819 → 3722629037 B, + int(3722629037 * 0.15) = 558394355
      → 4281023392 B;
    - lower bound: the same base × (1 + 0.001/4)^-2 = 1 / 1.0005000625 = 0.99950031... → int(162.92) = 162m,
      4281023392 - 4281023392 * 0.00049968... = 4278883682.6 → 4278883682 B;
    - upper bound: × (1 + 1/4) = 1.25 → int(203.75) = 203m, 4281023392 * 1.25 = 5351279240 B;
    - uncappedTarget: the target (no policy).
    The same chain run in Go 1.19 (the estimators' arithmetic, `math.Pow`) printed 163 4281023392 162 4278883682
    203 5351279240."""
    checkpoint = decode_checkpoint(parse_documents(CHECKPOINT)[0])
    [rec] = recommend(decode_vpa(parse_documents(VPA)[0]), [checkpoint])
    nano = 10**9
    assert rec.target == {"cpu": 163 * 10**6, "memory": 4281023392 * nano}
    assert rec.lower_bound == {"cpu": 162 * 10**6, "memory": 4278883682 * nano}
    assert rec.upper_bound == {"cpu": 203 * 10**6, "memory": 5351279240 * nano}
    assert rec.uncapped_target == rec.target


def test_recommendation_floor_shared_among_containers():
    """`GetRecommendedPodResources`: 25m and 250MiB split among the VPA's containers; two containers with an
    empty histogram get 12m (int(25 * 0.5) = 12) and 131072000 B (262144000 / 2) each."""
    empty = CHECKPOINT.replace('{"10": 10000}', "{}").replace('{"60": 10000}', "{}")
    a = decode_checkpoint(parse_documents(empty)[0])
    b = decode_checkpoint(parse_documents(empty.replace("containerName: web", "containerName: side"))[0])
    recs = recommend(decode_vpa(parse_documents(VPA)[0]), [a, b])
    assert [r.container_name for r in recs] == ["side", "web"]
    assert all(r.target == {"cpu": 12 * 10**6, "memory": 131072000 * 10**9} for r in recs)


def test_recommendation_controlled_resources_and_policy_caps():
    """`FilterControlledResources` keeps cpu only; `ApplyVPAPolicy` caps it to maxAllowed 100m, uncappedTarget
    keeps 163m."""
    vpa = VPA + """  resourcePolicy:
    containerPolicies:
    - containerName: web
      controlledResources: [cpu]
      maxAllowed: {cpu: 100m}
"""
    [rec] = recommend(decode_vpa(parse_documents(vpa)[0]), [decode_checkpoint(parse_documents(CHECKPOINT)[0])])
    assert rec.target == {"cpu": 100 * 10**6} and rec.uncapped_target == {"cpu": 163 * 10**6}


def test_checkpoints_drive_the_rewrite_and_the_risk(tmp_path):
    """examples/rightsize's web with a VPA that has no recommendation yet but a checkpoint (all cpu weight in
    bucket 10, all memory in bucket 60; by hand above: 163m, 4281023392 B): the admission controller applies
    what the recommender computes. The risk reads the histogram: today's 1 cpu request is above every bucket
    with weight (none above: 0), the new 163m is the end of bucket 10, so no weight starts at or above it (0);
    today's 2Gi memory limit is below bucket 60's start (3.47e9 B): all the weight is above it (1.0)."""
    import kubefit
    from kubefit.manifests.usage.requestsfrom import RequestsFrom

    root = Path(__file__).resolve().parents[2] / "examples" / "rightsize"
    (tmp_path / "vpa.yaml").write_text(VPA.replace("namespace: default", "namespace: default") +
                                       "  updatePolicy: {updateMode: Recreate}\n---" + CHECKPOINT)
    result = kubefit.rightsize([str(root / "cluster.yaml")], RequestsFrom("vpa", usage=(str(tmp_path / "vpa.yaml"),)),
                               warn=lambda _: None, consolidate=False)
    [change] = result.changes
    assert change["containers"][0]["requests"]["after"] == {"cpu": "163m", "memory": "4281023392"}
    [risk] = result.risk
    assert risk["measured"] == "histogram"
    assert risk["cpu"]["overRequestBefore"] == 0.0 and risk["cpu"]["overRequestAfter"] == 0.0
    assert risk["memory"]["overLimitBefore"] == 1.0 and risk["memory"]["overLimitAfter"] == 0.0
    assert risk["memory"]["usage"]["p50"] == MEMORY_OPTIONS.bucket_start(61)
