"""DynamicResourcesArgs as each version's DynamicResources `New` validates them (`ValidateDynamicResourcesArgs`),
and the Go durations they hold (`time.ParseDuration`, `Duration.String`: cases from Go's `time` tests,
`parseDurationTests`, `parseDurationErrorTests` and `durationTests`, the expected values written out by hand)."""

from __future__ import annotations

import pytest
import yaml

from kubefit.cli import main
from kubefit.k8s.duration import DurationError, format_duration, parse_duration

S, MS, US, MIN, H = 10**9, 10**6, 10**3, 60 * 10**9, 3600 * 10**9

PARSED = [
    ("0", 0), ("5s", 5 * S), ("-5s", -5 * S), ("+5s", 5 * S), ("-0", 0), ("+0", 0), ("5.6s", 5 * S + 600 * MS),
    ("5.s", 5 * S), (".5s", 500 * MS), ("1.004s", S + 4 * MS), ("100.00100s", 100 * S + MS), ("10ns", 10),
    ("11us", 11 * US), ("12\u00b5s", 12 * US), ("12\u03bcs", 12 * US), ("15m", 15 * MIN), ("16h", 16 * H),
    ("10.5s4m", 4 * MIN + 10 * S + 500 * MS), ("-2m3.4s", -(2 * MIN + 3 * S + 400 * MS)),
    ("1h2m3s4ms5us6ns", H + 2 * MIN + 3 * S + 4 * MS + 5 * US + 6), ("52763797000ns", 52 * S + 763797 * US),
    ("0.3333333333333333333h", 20 * MIN), ("9007199254740993ns", (1 << 53) + 1),
    ("9223372036854775807ns", (1 << 63) - 1), ("9223372036854775.807us", (1 << 63) - 1),
    ("-9223372036854775808ns", -(1 << 63)), ("0.100000000000000000000h", 6 * MIN),
    ("0.830103483285477580700h", 49 * MIN + 48 * S + 372539827),
]
INVALID = ["", "3", "-", "s", ".", "-.", ".s", "+.s", "1d", "9223372036854775808ns", "9223372036854775.808us",
           "9223372036854ms775us808ns", "-9223372036854775809ns"]


@pytest.mark.parametrize(("text", "nanos"), PARSED)
def test_parse_duration(text, nanos):
    assert parse_duration(text) == nanos


@pytest.mark.parametrize("text", INVALID)
def test_parse_duration_refuses(text):
    with pytest.raises(DurationError):
        parse_duration(text)


def test_parse_duration_errors_in_go_words():
    for text, message in (("3", 'time: missing unit in duration "3"'), ("1d", 'time: unknown unit "d" in duration "1d"'),
                          ("abc", 'time: invalid duration "abc"'), ("1\u00e9", 'time: unknown unit "\\xc3\\xa9" in duration "1\\xc3\\xa9"')):
        with pytest.raises(DurationError) as caught:
            parse_duration(text)
        assert str(caught.value) == message


@pytest.mark.parametrize(("nanos", "text"), [
    (0, "0s"), (1, "1ns"), (1100, "1.1\u00b5s"), (2200 * US, "2.2ms"), (3300 * MS, "3.3s"), (4 * MIN + 5 * S, "4m5s"),
    (4 * MIN + 5001 * MS, "4m5.001s"), (5 * H + 6 * MIN + 7001 * MS, "5h6m7.001s"), (8 * MIN + 1, "8m0.000000001s"),
    ((1 << 63) - 1, "2562047h47m16.854775807s"), (-(1 << 63), "-2562047h47m16.854775808s"), (-5 * S, "-5s")])
def test_format_duration(nanos, text):
    assert format_duration(nanos) == text


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out = capsys.readouterr()
    return rc, out.out, out.err


def _config(tmp_path, args: dict) -> str:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [{"name": "DynamicResources", "args": args}]}]}))
    return str(path)


PREFIX = ('initializing profiles: creating profile for scheduler name default-scheduler: initializing plugin '
          '"DynamicResources": ')


@pytest.mark.parametrize(("version", "args", "expected"), [
    # DRASchedulerFilterTimeout is beta and on from v1.34: a negative timeout is refused, zero is valid
    ("1.34", {"filterTimeout": "-5000ms"}, 'filterTimeout: Invalid value: "-5s": must be zero or positive'),
    ("1.37", {"filterTimeout": "0s"}, None),
    # binding conditions: alpha (off) in v1.35, beta (on) in v1.36: forbidden, then at least one second
    ("1.35", {"bindingTimeout": "5m"}, "bindingTimeout: Forbidden: DRADeviceBindingConditions or "
                                       "DRAResourceClaimDeviceStatus feature gate is disabled"),
    ("1.36", {"bindingTimeout": "500ms"}, 'bindingTimeout: Invalid value: "500ms": must be at least 1 second'),
    ("1.36", {"bindingTimeout": "1s"}, None),
])
def test_validate_dynamic_resources_args(tmp_path, capsys, version, args, expected):
    rc, out, _err = run_cli(capsys, "config", "validate", "-f", _config(tmp_path, args), "--kube-version", version)
    if expected is None:
        assert rc == 0, out
    else:
        assert rc == 2 and PREFIX + expected in out


def test_the_filter_timeout_gate_off_forbids_the_field(tmp_path, capsys):
    rc, out, _ = run_cli(capsys, "config", "validate", "-f", _config(tmp_path, {"filterTimeout": "10s"}),
                         "--kube-version", "1.36", "--feature-gates", "DRASchedulerFilterTimeout=false")
    assert rc == 2 and PREFIX + "filterTimeout: Forbidden: DRASchedulingFilterTimeout feature gate is disabled" in out


def test_a_bad_duration_is_refused_in_go_words(tmp_path, capsys):
    path = _config(tmp_path, {"filterTimeout": "10 s"})
    rc, _, err = run_cli(capsys, "config", "validate", "-f", path)
    assert rc == 2 and err.strip() == (f"error: {path}: DynamicResourcesArgs: profiles[0].pluginConfig[0].args."
                                       f'filterTimeout: time: unknown unit " s" in duration "10 s"')
