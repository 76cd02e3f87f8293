"""A member cluster read from files (its Karmada `Cluster`, nodes and pods) and what the member verbs
compute from it: `summary`, `models validate`, `models classify`, with the warnings the user should see."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubefit.api.karmada import Cluster
from kubefit.collector import kept
from kubefit.errors import InputError
from kubefit.k8s.resourcenames import BASIC_RESOURCES, is_scalar
from kubefit.manifests.karmada import decode_cluster
from kubefit.manifests.load import Scenario, unread_objects
from kubefit.manifests.scenario import load_scenario
from kubefit.multicluster.models import Verdict, allocatable_modelings, to_json, validate_cluster
from kubefit.multicluster.summary import overflow_resources, resource_summary

Warn = Callable[[str], None]


def load_member(files: Sequence[str | Path], verb: str, warn: Warn, *,
                members: bool = True) -> tuple[Scenario, list[Cluster]]:
    """The scenario of the files and its Karmada Clusters (decoded); what `verb` does not read goes to `warn`.

    A member's nodes and pods are what Karmada lists from its API server, stored objects: used as given
    (no admission)."""
    scenario = load_scenario([str(f) for f in files], admission=False)
    unread = unread_objects(scenario, verb, keep=("Cluster",), members=members, skipped=True)
    if unread:
        warn(unread)
    clusters = [decode_cluster(d, require_name=False) for d in scenario.fleet_objects("Cluster")]
    return scenario, clusters


def warn_accounting(scenario: Scenario, warn: Warn) -> None:
    """Nodes without status.allocatable (Karmada does not fall back to capacity), pod requests Karmada's
    accounting drops (not cpu/memory/ephemeral-storage/pods/scalar), and quantities where its int64
    arithmetic wraps."""
    for node in scenario.nodes:
        if (node.raw.get("status") or {}).get("allocatable") is None:
            warn(f"{node.source}: Node/{node.name}: no status.allocatable; Karmada counts nothing for this node")
    dropped: dict[str, int] = {}
    for pod in scenario.pods:
        spec = pod.raw.get("spec") or {}
        for c in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
            for name in ((c.get("resources") or {}).get("requests") or {}):
                if name not in BASIC_RESOURCES and not is_scalar(name):
                    dropped[name] = dropped.get(name, 0) + 1
    for name, n in sorted(dropped.items()):
        warn(f"request {name!r} ({n} container(s)) is not counted by Karmada's resourceSummary "
             f"(only cpu, memory, ephemeral-storage, pods and extended/hugepages resources are)")
    names = overflow_resources(scenario.nodes, scenario.pods)
    if names:
        warn(f"{', '.join(names)}: quantities of 2^62 base units (cpu: millicores) or more; Karmada's int64 "
             f"arithmetic wraps silently there, so its numbers for these resources are not meaningful")


def member_summary(files: Sequence[str | Path], gates: dict[str, bool], warn: Warn) -> dict[str, Any]:
    """`resourceSummary` and `nodeSummary` of the member's nodes and pods (`kubefit summary`)."""
    scenario, clusters = load_member(files, "summary", warn)
    if len(clusters) > 1:
        raise InputError(f"summary describes one member cluster; found {len(clusters)} Cluster objects",
                         file=", ".join(map(str, files)))
    warn_accounting(scenario, warn)
    modelings = None  # the status controller classifies the nodes when the Cluster has resource models
    if clusters and gates["CustomizedClusterResourceModeling"]:
        modelings = allocatable_modelings(clusters[0], scenario.nodes, scenario.pods)
    return resource_summary(scenario.nodes, scenario.pods, modelings)


@dataclass
class ModelsVerdict:
    """Karmada's verdict on creating each Cluster of the files (`kubefit models validate`)."""

    verdicts: list[tuple[Cluster, Verdict]]

    @property
    def valid(self) -> bool:
        return all(v.valid for _, v in self.verdicts)

    def to_dict(self) -> dict[str, Any]:
        if len(self.verdicts) == 1:
            return self.verdicts[0][1].as_dict()
        shown: dict[int, list[dict[str, Any]]] = {}  # verdicts sharing prepared models share their JSON

        def models(v: Verdict) -> list[dict[str, Any]]:
            if id(v.resource_models) not in shown:
                shown[id(v.resource_models)] = to_json(v.resource_models)
            return shown[id(v.resource_models)]
        return {"valid": self.valid,
                "errors": [f"{c.name}: {e}" for c, v in self.verdicts for e in v.errors],
                "warnings": [f"{c.name}: {w}" for c, v in self.verdicts for w in v.warnings],
                "clusters": {c.name: v.as_dict(models(v)) for c, v in self.verdicts}}


def validate_models(files: Sequence[str | Path], warn: Warn) -> ModelsVerdict:
    """Each Cluster's resource models as Karmada's API server validates them on create."""
    _scenario, clusters = load_member(files, "models validate", warn, members=False)
    if not clusters:
        raise InputError("no Cluster (cluster.karmada.io/v1alpha1) in the files", file=", ".join(map(str, files)))
    judged: dict[int, Any] = {}
    with kept():  # the verdicts live on (60,000 Clusters: the collector's passes over them)
        return ModelsVerdict([(c, validate_cluster(c, judged)) for c in clusters])


def classify_nodes(files: Sequence[str | Path], warn: Warn) -> list[dict[str, int]] | None:
    """The member's nodes classified into its Cluster's grades: `status.resourceSummary.allocatableModelings`
    (None when Karmada reports none)."""
    scenario, clusters = load_member(files, "models classify", warn)
    if len(clusters) != 1:
        raise InputError(f"expected exactly one Cluster (cluster.karmada.io/v1alpha1), found {len(clusters)}",
                         file=", ".join(map(str, files)))
    cluster = clusters[0]
    if not cluster.resource_models:
        warn(f"Cluster {cluster.name}: spec.resourceModels is empty, so Karmada reports no allocatableModelings "
             f"(the API server would have filled in the defaults: see `kubefit models defaults`)")
    warn_accounting(scenario, warn)
    modelings = allocatable_modelings(cluster, scenario.nodes, scenario.pods)
    if modelings is None and cluster.resource_models:
        warn(f"Cluster {cluster.name}: the models' resource names disagree (InitSummary fails), so Karmada "
             f"reports no allocatableModelings")
    return modelings
