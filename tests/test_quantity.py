"""Quantities parse exactly and round as Kubernetes does (SPEC §1)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubefit.k8s.quantity import QuantityError, milli_value, parse_quantity, value


@pytest.mark.parametrize(
    ("text", "milli", "whole"),
    [
        ("1", 1000, 1),
        ("500m", 500, 1),  # memory 500m counts as 1 byte
        ("1.0001", 1001, 2),  # cpu 1.0001 → 1001m
        ("1n", 1, 1),
        ("1Ki", 1024000, 1024),
        ("1.5Gi", 1610612736000, 1610612736),
        ("1e3", 1000000, 1000),
        ("1E-3", 1, 1),
        ("2k", 2000000, 2000),
        ("0.1", 100, 1),
        (".5", 500, 1),
        ("5.", 5000, 5),
        ("256Mi", 268435456000, 268435456),
        ("1M", 10**9, 10**6),
        ("2E", 2 * 10**21, 2 * 10**18),  # "E" alone is the exa suffix, not an exponent
        ("0", 0, 0),
        (4, 4000, 4),
    ],
)
def test_parse_and_round(text, milli, whole):
    q = parse_quantity(text)
    assert milli_value(q) == milli
    assert value(q) == whole


def test_finer_than_nano_rounds_up():
    assert parse_quantity("0.0000000001") == 1  # 1e-10 → 1n


@pytest.mark.parametrize("bad", ["12x", "", "1.2.3", "Gi", "1 Gi", "--1", "1i"])
def test_bad_quantities_are_refused(bad):
    with pytest.raises(QuantityError):
        parse_quantity(bad)


@given(st.integers(min_value=0, max_value=10**15))
def test_integer_milli_roundtrip(n):
    assert milli_value(parse_quantity(f"{n}m")) == n
    assert value(parse_quantity(str(n))) == n


def test_exa_suffix_alone_is_not_an_exponent():
    """`E` is the exa suffix (10^18); `E3` / `e3` are exponents (found by a property of goquantity)."""
    assert parse_quantity("125E") == 125 * 10**18 * 10**9
    assert parse_quantity("1E3") == parse_quantity("1e3") == 1000 * 10**9


@pytest.mark.parametrize(("bad", "why"), [
    ("12x", "regular expression"), ("1K", "suffix"), ("1e", "suffix"), ("1Ki5", "suffix"),
    ("Gi", "regular expression"), (".", "regular expression"), ("+", "regular expression"),
    ("\u0661", "regular expression"),  # an Arabic-Indic one: Go reads ASCII digits only
])
def test_one_lexer_for_both_parsers(bad, why):
    """kubefit's exact parser and Karmada's Go Quantity read the text alike (apimachinery's lexer)."""
    from kubefit.k8s import goquantity as gq

    with pytest.raises(QuantityError, match=why):
        parse_quantity(bad)
    if bad not in ("Gi", ".", "+"):  # Go reads these as 0; kubefit refuses a quantity without digits
        with pytest.raises(QuantityError, match=why):
            gq.parse(bad)
    else:
        assert gq.parse(bad).is_zero()
