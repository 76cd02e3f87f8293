"""metav1.LabelSelector matching: nil selects nothing, {} everything, the four operators, bad expressions."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubefit.k8s.labels import SelectorError, parse_selector, selector_matches

LABELS = {"app": "web", "tier": "front"}


@pytest.mark.parametrize(("selector", "expected"), [
    (None, False),
    ({}, True),
    ({"matchLabels": {"app": "web"}}, True),
    ({"matchLabels": {"app": "db"}}, False),
    ({"matchExpressions": [{"key": "app", "operator": "In", "values": ["db", "web"]}]}, True),
    ({"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a"]}]}, True),  # key absent
    ({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["front"]}]}, False),
    ({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}, True),
    ({"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}, False),
    ({"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "zone", "operator": "Exists"}]}, False),
    ({"matchExpressions": [{"key": "app", "operator": "Gt", "values": ["1"]}]}, False),  # not a label operator
    ({"matchExpressions": [{"key": "app", "operator": "In", "values": []}]}, False),  # In needs values
])
def test_selector_matches(selector, expected):
    assert selector_matches(selector, LABELS) is expected


def test_bad_expressions_are_errors():
    with pytest.raises(SelectorError, match="not a valid label selector operator"):
        parse_selector({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]})
    with pytest.raises(SelectorError, match="values set must be empty"):
        parse_selector({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]})


@given(st.dictionaries(st.sampled_from("abc"), st.sampled_from("xyz")), st.dictionaries(st.sampled_from("abc"),
                                                                                       st.sampled_from("xyz")))
def test_match_labels_is_subset(selector, labels):
    """matchLabels selects exactly the label sets that contain it."""
    assert selector_matches({"matchLabels": selector}, labels) == (selector.items() <= labels.items())


@pytest.mark.parametrize(("selector", "expected"), [
    ({"matchLabels": {"": "bar"}}, False),  # Karmada TestClusterMatches "test label selector error"
    ({"matchLabels": {"example.com/app": "web"}}, False),  # valid prefixed key, label absent
    ({"matchLabels": {"app": "-web"}}, False),  # invalid value
    ({"matchExpressions": [{"key": "Bad_Prefix/app", "operator": "Exists"}]}, False),
    ({"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", ""]}]}, True),  # "" is a valid value
])
def test_keys_and_values_are_validated(selector, expected):
    assert selector_matches(selector, {**LABELS, "example.com/x": "1"}) is expected


def test_invalid_key_is_an_error():
    with pytest.raises(SelectorError, match="key: Invalid value"):
        parse_selector({"matchLabels": {"a/b/c": "x"}})


@pytest.mark.parametrize("selector", [
    "app=web", {"matchLabels": "app"}, {"matchLabels": ["app"]}, {"matchExpressions": {"key": "app"}},
    {"matchExpressions": ["app"]}, {"matchExpressions": [{"key": "app", "operator": ["In"], "values": ["a"]}]},
    {"matchExpressions": [{"key": "app", "operator": "In", "values": "web"}]},
], ids=["string", "labels-string", "labels-list", "expressions-map", "expression-string", "operator-list",
        "values-string"])
def test_malformed_selector_is_a_selector_error(selector):
    """Whatever shape a selector has, parsing it answers or raises SelectorError (callers turn that into
    an input error naming the field), never AttributeError or TypeError."""
    with pytest.raises(SelectorError):
        parse_selector(selector)
