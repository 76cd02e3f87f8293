"""Every golden kube-scheduler case through the configuration loader: refusals and effective args."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from golden_scenario import case_config, case_plugin_weights
from kubefit.errors import ConfigError
from kubefit.manifests.documents import Document
from kubefit.scheduler.config import (
    DEFAULT_MULTIPOINT,
    PLUGIN_EXTENSIONS,
    ScorePlugin,
    args_to_v1,
    decode_plugin_args,
    load_configuration,
)

GOLDEN = Path(__file__).resolve().parents[3] / "shared" / "golden" / "kube-scheduler"
FILES = ("cases.jsonl", "docs-example.jsonl", "placement-cases.jsonl")


def _read(name: str) -> list[dict]:
    with open(GOLDEN / name, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


CASES = [c for f in FILES for c in _read(f)]
ARGS_PLUGINS = ("NodeResourcesFit", "NodeResourcesBalancedAllocation", "NodeAffinity")
CONFIG_VALIDATED = ("NodeResourcesBalancedAllocation", "NodeAffinity")  # Fit args only at construction


def _refused(case) -> bool:
    detail = case["expect"]["validationDetail"]
    return bool(case["expect"].get("validation") or detail.get("decodeError") or detail.get("config")
                or detail.get("frameworkError"))


def _document(case) -> Document:
    return Document(case_config(case), f"golden:{case['id']}", 1)


def _given_args(case, name):
    for entry in case_config(case)["profiles"][0].get("pluginConfig", []):
        if entry["name"] == name:
            return entry["args"]
    return None


def _framework_parts(error: str) -> list[str]:
    return re.split(r'; (?=initializing plugin ")', error)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_configuration_matches_kube_scheduler(case):
    expect = case["expect"]
    detail = expect["validationDetail"]
    if not _refused(case):
        config = load_configuration(_document(case))
        profile = config.profiles[0]
        weights = case_plugin_weights(case)
        order = [n for n, _ in DEFAULT_MULTIPOINT if n in weights]
        assert profile.filter_plugins == tuple(n for n in order if "filter" in PLUGIN_EXTENSIONS[n])
        assert profile.score_plugins == tuple(ScorePlugin(n, weights[n] or 1) for n in order
                                              if "score" in PLUGIN_EXTENSIONS[n])
        effective = {pc["name"]: pc["args"] for pc in config.effective["profiles"][0]["pluginConfig"]
                     if pc["name"] in ARGS_PLUGINS}
        assert effective == expect["effectiveArgs"]
        for name, args in profile.plugin_args.items():
            if name in ARGS_PLUGINS:
                assert args_to_v1(args) == expect["effectiveArgs"][name]
        assert profile.not_simulated == ()
        return
    with pytest.raises(ConfigError) as info:
        load_configuration(_document(case))
    messages = info.value.errors
    for message in expect.get("validation") or []:
        assert any(message in m for m in messages), (message, messages)
    if detail.get("decodeError"):
        assert messages == [detail["decodeError"]]
        return
    for message in detail.get("config") or []:
        assert message in messages
    for part in _framework_parts(detail.get("frameworkError") or ""):
        plugin = re.match(r'initializing plugin "(\w+)"', part)
        if detail.get("config") and plugin and plugin.group(1) in CONFIG_VALIDATED:
            continue  # kube-scheduler stops at config validation, which reported these args already
        assert any(m.endswith(part) or part in m for m in messages), (part, messages)


ARGS_CASES = [c for c in CASES if c["expect"].get("effectiveArgs")]


@pytest.mark.parametrize("case", ARGS_CASES, ids=[c["id"] for c in ARGS_CASES])
def test_effective_args_match_kube_scheduler(case):
    """Defaulting alone (also for refused configurations): `args_to_v1(defaulted args)` equals Go's."""
    for name, expected in case["expect"]["effectiveArgs"].items():
        assert args_to_v1(decode_plugin_args(name, _given_args(case, name))) == expected
