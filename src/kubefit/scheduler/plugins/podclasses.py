"""The state's change log as arrays: per change its node, its pod's class and its sign.

What PodTopologySpread and InterPodAffinity read of a bound pod is its namespace, its labels and its affinity
terms (upstream matches a selector against `pod.Labels` in `pod.Namespace`, and an existing pod's terms come
from its `PodInfo`: `countPodsMatchSelector`, `AffinityTerm.Matches`, `processExistingPod`). Pods equal in
those three are one *class*: every selector, term or weight gives all of them the same answer. The pods a
cycle brings (replicas of a few workloads) fall into a handful of classes, so a count that follows the change
log (`ClusterState.changes`: a bind adds a pod to a node, a removal takes it back) asks its question once per
class (`ClassWeights`) and replays any stretch of the log as whole-array operations over
(`LogArrays.segment`): nodes, class ids, signs. The integers are those of the change-by-change replay (integer
sums do not depend on their order).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from kubefit.api.core import Pod
from kubefit.k8s.labels import Selector
from kubefit.scheduler.plugins.affinityterms import KINDS, pod_terms
from kubefit.scheduler.state import ClusterState

try:  # `follow` in C (_countkernels.c), built when the package is installed with a C compiler
    from kubefit.scheduler._countkernels import scatter as _scatter
except ImportError:  # pragma: no cover - the same arithmetic below with whole-array operations
    _scatter = None


def required_label(selector: Selector) -> tuple[str, str] | None:
    """A (key, value) label every pod the selector matches carries (an `In` with one value), if any."""
    if selector.nothing:
        return None
    return next(((r.key, next(iter(r.values))) for r in selector.requirements
                 if r.operator == "In" and len(r.values) == 1), None)


@dataclass
class PodClasses:
    """The classes of one state's bound and removed pods, numbered in first-seen order, with one pod each."""

    index: dict = field(default_factory=dict)  # (namespace, labels in the pod's order, affinity terms) → class
    pods: list = field(default_factory=list)  # per class: its first pod (what a weight is asked about)
    by_label: dict = field(default_factory=dict)  # (key, value) → the classes whose pods carry that label
    known: dict = field(default_factory=dict)  # id of a pod of the log → its class (the log holds the pod alive)
    # `required_label` of a term some class's pods carry (None: its selector requires none) → those classes
    by_term_label: dict = field(default_factory=dict)

    def of(self, pod: Pod) -> int:
        """The pod's class (a pod bound, removed and bound again by a trial's rollback is classified once)."""
        c = self.known.get(id(pod))
        if c is not None:
            return c
        key = (pod.namespace, tuple(pod.labels.items()), pod_terms(pod))
        c = self.index.get(key)
        if c is None:
            c = self.index[key] = len(self.pods)
            self.pods.append(pod)
            for pair in pod.labels.items():
                self.by_label.setdefault(pair, []).append(c)
            self._index_terms(c, key[2])
        self.known[id(pod)] = c
        return c

    def _index_terms(self, c: int, terms) -> None:
        """File class c under the required label of each of its pods' terms (once per label)."""
        if terms.empty:
            return
        for kind in KINDS:
            for t in getattr(terms, kind):
                carrying = self.by_term_label.setdefault(required_label(t.selector), [])
                if not carrying or carrying[-1] != c:
                    carrying.append(c)

    def could_match(self, start: int, end: int, labels: dict[str, str], selectors: Sequence[Selector]) -> Iterable[int]:
        """The classes in [start, end), ascending, that may relate to a pod labelled `labels`: those carrying a term
        whose selector may match such a pod (it requires no label, or one of `labels`), and those whose pods may
        match one of `selectors` (they carry its `required_label`). Every other class has neither: a term matches a
        pod only when its selector matches the pod's labels (`AffinityTerm.Matches`). A superset, never fewer."""
        lists = [self.by_term_label.get(None, ()), *(self.by_term_label.get(pair, ()) for pair in labels.items())]
        for selector in selectors:
            need = required_label(selector)
            if need is None and not selector.nothing:
                return range(start, end)  # (an `Exists`, `NotIn`, several values: any class may match)
            lists.append(self.by_label.get(need, ()))
        out: set[int] = set()
        for classes in lists:
            if classes:
                out.update(classes[bisect_left(classes, start):bisect_left(classes, end)])
        return sorted(out)


@dataclass
class LogArrays:
    """`ClusterState.changes` as arrays over the positions [lo, hi) classified so far (indices are positions in
    the log): node (int64), class (int64), sign (int64: +1 bound, -1 removed)."""

    changes: list  # the log these follow (a copy of the state has its own)
    classes: PodClasses
    node: np.ndarray
    klass: np.ndarray
    sign: np.ndarray
    lo: int = 0
    hi: int = 0

    def segment(self, start: int, end: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(nodes, classes, signs) of the changes at positions [start, end), classifying what is new."""
        self.classify(start, end)
        return self.node[start:end], self.klass[start:end], self.sign[start:end]

    def classify(self, start: int, end: int) -> None:
        """Classify the changes at positions [start, end) not classified yet."""
        if (self.lo <= start and end <= self.hi) or start >= end:  # (usually a stretch some follower asked for)
            return
        if self.lo == self.hi:  # nothing classified yet: start where asked (earlier binds may never be read)
            self.lo = self.hi = start
        if end > len(self.node):
            self._grow(end)
        if start < self.lo:
            self._classify(start, self.lo)
            self.lo = start
        if end > self.hi:
            self._classify(self.hi, end)
            self.hi = end

    def _grow(self, end: int) -> None:
        size = max(end, 2 * len(self.node), 1024)
        for name in ("node", "klass", "sign"):
            old = getattr(self, name)
            new = np.zeros(size, dtype=np.int64)
            new[:len(old)] = old
            setattr(self, name, new)

    def _classify(self, start: int, end: int) -> None:
        of = self.classes.of
        if end - start <= 4:  # (a cycle's bind or two: scalar stores beat three list conversions)
            node, klass, sign = self.node, self.klass, self.sign
            for i in range(start, end):
                n, pod, d = self.changes[i]
                node[i], klass[i], sign[i] = n, of(pod), d
            return
        part = self.changes[start:end]
        self.node[start:end] = [node for node, _pod, _sign in part]
        self.klass[start:end] = [of(pod) for _node, pod, _sign in part]
        self.sign[start:end] = [sign for _node, _pod, sign in part]


def log_arrays(state: ClusterState) -> LogArrays:
    """The state's `LogArrays` (made on first use; a state with another log, as a copy has, gets its own)."""
    log = state.__dict__.get("_log_arrays")
    if log is None or log.changes is not state.changes:
        empty = np.zeros(0, dtype=np.int64)
        log = state.__dict__["_log_arrays"] = LogArrays(state.changes, PodClasses(), empty, empty, empty)
    return log


def pod_classes(state: ClusterState) -> PodClasses:
    """The registry the state's `log_arrays` number classes in."""
    return log_arrays(state).classes


class ClassWeights:
    """A weight that reads only a pod's namespace, labels and affinity terms, asked once per class and kept as an
    int64 table over the classes (`table`). Calling it asks the weight of one pod directly. `needs`: a (key,
    value) label without which the weight is 0, so only the classes carrying it are asked."""

    __slots__ = ("weight", "needs", "_classes", "_table", "_done", "_known", "last")

    def __init__(self, weight: Callable[[Pod], int], needs: tuple[str, str] | None = None) -> None:
        self.weight, self.needs = weight, needs
        self._classes: PodClasses | None = None
        self._table = np.zeros(0, dtype=np.int64)
        self._done = 0  # classes asked (needs None), or entries of `by_label[needs]` asked
        self._known = -1  # how many classes `_classes` had when `table` last brought `_table` up to date
        self.last: tuple | None = None  # `weighted_segment`'s last (log, start, end, nodes, amounts)

    def __call__(self, pod: Pod) -> int:
        return self.weight(pod)

    def table(self, classes: PodClasses) -> np.ndarray:
        """int64 [classes]: the weight of every class of `classes` so far."""
        if self._classes is classes and self._known == len(classes.pods):  # no class since: as it was (a cycle's
            return self._table  # followers ask once or twice each, between binds of known classes mostly)
        if self._classes is not classes:
            self._classes, self._table, self._done = classes, np.zeros(0, dtype=np.int64), 0
        n = len(classes.pods)
        if len(self._table) < n:
            table = np.zeros(max(n, 2 * len(self._table), 16), dtype=np.int64)
            table[:len(self._table)] = self._table
            self._table = table
        if self.needs is None:
            if self._done < n:
                pods, weight = classes.pods, self.weight
                self._table[self._done:n] = [weight(pods[c]) for c in range(self._done, n)]
                self._done = n
        else:
            carrying = classes.by_label.get(self.needs, ())
            if self._done < len(carrying):
                pods, weight = classes.pods, self.weight
                for c in carrying[self._done:]:
                    self._table[c] = weight(pods[c])
                self._done = len(carrying)
        self._known = n
        return self._table


def weighted_segment(state: ClusterState, weights: ClassWeights, start: int) -> tuple[np.ndarray, np.ndarray]:
    """The changes since position `start` with a non-zero weight: (nodes, sign · weight), in log order. The
    followers of one selector in one cycle ask for the same stretch: the last answer is kept on `weights`."""
    log, end = log_arrays(state), len(state.changes)
    last = weights.last
    if last is not None and last[0] is log and last[1] == start and last[2] == end:
        return last[3], last[4]
    nodes, klass, sign = log.segment(start, end)
    w = weights.table(log.classes)[klass]
    hit = w.nonzero()[0]  # (`nonzero`, not the slower `np.flatnonzero`)
    if len(hit) != len(nodes):
        nodes, w, sign = nodes[hit], w[hit], sign[hit]
    out = (nodes, w * sign)
    weights.last = (log, start, end, *out)
    return out


def follow(state: ClusterState, weights: ClassWeights, start: int, target: np.ndarray, *,
           index: np.ndarray | None = None, mask: np.ndarray | None = None, mult: int = 1,
           offset: np.ndarray | None = None) -> int | None:
    """Add the changes since position `start` to `target` by pod class: each change whose class weighs w != 0 and
    whose node passes `mask` adds sign · w · mult to `target[index[node]]` (`index` None: the node itself), in
    int64 arithmetic stored in the target's dtype (wrapping as numpy's sums do). Returns the largest
    `target[j] − offset[node]` over the entries it changed, as they are after the stretch; None when it changed
    none. In C when built (`_countkernels.scatter`), else with whole-array operations: the same integers."""
    end = len(state.changes)
    if start >= end:
        return None
    log = log_arrays(state)
    log.classify(start, end)  # (a cycle's first follower classifies its bind, the others find it done)
    table = weights.table(log.classes)
    if _scatter is not None:
        try:  # (it reads a C-contiguous int32 or int64 target, refusing any other before it writes a thing)
            return _scatter(log.node, log.klass, log.sign, start, end, table, target, index, mask, mult, offset)
        except (BufferError, TypeError, ValueError):
            pass
    nodes, amounts = weighted_segment(state, weights, start)
    if mask is not None:
        keep = mask[nodes]
        nodes, amounts = nodes[keep], amounts[keep]
    if not len(nodes):
        return None
    j = nodes if index is None else index[nodes]
    np.add.at(target, j, (amounts * mult).astype(target.dtype))
    now = target[j].astype(np.int64) - (0 if offset is None else offset[nodes])
    return int(now.max())


class ClassMemo:
    """A value per pod class (what `compute` gives the class's first pod), computed when first needed, and
    whether each is non-empty: a stretch of the log whose classes all have empty values changes nothing.
    A new pod shape's memo starts empty while the log may hold hundreds of classes: `could` names those whose
    value may be non-empty (`PodClasses.could_match`), the others get `empty` without asking `compute`."""

    __slots__ = ("_classes", "values", "nonempty")

    def __init__(self) -> None:
        self._classes: PodClasses | None = None
        self.values: list = []
        self.nonempty = np.zeros(0, dtype=bool)

    def update(self, classes: PodClasses, compute: Callable[[Pod], object],
               nonempty: Callable[[object], bool] = bool,
               could: Callable[[int, int], Iterable[int]] | None = None, empty: object = None) -> ClassMemo:
        """Every class of `classes` so far has its value (`compute` is asked about the new ones, or only about those
        `could(start, end)` names, the others being `empty`; `nonempty` says whether a value changes anything)."""
        if self._classes is not classes:
            self._classes, self.values, self.nonempty = classes, [], np.zeros(0, dtype=bool)
        start, n = len(self.values), len(classes.pods)
        if start < n:
            pods = classes.pods
            if could is None:
                new = [compute(pods[c]) for c in range(start, n)]
                flags = [nonempty(v) for v in new]
            else:
                new, flags = [empty] * (n - start), [False] * (n - start)
                for c in could(start, n):
                    value = new[c - start] = compute(pods[c])
                    flags[c - start] = nonempty(value)
            self.values += new
            self.nonempty = np.concatenate([self.nonempty, np.array(flags, dtype=bool)])
        return self
