"""The public API: one documented function per verb, returning what the command renders."""

from __future__ import annotations

import json
import pydoc

import pytest

import kubefit
from kubefit.cli import main

VERBS = ("score", "simulate", "compare", "capacity", "summary", "estimate", "schedule", "divide",
         "models_defaults", "models_validate", "models_classify")


def test_help_lists_every_verb_with_a_runnable_example():
    text = pydoc.render_doc(kubefit, renderer=pydoc.plaintext)
    for name in VERBS:
        assert name in kubefit.__all__
        assert f"\n    {name}(" in text, name
        assert ">>> " in (getattr(kubefit, name).__doc__ or ""), name  # run by --doctest-modules


def test_every_exported_name_exists():
    assert sorted(set(kubefit.__all__)) == sorted(kubefit.__all__)
    for name in kubefit.__all__:
        assert getattr(kubefit, name) is not None


def cli_json(capsys, *argv: str) -> dict:
    capsys.readouterr()
    assert main([*argv, "-o", "json"]) == 0
    return json.loads(capsys.readouterr().out)


WORKLOAD = "examples/workload/cluster.yaml"


def same_as_cli(api_data: dict, told: list[str], cli: dict) -> bool:
    """The command's JSON is the API's result plus `warnings`: what the API told its `warn`."""
    warnings = cli.pop("warnings", [])
    return set(warnings) <= set(told) and {k: v for k, v in api_data.items() if k != "warnings"} == cli


def test_the_api_returns_what_the_command_prints(capsys):
    told: list[str] = []
    assert same_as_cli(kubefit.capacity([WORKLOAD], "report-0", warn=told.append).to_dict(), told,
                       cli_json(capsys, "capacity", "-f", WORKLOAD, "--pod", "report-0"))
    assert same_as_cli(kubefit.simulate([WORKLOAD], tie_break="first", warn=told.append).to_dict(), told,
                       cli_json(capsys, "simulate", "-f", WORKLOAD, "--tie-break", "first"))
    docs = ["examples/docs-bin-packing/cluster.yaml", "examples/docs-bin-packing/most-allocated.yaml"]
    assert same_as_cli(kubefit.score(docs, warn=told.append), told, cli_json(capsys, "score", "-f", docs[0],
                                                                             "-f", docs[1]))
    fleet = "examples/karmada/estimate-general-500m.yaml"
    assert same_as_cli(kubefit.estimate([fleet], warn=told.append).to_dict(), told,
                       cli_json(capsys, "estimate", "-f", fleet))


def test_warnings_reach_the_callback_or_pythons_warnings(tmp_path):
    extra = tmp_path / "cluster.yaml"  # a Karmada Cluster: simulate and capacity do not read it
    extra.write_text("apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: member1}\n")
    told: list[str] = []
    kubefit.simulate([WORKLOAD, extra], warn=told.append)
    assert any("does not read" in t and "Cluster/member1" in t for t in told)
    with pytest.warns(kubefit.KubefitWarning, match="Cluster/member1"):
        kubefit.capacity([WORKLOAD, extra])
