"""The static scorers' normalized sum over any feasible set (`staticnorm.StaticNormalized`) is Σ weight ·
NormalizeScore of the raw scores of the feasible nodes, as kube-scheduler computes it over the nodes that passed
the filters: for TaintToleration and NodeAffinity (`DefaultNormalizeScore`, reversed or not) with raw scores that
differ between nodes or not, ImageLocality (no NormalizeScore), in any mix, over feasible sets drawn one after
the other (the per-set memo reused)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubefit.api.core import Pod
from kubefit.scheduler import staticnorm
from kubefit.scheduler.plugins.base import CycleContext, normalize_scores
from kubefit.scheduler.plugins.imagelocality import ImageLocality
from kubefit.scheduler.plugins.nodeaffinity import NodeAffinity
from kubefit.scheduler.plugins.tainttoleration import TaintToleration
from kubefit.scheduler.staticnorm import _occurring_mask, static_normalized

PLUGINS = {"taints": TaintToleration, "affinity": NodeAffinity, "images": ImageLocality}
RAW = {"taints": st.integers(0, 3), "affinity": st.sampled_from([0, 5, 10, 40, 100]),
       "images": st.integers(0, 100)}


def _expected(scorers, raw: np.ndarray, feasible: np.ndarray, ctx) -> np.ndarray | None:
    """Σ weight · NormalizeScore(raw[feasible]) plugin by plugin; None when a normalized score leaves [0, 100]."""
    total = np.zeros(len(feasible), dtype=np.int64)
    for s, (_name, plugin, w) in enumerate(scorers):
        norm = normalize_scores(plugin, raw[s, feasible], ctx)
        if norm.min() < 0 or norm.max() > 100:
            return None
        total += w * norm
    return total


@settings(max_examples=300, deadline=None)
@given(st.data(), st.booleans())
def test_static_normalized_equals_normalizing_each_feasible_set(data, compiled):
    """With the values occurring found in C (`_countkernels.occurring`) or by bincount alike."""
    old = staticnorm._occurring_c
    staticnorm._occurring_c = old if compiled else None
    try:
        _check_static_normalized(data)
    finally:
        staticnorm._occurring_c = old


def _check_static_normalized(data) -> None:
    n = data.draw(st.integers(1, 9))
    kinds = data.draw(st.lists(st.sampled_from(sorted(PLUGINS)), min_size=1, max_size=3))
    scorers, rows = [], []
    for kind in kinds:
        scorers.append((kind, PLUGINS[kind](), data.draw(st.integers(1, 5))))
        if data.draw(st.booleans()):  # the same raw score on every node
            rows.append([data.draw(RAW[kind])] * n)
        else:
            rows.append(data.draw(st.lists(RAW[kind], min_size=n, max_size=n)))
    if data.draw(st.integers(0, 9)) == 0:  # a score out of range somewhere (the framework's error)
        rows[0][data.draw(st.integers(0, n - 1))] = data.draw(st.sampled_from([-1, 101]))
    raw = np.asarray(rows, dtype=np.int64)
    ctx = CycleContext(Pod("p"), None, np.zeros(0, dtype=np.int64))
    fixed = static_normalized(scorers, raw, list(range(len(scorers))), ctx)
    for _ in range(4):
        feasible = np.asarray(sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1))), dtype=np.int64)
        want = _expected(scorers, raw, feasible, ctx)
        if fixed is None:  # then the engine normalizes each feasible set as it comes
            assert (raw < 0).any() or (raw > 100).any()
            continue
        got = fixed.total(feasible)
        if want is None:
            assert got is None
        else:
            assert got is not None
            assert np.broadcast_to(got, len(feasible)).tolist() == want.tolist()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 70), min_size=1, max_size=12), st.data())
def test_occurring_mask_is_the_bincount_of_the_feasible_codes(codes, data):
    """`_countkernels.occurring`: bit v set when a node of idx has value v, as bincount says; None beyond 63."""
    if staticnorm._occurring_c is None:  # pragma: no cover - not built
        return
    codes_a = np.asarray(codes, dtype=np.int64)
    idx = np.asarray(sorted(data.draw(st.sets(st.integers(0, len(codes) - 1)))), dtype=np.int64)
    got = _occurring_mask(codes_a, idx)
    if len(idx) and codes_a[idx].max() > 63:
        assert got is None
        return
    assert got == sum(1 << v for v in np.flatnonzero(np.bincount(codes_a[idx], minlength=1)).tolist())
