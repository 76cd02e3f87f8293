"""CEL device selectors as Kubernetes evaluates them for DRA.

The first table is upstream's TestCEL (k8s.io/dynamic-resource-allocation v0.34.1 cel/compile_test.go) with
its expected matches, compile errors and runtime errors (its estimated costs are a compile-time figure
kubefit does not compute); the others pin the Kubernetes quantity and semver libraries against
apimachinery's and blang/semver's rules, worked by hand in each docstring.
"""

from __future__ import annotations

import pytest

from kubefit.api.dra import Device, DeviceAttribute
from kubefit.k8s.cel import (
    COST_LIMIT_EXCEEDED,
    CelError,
    CelRuntimeError,
    compile_selector,
    normalize_semver,
    parse_semver,
)
from kubefit.k8s.quantity import parse_quantity

DRIVER = "dra.example.com"


def _device(attributes=None, capacity=None) -> Device:
    attrs = {k: DeviceAttribute(*v) for k, v in (attributes or {}).items()}
    return Device("d", attrs, {k: parse_quantity(v) for k, v in (capacity or {}).items()})


# (name, expression, driver, attributes, capacity, expect: True/False, "compile: …" or "error: …")
UPSTREAM = [
    ("true", "true", "", None, None, True),
    ("false", "false", "", None, None, False),
    ("syntax-error", "?!", "", None, None, "compile: Syntax error"),
    ("type-error", "1", "", None, None, "compile: must evaluate to bool or the unknown type, not int"),
    ("runtime-error-lookup-identifier",
     'device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))', "", None, None,
     "error: no such key: noSuchAttr"),
    ("runtime-error-lookup-map",
     'device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))', "", None, None,
     "error: no such key: noSuchAttr"),
    ("domain-check-negative", '"no-such-domain" in device.attributes', "", None, None, False),
    ("domain-check-positive", '"dra.example.com" in device.attributes', "",
     {"dra.example.com/something": ("bool", True)}, None, True),
    ("empty-driver-name", 'device.driver == ""', "", None, None, True),
    ("real-driver-name", 'device.driver == "dra.example.com"', DRIVER, None, None, True),
    ("driver-name-qualifier", 'device.attributes["dra.example.com"].name', DRIVER, {"name": ("bool", True)}, None,
     True),
    ("driver-name-qualifier-map-lookup", 'device.attributes["dra.example.com"]["name"]', DRIVER,
     {"name": ("bool", True)}, None, True),
    ("bind", 'cel.bind(dra, device.attributes["dra.example.com"], dra.name)', DRIVER, {"name": ("bool", True)}, None,
     True),
    ("qualified-attribute-name", 'device.attributes["other.example.com"].name', DRIVER,
     {"other.example.com/name": ("bool", True)}, None, True),
    ("bool", 'device.attributes["dra.example.com"].name', DRIVER, {"name": ("bool", True)}, None, True),
    ("int", 'device.attributes["dra.example.com"].name > 0', DRIVER, {"name": ("int", 1)}, None, True),
    ("string", 'device.attributes["dra.example.com"].name == "fish"', DRIVER, {"name": ("string", "fish")}, None,
     True),
    ("version", 'device.attributes["dra.example.com"].name.isGreaterThan(semver("0.0.1"))', DRIVER,
     {"name": ("version", "1.0.0")}, None, True),
    ("version_v", 'device.attributes["dra.example.com"].name.isGreaterThan(semver("v0.0.1", true)) && '
     'isSemver("v1.0.0", true)', DRIVER, {"name": ("version", "1.0.0")}, None, True),
    ("quantity", 'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))', DRIVER, None,
     {"name": "1Mi"}, True),
    ("check-positive", '"name" in device.capacity["dra.example.com"] && '
     'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))', DRIVER, None, {"name": "1Mi"}, True),
    ("check-negative", '!("name" in device.capacity["dra.example.com"]) || '
     'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))', "", None, None, True),
    ("all", '''
device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"].bool &&
device.attributes["dra.example.com"].int > 0 &&
device.attributes["dra.example.com"].string == "fish" &&
device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1")) &&
device.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"]["bool"] &&
device.attributes["dra.example.com"]["int"] > 0 &&
device.attributes["dra.example.com"]["string"] == "fish" &&
device.attributes["dra.example.com"]["version"].isGreaterThan(semver("0.0.1"))
''', DRIVER, {"bool": ("bool", True), "int": ("int", 1), "string": ("string", "fish"),
              "version": ("version", "1.0.0")}, {"quantity": "1Mi"}, True),
    ("many", 'device.attributes["dra.example.com"].a && device.attributes["dra.example.com"].b && '
     'device.attributes["dra.example.com"].c', DRIVER, {"a": ("bool", True), "b": ("bool", True),
                                                        "c": ("bool", True)}, None, True),
    ("check_attribute_domains", 'device.attributes.exists_one(x, x == "dra.example.com")', DRIVER,
     {"services": ("string", "some_example_value")}, None, True),
    ("check_attribute_ids", 'device.attributes["dra.example.com"].exists_one(x, x == "services")', DRIVER,
     {"services": ("string", "some_example_value")}, None, True),
    ("split_attribute", 'device.attributes["dra.example.com"].services.split("example").size() >= 2', DRIVER,
     {"services": ("string", "some_example_value")}, None, True),
    ("regexp_attribute", 'device.attributes["dra.example.com"].services.matches("[^a]?sym")', DRIVER,
     {"services": ("string", "asymetric")}, None, True),
    ("check_capacity_domains", 'device.capacity.exists_one(x, x == "dra.example.com")', DRIVER, None,
     {"memory": "1Mi"}, True),
    ("check_capacity_ids", 'device.capacity["dra.example.com"].exists_one(x, x == "memory")', DRIVER, None,
     {"memory": "1Mi"}, True),
]


@pytest.mark.parametrize("case", UPSTREAM, ids=[c[0] for c in UPSTREAM])
def test_upstream_cel_case(case):
    _name, expression, driver, attributes, capacity, expect = case
    if isinstance(expect, str) and expect.startswith("compile: "):
        with pytest.raises(CelError) as err:
            compile_selector(expression)
        assert expect.removeprefix("compile: ") in str(err.value)
        return
    selector = compile_selector(expression)
    device = _device(attributes, capacity)
    if isinstance(expect, str):
        with pytest.raises(CelRuntimeError) as err:
            selector.matches(driver, device)
        assert expect.removeprefix("error: ") in str(err.value)
        return
    assert selector.matches(driver, device) is expect


EXPENSIVE = ("[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(y, [1, 2, 3, 4, 5, 6, 7, 8, "
             "9, 10].all(z, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z2, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z3, [1, 2, 3, "
             "4, 5, 6, 7, 8, 9, 10].all(z4, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z5, int('1'.find('[0-9]*')) < 100)))"
             "))))")


def test_runtime_cost_limit_stops_the_expensive_expression():
    """Upstream's "expensive" case (a 10^7-step comprehension) ends in cel-go's cost error. The limit is a
    parameter; 20,000 stands for the real 1,000,000 here so the test stays fast (it runs the same code)."""
    selector = compile_selector(EXPENSIVE)
    selector.verdicts.clear()
    with pytest.raises(CelRuntimeError) as err:
        selector.matches(DRIVER, _device(), limit=20_000)
    assert str(err.value) == COST_LIMIT_EXCEEDED == "operation cancelled: actual cost limit exceeded"


def test_cost_counts_steps_as_cel_go():
    """`device.driver == "dra.example.com"` costs 1 (device) + 1 (.driver) + ceil(15 × 0.1) = 2 for the string
    comparison = 4; a limit of 3 stops it, 4 lets it pass."""
    selector = compile_selector('device.driver == "dra.example.com"')
    selector.verdicts.clear()  # verdicts are cached per selector (the limit never changes in a run)
    with pytest.raises(CelRuntimeError, match="cost limit"):
        selector.matches(DRIVER, _device(), limit=3)
    selector.verdicts.clear()
    assert selector.matches(DRIVER, _device(), limit=4) is True


def test_logical_operators_absorb_errors_like_cel_go():
    """`false && error` is false and `true || error` true (the right side is not evaluated); `error && false`
    is false too (CEL's commutative logic); `error && true` is the error."""
    device = _device()
    assert compile_selector('false && device.attributes["x"].missing').matches(DRIVER, device) is False
    assert compile_selector('device.attributes["x"].missing || true').matches(DRIVER, device) is True
    assert compile_selector('device.attributes["x"].missing && false').matches(DRIVER, device) is False
    with pytest.raises(CelRuntimeError, match="no such key: missing"):
        compile_selector('device.attributes["x"].missing && true').matches(DRIVER, device)


@pytest.mark.parametrize("expression, expect", [
    ('quantity("1.5Gi").compareTo(quantity("1536Mi")) == 0', True),  # equal values, different text
    ('quantity("1.5Gi") == quantity("1536Mi")', True),
    ('quantity("500m").isInteger()', False),
    ('quantity("2k").asInteger() == 2000', True),
    ('quantity("1.5").asApproximateFloat() == 1.5', True),
    ('quantity("-3").sign() == -1 && quantity("0").sign() == 0', True),
    ('quantity("1Gi").add(quantity("1Gi")).isGreaterThan(quantity("2047Mi"))', True),
    ('quantity("1").sub(2).sign() == -1', True),
    ('isQuantity("1Gi") && !isQuantity("1Gx")', True),
    ('semver("1.2.3").major() == 1 && semver("1.2.3").minor() == 2 && semver("1.2.3").patch() == 3', True),
    ('semver("1.0.0-alpha").isLessThan(semver("1.0.0"))', True),  # a pre-release is below its release
    ('semver("1.0.0-alpha.1").isLessThan(semver("1.0.0-alpha.beta"))', True),  # numeric below alphanumeric
    ('semver("1.0.0-2").isLessThan(semver("1.0.0-10"))', True),  # numeric identifiers compare as numbers
    ('semver("1.0.0+build.1") == semver("1.0.0+build.2")', True),  # build metadata is ignored
    ('!isSemver("v1.0.0") && isSemver("v1.0.0", true) && !isSemver("01.0.0")', True),
    ('semver("v1.2", true).compareTo(semver("1.2.0")) == 0', True),
])
def test_kubernetes_libraries(expression, expect):
    assert compile_selector(expression).matches(DRIVER, _device()) is expect


@pytest.mark.parametrize("expression, error", [
    ('quantity("1.5").asInteger() == 1', "cannot convert value to integer"),
    ('quantity("1Gx").sign() == 1', "quantities must match the regular expression"),
    ('semver("1.0").major() == 1', "No Major.Minor.Patch elements found"),
    ('quantity("1") == semver("1.0.0")', "no such overload"),
])
def test_kubernetes_library_errors(expression, error):
    with pytest.raises(CelRuntimeError, match=error):
        compile_selector(expression).matches(DRIVER, _device())


def test_semver_parsing():
    """blang/semver's Parse refuses leading zeros and short versions; normalize (semverlib) repairs them."""
    assert parse_semver("1.2.3-rc.1+meta").pre == ("rc", 1)
    for bad in ("1.2", "01.2.3", "1.2.3-01", ""):
        with pytest.raises(ValueError):
            parse_semver(bad)
    assert (normalize_semver("v01.2").major, normalize_semver("v01.2").patch) == (1, 0)
    with pytest.raises(ValueError, match="short version cannot contain PreRelease/Build meta data"):
        normalize_semver("1.2-rc")


def test_unknown_names_are_compile_errors():
    """cel-go's checker refuses an undeclared variable or function; comprehension and bind variables are
    declared in their scope only."""
    for expression in ("noSuchVar", "foo(1) == 1", "[1].all(x, y > 0)", 'cel.bind(g, 1, g) == 1 && g == 1'):
        with pytest.raises(CelError, match="undeclared reference"):
            compile_selector(expression)
    compile_selector("[1].all(x, x > 0) && cel.bind(g, 1, g == 1)")


def test_verdicts_are_shared_by_devices_that_read_alike():
    """A selector reading one attribute evaluates once for devices that differ only elsewhere."""
    selector = compile_selector('device.attributes["dra.example.com"].model == "H100"')
    for uuid in range(5):
        device = _device({"model": ("string", "H100"), "uuid": ("string", f"gpu-{uuid}")})
        assert selector.matches(DRIVER, device) is True
    assert len(selector.verdicts) == 1
    assert selector.reads == (("attributes", "dra.example.com", "model"),)
