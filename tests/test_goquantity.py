"""Go `resource.Quantity` facts of SPEC-karmada §0: Value/MilliValue (with int64 wrapping), canonical
strings, cached-string struct equality, BinarySI clamp — hand-computed cases and properties."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from kubefit.k8s import goquantity as gq
from kubefit.k8s.quantity import milli_value, parse_quantity, value

MAX = 2**63 - 1


@pytest.mark.parametrize(("text", "v", "m"), [
    ("500m", 1, 500), ("1n", 1, 1), ("1500m", 2, 1500), ("1Gi", 2**30, 2**30 * 1000),
    ("9223372036854775807", MAX, -1000),          # MilliValue wraps (single multiply)
    ("1e19", 0, 0),                               # several ×10 steps overflow → 0
    ("9223372036854775808", -(2**63), 0),         # big decimal: low 64 bits
    ("8Ei", MAX, -1000), ("8192Pi", MAX, -1000),  # BinarySI clamped to MaxInt64
    ("9223372036854775806.5", MAX, -1500), ("10E", 0, 0), ("-500m", -1, -500),
])
def test_value_and_milli_value(text, v, m):
    q = gq.parse(text)
    assert (q.int_value(), q.milli_value()) == (v, m)


@pytest.mark.parametrize(("text", "canonical", "cached"), [
    ("2", "2", True), ("500m", "500m", True), ("1k", "1k", True), ("2000m", "2", False),
    ("1Gi", "1Gi", True), ("3Mi", "3Mi", True), ("16Gi", "16Gi", False), ("1024Mi", "1Gi", False),
    ("1.5Gi", "1536Mi", False), ("7.5", "7500m", False), ("8589934592000m", "8589934592", False),
    ("25165824Ki", "24Gi", False), ("9500e-3", "9500e-3", True), ("350e-2", "3500e-3", False),
    ("0.5", "500m", False), ("1e19", "10e18", False), ("512", "512", True), ("0", "0", True),
])
def test_canonical_and_cached_strings(text, canonical, cached):
    q = gq.parse(text)
    assert gq.canonical(q) == canonical
    assert (q.s == text) is cached
    assert q.string() == (text if cached else canonical)


@pytest.mark.parametrize(("a", "b", "equal"), [
    ("1Gi", "1Gi", True), ("16Gi", "16Gi", True), ("1Gi", "1024Mi", False), ("2", "2000m", False),
    ("1.5Gi", "1.5Gi", False), ("4", "4", True), ("1000m", "1", False),
])
def test_struct_equality(a, b, equal):
    assert gq.struct_equal(gq.parse(a), gq.parse(b)) is equal


def test_set_keeps_format_and_clears_cached_string():
    q = gq.parse("1Gi").set_int64(MAX)
    assert q.format == gq.BINARY_SI and q.s == "" and q.string() == "9223372036854775807"
    assert gq.parse("3Gi").set_int64(0).string() == "0"


def test_malformed_quantities_raise():
    for text in ("", "abc", "1.5.5", "5Gb", "1e"):
        with pytest.raises(ValueError):
            gq.parse(text)


quantities = st.builds(
    lambda n, frac, suffix: f"{n}{'.' + frac if frac else ''}{suffix}",
    st.integers(0, 10**12), st.sampled_from(["", "5", "25", "125", "001"]),
    st.sampled_from(["", "m", "u", "n", "k", "M", "G", "Ki", "Mi", "Gi", "e3", "e-2"]))


@given(quantities)
def test_value_matches_exact_rounding_in_safe_range(text):
    """Below the overflow range, Go's Value/MilliValue are exact ceilings (kubefit.k8s.quantity)."""
    q, nanos = gq.parse(text), parse_quantity(text)
    if q.format == gq.BINARY_SI and nanos > MAX * 10**9:
        assert q.nanos() == MAX * 10**9  # the BinarySI cap
        return
    assert q.nanos() == nanos
    if abs(nanos) < 2**62:
        assert q.int_value() == value(nanos) and q.milli_value() == milli_value(nanos)


@given(quantities)
def test_canonical_string_reparses_to_same_value(text):
    """Outside the overflow range (2^62 base units and more, where Go's int64 arithmetic wraps)."""
    assume(abs(parse_quantity(text)) < 2**62 * 10**9)
    q = gq.parse(text)
    # Go's DecimalSI has no suffix beyond E (10^18): CanonicalizeBytes then drops the exponent ("1000000000000G"
    # prints as "1"), so only values below 1000E round-trip.
    beyond_e = q.format == gq.DECIMAL_SI and abs(parse_quantity(text)) >= 10**21 * 10**9
    assert parse_quantity(gq.canonical(q)) == parse_quantity(text) or q.format == gq.BINARY_SI or beyond_e
