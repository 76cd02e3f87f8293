"""The HTML report of gangs (no browser): a simulation's pod groups and each one's decision, copies of a group,
the groups placed differently when gangs are turned on, a timeline's pod group column."""

from __future__ import annotations

import re

import kubefit
from gangs_support import GATES
from kubefit.report import render_html
from tests_support import ROOT

EXAMPLE = str(ROOT / "examples" / "gangs" / "cluster.yaml")
OPTIONS = {"kube_version": "1.36", "feature_gates": GATES, "warn": lambda _m: None}


def _text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def test_the_simulation_page_has_each_groups_decision():
    html = render_html(kubefit.simulate([EXAMPLE], tie_break="first", **OPTIONS))
    assert 'id="pod-groups"' in html and '<a href="#pod-groups">Pod groups (2)</a>' in html
    text = _text(html)
    assert ("ml/tune-0 gang, minCount 4 0 of 4 1 PodGroupScheduled=False (Unschedulable) gang ml/tune-0: 2 of "
            "minCount 4 fit: 3 nodes Insufficient nvidia.com/gpu") in text
    assert "ml/train-0 gang, minCount 8 8 of 8 1 PodGroupScheduled=True (Scheduled)" in text


def test_no_groups_no_section():
    html = render_html(kubefit.simulate([EXAMPLE], kube_version="1.36", warn=lambda _m: None))
    assert 'id="pod-groups"' not in html


def test_the_capacity_page_names_the_group():
    html = render_html(kubefit.capacity([EXAMPLE], "podgroup/tune-0", **OPTIONS))
    assert "How many more copies of pod group ml/tune-0 (4 pods) fit?" in _text(html)


def test_turning_gangs_on_lists_the_groups_placed_differently():
    runs = kubefit.compare_feature_gates([EXAMPLE], GATES, kube_version="1.36", tie_break="first",
                                         warn=lambda _m: None)
    from kubefit.scheduler.compare import version_comparison_to_dict

    text = _text(render_html(runs, data=version_comparison_to_dict(runs)))
    assert f"What does turning on {GATES} change?" in text
    assert "Pod groups placed differently (1)" in text
    assert "ml/tune-0 (minCount 4) 2 of 4 bound, pod by pod 0 of 4 bound, as a group" in text


def test_the_timeline_page_has_a_pod_group_column():
    text = _text(render_html(kubefit.timeline([EXAMPLE], **OPTIONS)))
    assert "pod pod group arrival (s) node" in text
    assert "tune-0 ml/tune-0 0 never" in text
