"""Re-evaluate the few nodes a bind changed, in plain Python scalars, for the resource plugins.

The simulation caches, per pod shape, every Filter verdict and Score of every node; after a bind only
that node's row is stale.  Calling the vectorised plugins on one row costs dozens of numpy calls, so
for NodeResourcesFit and NodeResourcesBalancedAllocation this module redoes the same arithmetic per
node with Python ints and floats: identical results (Go truncation, IEEE float64 in the same order),
checked against the plugins by the property tests.  Plugins whose verdict ignores requests (node
placement plugins) need no re-evaluation at all.  Anything else: no kernel, the caller uses the plugin.
`_rowkernels.c` runs the same kernels in C from a shape's `compiled_spec`; these stay the reference and
the fallback (no compiler, or amounts beyond the C code's exact int64 range).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from kubefit.k8s.resourcenames import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, is_scalar
from kubefit.scheduler.plugins.balanced import NodeResourcesBalancedAllocation
from kubefit.scheduler.plugins.base import CycleContext
from kubefit.scheduler.plugins.fit import NodeResourcesFit, checked_resources
from kubefit.scheduler.state import ClusterState

try:  # the same kernels in C (_rowkernels.c), built when the package is installed with a C compiler
    from kubefit.scheduler._rowkernels import evaluate as evaluate_compiled
except ImportError:  # pragma: no cover - a build without one: the Python kernels below do the work
    evaluate_compiled = None

# Filter / Score plugins whose outcome depends on the node's labels, taints, flags and status only.
STATIC_PLUGINS = frozenset({"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "ImageLocality",
                            "NodeDeclaredFeatures"})
SAFE = 1 << 52  # beyond this, int64 products may wrap in numpy: leave such rows to the plugins

RowFn = Callable[[list, list, list], int]  # (allocatable row, requested row, nonzero row) → value
# the kinds of kernel in a compiled spec (_rowkernels.c)
FIT_FILTER, LEAST, MOST, RATIO, BALANCED, BALANCED_WITH_WITHOUT = 1, 1, 2, 3, 4, 5
_STRATEGY_KINDS = {"LeastAllocated": LEAST, "MostAllocated": MOST}


def fit_filter_row(state: ClusterState, ctx: CycleContext, plugin: NodeResourcesFit) -> RowFn:
    """1 when NodeResourcesFit's Filter rejects the node, else 0."""
    requests = ctx.demand.requests
    pods = state.index[PODS]
    nothing = all(requests.get(n, 0) == 0 for n in (CPU, MEMORY, EPHEMERAL_STORAGE)) and not any(
        is_scalar(n) for n in requests)
    checks = [] if nothing else [(state.index[n], requests[n]) for n in checked_resources(requests, plugin.args)]

    def row(alloc: list, req: list, _nz: list) -> int:
        if req[pods] + 1 > alloc[pods]:
            return 1
        for col, want in checks:
            if want > alloc[col] - req[col]:
                return 1
        return 0
    row.monotone = True  # while binds only add to `req`, a refusal stays one
    row.params = [FIT_FILTER, pods, len(checks), *(v for check in checks for v in check)]
    return row


def _pair(state: ClusterState, name: str, pod_requests: dict[str, int], use_requested: bool) -> tuple | None:
    """`allocatable_requested` for one resource: (allocatable column, from requested?, used column, pod
    amount), or None when the resource is dropped whatever the node (unrequested scalar, unknown name)."""
    p = int(pod_requests.get(name, 0))
    if p == 0 and is_scalar(name):
        return None
    if name in (CPU, MEMORY):
        col = state.index[name]
        return (col, True, col, p) if use_requested else (col, False, 0 if name == CPU else 1, p)
    if name == EPHEMERAL_STORAGE or (is_scalar(name) and name in state.index):
        col = state.index[name]
        return col, True, col, p
    return None


def fit_score_row(state: ClusterState, ctx: CycleContext, plugin: NodeResourcesFit) -> RowFn | None:
    """NodeResourcesFit's score of one node (LeastAllocated, MostAllocated, RequestedToCapacityRatio)."""
    args = plugin.args
    pairs = []
    for r in args.resources:
        pair = _pair(state, r.name, ctx.demand.score_requests, False)
        if pair is not None:
            pairs.append((*pair, r.weight))
    if any(abs(w) > 1 << 20 or abs(p) > SAFE for *_, p, w in pairs):
        return None
    scorer = plugin.scorer
    one, positive_only, node_score = scorer.resource, scorer.positive_only, scorer.node_score

    def row(alloc: list, req: list, nz: list) -> int:
        num = den = 0
        for col, use_req, used, p, w in pairs:
            a = alloc[col]
            if a == 0:
                continue
            r = (req[used] if use_req else nz[used]) + p
            if not (-SAFE <= a <= SAFE and -SAFE <= r <= SAFE):
                raise OverflowError
            s = one(r, a)
            if positive_only and s <= 0:
                continue
            num += s * w
            den += w
        return node_score(num, den)
    kind = _STRATEGY_KINDS.get(scorer.strategy, RATIO)
    points = [v for point in scorer.points for v in point]
    row.params = [kind, len(pairs), *(int(v) for pair in pairs for v in pair),
                  *([len(scorer.points), *points] if kind == RATIO else [])]
    return row


def _balance(fracs: list[float]) -> int:
    """`balancedResourceScore` of the kept fractions: float64 in the order `balanced_scores` uses."""
    n = len(fracs)
    if n == 2:
        std = abs((fracs[0] - fracs[1]) / 2)
    elif n > 2:
        total = 0.0
        for f in fracs:
            total = total + f
        mean = total / n
        sq = 0.0
        for f in fracs:
            d = f - mean
            sq = sq + d * d
        std = math.sqrt(sq / n)
    else:
        std = 0.0
    return int((1 - std) * 100)


def balanced_score_row(state: ClusterState, ctx: CycleContext, plugin: NodeResourcesBalancedAllocation) -> RowFn:
    """`balancedResourceScorer` for one node (v1.36's with and without the pod when the plugin says so)."""
    # the resources that can count (a dropped one counts as an absent fraction: it changes no sum)
    live = [(col, used, p) for pair in (_pair(state, r.name, ctx.demand.requests, True)
                                        for r in plugin.args.resources) if pair is not None
            for col, _r, used, p in (pair,)]

    with_and_without = plugin.with_and_without

    def row(alloc: list, req: list, _nz: list) -> int:
        fracs, before = [], []  # the kept resources' fractions with and without the pod, in the resources' order
        for col, used, p in live:
            a = alloc[col]
            if a == 0:
                continue
            u = req[used]
            r = u + p
            if not (-SAFE <= a <= SAFE and -SAFE <= r <= SAFE and -SAFE <= u <= SAFE):
                raise OverflowError
            f, g = r / float(a), u / float(a)
            fracs.append(f if f < 1.0 else 1.0)
            before.append(g if g < 1.0 else 1.0)
        score = _balance(fracs)
        return 50 + (50 + score - _balance(before)) // 2 if with_and_without else score
    row.params = [BALANCED_WITH_WITHOUT if with_and_without else BALANCED, len(live),
                  *(v for item in live for v in item)]
    return row


def _device_backed(plugin, requests: dict[str, int]) -> bool:
    """The pod asks for an extended resource a DeviceClass backs (DRAExtendedResource): where no device plugin
    provides it, DRA does, which these kernels do not compute (the plugins do)."""
    backed = getattr(plugin, "backed", ())
    return bool(backed) and any(q and name in backed for name, q in requests.items())


def filter_kernel(state: ClusterState, ctx: CycleContext, name: str, plugin) -> RowFn | str | None:
    """A row function for a Filter plugin; "static" when binds never change its verdict; None: unknown."""
    if _device_backed(plugin, ctx.demand.requests):
        return None
    if type(plugin).filter is NodeResourcesFit.filter:
        return fit_filter_row(state, ctx, plugin)
    return "static" if name in STATIC_PLUGINS else None


def score_kernel(state: ClusterState, ctx: CycleContext, name: str, plugin) -> RowFn | str | None:
    """A row function for a Score plugin; "static" when binds never change its raw score; None: unknown."""
    if _device_backed(plugin, ctx.demand.requests):
        return None
    if type(plugin) is NodeResourcesFit:  # exactly: the legacy 0..10 variants subclass them
        return fit_score_row(state, ctx, plugin)
    if type(plugin) is NodeResourcesBalancedAllocation:
        return balanced_score_row(state, ctx, plugin)
    static_for = getattr(plugin, "static_score_for", None)  # a plugin that knows its scores for this pod fixed
    if static_for is not None and static_for(state, ctx):
        return "static"
    return "static" if name in STATIC_PLUGINS else None


def compiled_spec(static_filters: list[int], live_filters: list[tuple[int, RowFn]],
                  static_scorers: list[tuple[int, int]], live_scorers: list[tuple[int, RowFn, int]]) -> np.ndarray | None:
    """The shape's row kernels as the int64 spec `_rowkernels.evaluate` reads (its header says the layout);
    None when the C kernels are not built or a parameter is beyond int64 (the Python kernels then)."""
    if evaluate_compiled is None:
        return None
    spec = [len(static_filters), *static_filters, len(live_filters)]
    for p, fn in live_filters:
        spec += [p, *fn.params]
    spec.append(len(static_scorers))
    for s, w in static_scorers:
        spec += [s, w]
    spec.append(len(live_scorers))
    for s, fn, w in live_scorers:
        spec += [s, w, *fn.params]
    try:
        return np.asarray(spec, dtype=np.int64)
    except OverflowError:
        return None
