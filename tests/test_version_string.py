"""kubefit's version string is one: the constant the results report equals pyproject.toml's and the installed
distribution's."""

from __future__ import annotations

import tomllib
from importlib.metadata import version

from kubefit.told import KUBEFIT_VERSION as VERSION
from kubefit.told import inputs
from tests_support import ROOT


def test_the_version_constant_is_pyprojects():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert VERSION == project["version"] == version("kubefit")


def test_results_report_it():
    assert inputs(["a.yaml"], "kube-scheduler", {})["kubefitVersion"] == VERSION
