"""Properties of usage in and requests out (hypothesis, modest examples)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from kubefit.manifests.usage.prometheus import decode_response
from kubefit.manifests.usage.vpa import ContainerPolicy, ContainerRecommendation, VerticalPodAutoscaler
from kubefit.manifests.usage.vpaadmission import Resources, admit, milli_value, proportional_resource_limit

MILLI, NANO = 10**6, 10**9
millis = st.integers(min_value=1, max_value=64_000)


@settings(max_examples=150, deadline=None)
@given(request=millis, limit=millis, recommended=millis)
def test_cpu_limit_keeps_the_ratio_to_the_millicore(request, limit, recommended):
    """`GetProportionalLimit` (cpu): limit_after = floor(limit * recommended / request) millicores, i.e. the ratio
    kept to within one millicore (or the recommendation itself when request = limit)."""
    got, _ = proportional_resource_limit("cpu", limit * MILLI, request * MILLI, recommended * MILLI, 0)
    if request == limit:
        assert got == recommended * MILLI
    else:
        assert milli_value(got) * request <= limit * recommended < (milli_value(got) + 1) * request


@settings(max_examples=150, deadline=None)
@given(target=st.integers(0, 10**6), low=st.integers(0, 10**6), high=st.integers(0, 10**6))
def test_policy_bounds_hold(target, low, high):
    """After the webhook, the request is within [minAllowed, maxAllowed] whenever both are set and ordered (a
    zero bound is no bound)."""
    if low > high:
        low, high = high, low
    rec = ContainerRecommendation("c", {"cpu": target * MILLI})
    policy = ContainerPolicy("c", min_allowed={"cpu": low * MILLI}, max_allowed={"cpu": high * MILLI})
    vpa = VerticalPodAutoscaler("d", "v", "Deployment", "w", "Recreate", (policy,), (rec,))
    [got] = admit(vpa, [Resources("c", {"cpu": MILLI})], None, None)
    value = got.requests["cpu"] // MILLI
    if low:
        assert value >= low
    if high:
        assert value <= high
    if (not low or target >= low) and (not high or target <= high):
        assert value == target


finite = st.floats(min_value=0, max_value=1e15, allow_nan=False, allow_infinity=False)


@settings(max_examples=100, deadline=None)
@given(values=st.lists(finite, min_size=1, max_size=50))
def test_prometheus_values_read_exactly(values):
    """Values as Prometheus writes them (Go's shortest float text; Python's repr is the same digits) read back
    bit for bit, at the times given."""
    series = [{"metric": {"namespace": "n", "pod": "p", "container": "c"},
               "values": [[1000 + 60 * i, repr(v)] for i, v in enumerate(values)]}]
    body = json.dumps({"status": "success", "data": {"resultType": "matrix", "result": series}}).encode()
    [c] = decode_response(body, "f.json", "memory").containers
    assert c.memory.values.tolist() == values
    assert c.memory.times.tolist() == [1000.0 + 60 * i for i in range(len(values))]
