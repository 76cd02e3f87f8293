"""Drainability: whether a node's pods let it go, as cluster-autoscaler v1.34 and Karpenter judge it.

A node can be removed only when neither would refuse it; each refusal names its rule. One function per
upstream rule, in cluster-autoscaler's order (`simulator/drainability/rules/rules.go` `Default`, flags at their
defaults), Karpenter's pod annotation checked first (`pkg/controllers/state/statenode.go`
`ValidatePodsDisruptable`, Karpenter v1.7):

- `do_not_disrupt` (Karpenter `podutils.IsDisruptable`): an active pod annotated `karpenter.sh/do-not-disrupt:
  "true"` blocks its node, whatever its kind (Karpenter lets DaemonSet and mirror pods block this way too);
- `mirror` (`rules/mirror`): a static pod's mirror stays, blocks nothing (it goes with its node);
- `daemonset` (`rules/daemonset`): a DaemonSet's pod stays (not recreated elsewhere), blocks nothing;
- `safe_to_evict` (`rules/safetoevict`): `cluster-autoscaler.kubernetes.io/safe-to-evict: "true"` lets the pod
  go whatever the rules after it say (controller, kube-system, local storage; `drain.HasSafeToEvictAnnotation`);
- `terminal` (`rules/terminal`): a Succeeded/Failed pod holds nothing and moves nowhere (the state has none);
- `replicated` (`rules/replicated`, `--skip-nodes-with-custom-controller-pods=true`): a pod without a controller
  blocks (`NotReplicated`; with `force` it is deleted with its node, as `kubectl drain --force` would), and so
  does one whose controller is not a ReplicationController, Job, ReplicaSet or StatefulSet;
- `system` (`rules/system`, `--skip-nodes-with-system-pods=true`): a kube-system pod no PodDisruptionBudget
  matches blocks (`UnmovableKubeSystemPod`; the autoscaler lets it go once older than
  `--blocking-system-pod-distruption-timeout`, 1 h, which a snapshot without a clock cannot judge);
- `not_safe_to_evict` (`rules/notsafetoevict`): `safe-to-evict: "false"` blocks;
- `local_storage` (`rules/localstorage`, `drain.HasBlockingLocalStorage`): a hostPath volume or an emptyDir not
  backed by memory blocks, unless named in `cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes`;
- PodDisruptionBudgets (`rules/pdb`, `core/scaledown/pdb/basic.go`; Karpenter `pdb.Limits.CanEvictPods`),
  judged per node over the pods it would evict (`pdb_refusal`): a budget whose `status.disruptionsAllowed` (as
  written, or as the disruption controller computes it for today's cluster when the budget has no status:
  `kubefit.manifests.disruption`) is below the number of its pods leaving blocks (the autoscaler blocks below 1 and marks the node risky below
  that number), and a pod two budgets select blocks (the eviction API refuses it). Each node is judged against
  the budgets as they are, as Karpenter checks each candidate: a budget paces a drain (evictions wait for the
  replacements to be ready) rather than capping how many nodes go in the end; cluster-autoscaler spends them
  within one planning loop (`RemainingPdbTracker.RemovePods`), so it may take several loops to get there.

A node annotated `cluster-autoscaler.kubernetes.io/scale-down-disabled: "true"` (autoscaler
`eligibility.HasNoScaleDownAnnotation`) or `karpenter.sh/do-not-disrupt: "true"` (Karpenter
`StateNode.ValidateNodeDisruptable`) is no candidate (`node_refusal`). Not modelled: the autoscaler's
long-terminating pods (a snapshot has no clock) and its check that the controller object still exists
(`rules/replicacount`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubefit.api.core import Node, Pod
from kubefit.api.storage import PodDisruptionBudget
from kubefit.k8s.labels import NOTHING, Selector, SelectorError, parse_selector
from kubefit.manifests.load import TERMINAL_PHASES
from kubefit.scheduler.nodeactions import controller_of, daemon_pod, mirror_pod

SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"
SAFE_TO_EVICT_LOCAL_VOLUMES = "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes"
SCALE_DOWN_DISABLED = "cluster-autoscaler.kubernetes.io/scale-down-disabled"
DAEMONSET_POD = "cluster-autoscaler.kubernetes.io/daemonset-pod"  # `pod_util.DaemonSetPodAnnotationKey`
DO_NOT_DISRUPT = "karpenter.sh/do-not-disrupt"
KUBE_SYSTEM = "kube-system"
REPLICATED_KINDS = ("ReplicationController", "Job", "ReplicaSet", "StatefulSet")  # `replicated.replicatedKind`

STAYS, MOVES, LOST, BLOCKS = "stays", "moves", "lost", "blocks"  # what draining the node does with a pod


@dataclass(frozen=True)
class DrainOptions:
    """`force`: delete pods that declare no controller (`kubectl drain --force`) instead of blocking;
    `skip_kube_system_check`: kube-system pods without a PodDisruptionBudget do not block."""

    force: bool = False
    skip_kube_system_check: bool = False


@dataclass(frozen=True)
class Verdict:
    """What draining does with one pod (STAYS, MOVES, LOST or BLOCKS) and why (for BLOCKS and LOST)."""

    outcome: str
    reason: str = ""


@dataclass
class Budgets:
    """The scenario's PodDisruptionBudgets (`RemainingPdbTracker`'s, as their status says)."""

    pdbs: list[PodDisruptionBudget]
    _by_namespace: dict[str, list[tuple[int, Selector]]] = field(default_factory=dict, repr=False)
    _matched: dict[int, tuple[Pod, list[int]]] = field(default_factory=dict, repr=False)  # id(pod) → (pod, budgets)

    def __post_init__(self) -> None:
        for i, pdb in enumerate(self.pdbs):
            self._by_namespace.setdefault(pdb.meta.namespace, []).append((i, _as_selector(pdb.selector)))

    def matching(self, pod: Pod) -> list[int]:
        """The budgets selecting the pod (`MatchingPdbs`: same namespace, `LabelSelectorAsSelector` matches:
        an empty selector every pod, an absent one none); remembered per pod (pods and selectors are frozen,
        and a node is drained again after each removal)."""
        known = self._matched.get(id(pod))
        if known is None or known[0] is not pod:
            known = self._matched[id(pod)] = (pod, [i for i, selector in self._by_namespace.get(pod.namespace, ())
                                                    if selector.matches(pod.labels)])
        return known[1]


def _as_selector(raw: dict[str, Any] | None) -> Selector:
    """`LabelSelectorAsSelector` (None selects nothing, {} everything); a malformed one selects nothing."""
    try:
        return parse_selector(raw)
    except SelectorError:
        return NOTHING


_NO_BUDGETS = Budgets([])


def annotations(raw: dict[str, Any]) -> dict[str, Any]:
    """`metadata.annotations` of a manifest as given ({} when absent)."""
    meta = raw.get("metadata") if isinstance(raw, dict) else None
    found = meta.get("annotations") if isinstance(meta, dict) else None
    return found if isinstance(found, dict) else {}


def _named(pod: Pod) -> str:
    return f"pod {pod.key}"


# --------------------------------------------------------------------------- one rule each

def do_not_disrupt(pod: Pod, budgets: Budgets, options: DrainOptions) -> Verdict | None:
    """Karpenter `podutils.IsDisruptable`: an active pod annotated `karpenter.sh/do-not-disrupt: "true"`."""
    if pod.phase not in TERMINAL_PHASES and annotations(pod.raw).get(DO_NOT_DISRUPT) == "true":
        return Verdict(BLOCKS, f'{_named(pod)} has {DO_NOT_DISRUPT}: "true" (Karpenter)')
    return None


def mirror(pod: Pod, budgets: Budgets, options: DrainOptions) -> Verdict | None:
    """`rules/mirror`: a mirror pod is skipped (its kubelet runs it; it goes with the node)."""
    owner = controller_of(pod)
    return Verdict(STAYS) if mirror_pod(pod) or (owner is not None and owner[0] == "Node") else None


def daemonset(pod: Pod, budgets: Budgets, options: DrainOptions) -> Verdict | None:
    """`rules/daemonset` (`pod_util.IsDaemonSetPod`): controlled by a DaemonSet, or annotated as its pod."""
    return Verdict(STAYS) if daemon_pod(pod) or annotations(pod.raw).get(DAEMONSET_POD) == "true" else None


def safe_to_evict(pod: Pod, budgets: Budgets, options: DrainOptions) -> Verdict | None:
    """`rules/safetoevict`: `safe-to-evict: "true"` lets the pod go past the blocking rules that follow; a pod
    without a controller is then deleted with the node (nothing recreates it)."""
    if annotations(pod.raw).get(SAFE_TO_EVICT) != "true":
        return None
    if controller_of(pod) is None:
        return Verdict(LOST, f'declares no controller; {SAFE_TO_EVICT}: "true" lets it go')
    return Verdict(MOVES)


def terminal(pod: Pod, budgets: Budgets, options: DrainOptions) -> Verdict | None:
    """`rules/terminal` (`drain.IsPodTerminal`): a Succeeded or Failed pod holds nothing and is not moved."""
    return Verdict(STAYS) if pod.phase in TERMINAL_PHASES else None


def replicated(pod: Pod, budgets: Budgets, options: DrainOptions) -> Verdict | None:
    """`rules/replicated`: a pod must have a controller of a replicated kind (`NotReplicated`)."""
    owner = controller_of(pod)
    if owner is None:
        if options.force:
            return Verdict(LOST, "declares no controller; deleted with its node (--force)")
        return Verdict(BLOCKS, f"{_named(pod)} declares no controller, nothing would recreate it "
                               "(cluster-autoscaler NotReplicated; --force deletes it)")
    if owner[0] not in REPLICATED_KINDS:
        return Verdict(BLOCKS, f"{_named(pod)} is controlled by {owner[0]}/{owner[1]}, not a ReplicationController, "
                               "Job, ReplicaSet or StatefulSet (cluster-autoscaler NotReplicated, "
                               "--skip-nodes-with-custom-controller-pods)")
    return None


def system(pod: Pod, budgets: Budgets, options: DrainOptions) -> Verdict | None:
    """`rules/system`: a kube-system pod that no PodDisruptionBudget selects (`UnmovableKubeSystemPod`)."""
    if options.skip_kube_system_check or pod.namespace != KUBE_SYSTEM or budgets.matching(pod):
        return None
    return Verdict(BLOCKS, f"{_named(pod)} is a kube-system pod without a PodDisruptionBudget "
                           "(cluster-autoscaler UnmovableKubeSystemPod; --skip-kube-system-check lifts it)")


def not_safe_to_evict(pod: Pod, budgets: Budgets, options: DrainOptions) -> Verdict | None:
    """`rules/notsafetoevict`: `safe-to-evict: "false"` (`NotSafeToEvictAnnotation`)."""
    if annotations(pod.raw).get(SAFE_TO_EVICT) == "false":
        return Verdict(BLOCKS, f'{_named(pod)} has {SAFE_TO_EVICT}: "false" (cluster-autoscaler '
                               "NotSafeToEvictAnnotation)")
    return None


def local_volumes(pod: Pod) -> list[str]:
    """`drain.HasBlockingLocalStorage`'s volumes: hostPath, or emptyDir whose medium is not Memory, and not
    named in the `safe-to-evict-local-volumes` annotation (comma-separated)."""
    listed = str(annotations(pod.raw).get(SAFE_TO_EVICT_LOCAL_VOLUMES) or "")
    allowed = set(listed.split(",")) if listed else set()
    out = []
    for volume in pod.volumes:
        empty_dir = volume.get("emptyDir")
        local = volume.get("hostPath") is not None or (
            "emptyDir" in volume and (empty_dir or {}).get("medium") != "Memory")
        if local and volume.get("name") not in allowed:
            out.append(str(volume.get("name")))
    return out


def local_storage(pod: Pod, budgets: Budgets, options: DrainOptions) -> Verdict | None:
    """`rules/localstorage` (`LocalStorageRequested`)."""
    names = local_volumes(pod)
    if not names:
        return None
    return Verdict(BLOCKS, f"{_named(pod)} has local storage (volume {', '.join(names)}: hostPath or emptyDir not "
                           f"in memory; cluster-autoscaler LocalStorageRequested, unless listed in "
                           f"{SAFE_TO_EVICT_LOCAL_VOLUMES})")


def per_node_pod(pod: Pod) -> bool:
    """A DaemonSet's or a mirror pod: per-node overhead, it goes with its node and is recreated nowhere else."""
    options = DrainOptions()
    return mirror(pod, _NO_BUDGETS, options) is not None or daemonset(pod, _NO_BUDGETS, options) is not None


Rule = Callable[[Pod, Budgets, DrainOptions], Verdict | None]
RULES: tuple[Rule, ...] = (do_not_disrupt, mirror, daemonset, safe_to_evict, terminal, replicated, system,
                           not_safe_to_evict, local_storage)


def pod_verdict(pod: Pod, budgets: Budgets, options: DrainOptions) -> Verdict:
    """The first rule that decides (`Rules.Drainable`: the first outcome that is not undefined), else MOVES."""
    for rule in RULES:
        verdict = rule(pod, budgets, options)
        if verdict is not None:
            return verdict
    return Verdict(MOVES)


def pdb_refusal(evicted: Sequence[Pod], budgets: Budgets) -> str | None:
    """Why the budgets refuse evicting these pods together, None when they allow it: a pod two budgets select
    (the eviction API refuses it; Karpenter `isEvictable`), or a budget allowing fewer disruptions than it
    would take (`rules/pdb` below 1; `CanRemovePods` `inParallel` below the count)."""
    taken = [0] * len(budgets.pdbs)
    for pod in evicted:
        selecting = budgets.matching(pod)
        if len(selecting) > 1:
            names = ", ".join(budgets.pdbs[i].meta.key for i in selecting)
            return (f"{_named(pod)} is selected by {len(selecting)} PodDisruptionBudgets ({names}): the eviction "
                    "API refuses to evict it (Karpenter)")
        for i in selecting:
            taken[i] += 1
    for i, count in enumerate(taken):
        allowed = budgets.pdbs[i].disruptions_allowed
        if count > allowed:
            return (f"PodDisruptionBudget {budgets.pdbs[i].meta.key} allows {max(allowed, 0)} disruption(s), "
                    f"{count} of its pods would be evicted (cluster-autoscaler NotEnoughPdb)")
    return None


def node_refusal(node: Node) -> str | None:
    """Why the node is no candidate whatever its pods (its annotations), None when it is one."""
    notes = annotations(node.raw)
    if notes.get(SCALE_DOWN_DISABLED) == "true":
        return f'node annotated {SCALE_DOWN_DISABLED}: "true" (cluster-autoscaler ScaleDownDisabledAnnotation)'
    if notes.get(DO_NOT_DISRUPT) == "true":
        return f'node annotated {DO_NOT_DISRUPT}: "true" (Karpenter)'
    return None


@dataclass
class Drain:
    """What draining one node would do: the pods that move (their controllers recreate them), those deleted
    with nothing to recreate them, those that stay with the node; or why it cannot be drained."""

    moves: list[Pod] = field(default_factory=list)
    lost: list[tuple[Pod, str]] = field(default_factory=list)
    stays: list[Pod] = field(default_factory=list)
    blocked: str | None = None

    @property
    def evicted(self) -> list[Pod]:
        return self.moves + [p for p, _ in self.lost]


def drain(node: Node, pods: Sequence[Pod], budgets: Budgets, options: DrainOptions,
          verdict_of: Callable[[Pod], Verdict] | None = None) -> Drain:
    """`GetPodsToMove` for one node: the node's own refusal, else the first blocking pod (in the node's order),
    else the budgets' refusal of the pods it would evict. `verdict_of`: `pod_verdict` with these budgets and
    options, remembered per pod by the caller."""
    refused = node_refusal(node)
    if refused is not None:
        return Drain(blocked=refused)
    out = Drain()
    for pod in pods:
        verdict = pod_verdict(pod, budgets, options) if verdict_of is None else verdict_of(pod)
        if verdict.outcome == BLOCKS:
            return Drain(blocked=verdict.reason)
        if verdict.outcome == MOVES:
            out.moves.append(pod)
        elif verdict.outcome == LOST:
            out.lost.append((pod, verdict.reason))
        else:
            out.stays.append(pod)
    out.blocked = pdb_refusal(out.evicted, budgets)
    return out
