"""Run one workload under several scheduler configurations and put the packing metrics side by side."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kubefit.api.core import Node, Pod
from kubefit.errors import InputError
from kubefit.k8s.version import KubeVersion
from kubefit.manifests.controllers import Controllers
from kubefit.manifests.documents import read_documents
from kubefit.manifests.kinds import SCHEDULER_CONFIG_KINDS
from kubefit.scheduler.config import (
    NodeResourcesFitArgs,
    SchedulerConfiguration,
    ShapePoint,
    load_configuration,
)
from kubefit.scheduler.simulate import SimulationResult, node_allocatable, simulate
from kubefit.scheduler.state import compile_state
from kubefit.told import told_keys

STRATEGIES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")
DEFAULT_SHAPE = (ShapePoint(0, 0), ShapePoint(100, 10))  # bin packing: utilization 0 → 0, 100 → 10
FIT = "NodeResourcesFit"


@dataclass
class Candidate:
    """One configuration to compare: a label, the configuration, what the user should be told."""

    label: str
    config: SchedulerConfiguration
    notes: tuple[str, ...] = ()


def strategy_config(base: SchedulerConfiguration, strategy: str) -> SchedulerConfiguration:
    """`base` with NodeResourcesFit's scoring type set to `strategy` in every profile (same resources);
    RequestedToCapacityRatio keeps the base shape, else uses 0→0, 100→10."""
    profiles = []
    for profile in base.profiles:
        args = profile.plugin_args.get(FIT) or NodeResourcesFitArgs()
        shape = (args.shape or DEFAULT_SHAPE) if strategy == "RequestedToCapacityRatio" else args.shape
        new_args = replace(args, scoring_type=strategy, shape=shape)
        profiles.append(replace(profile, plugin_args={**profile.plugin_args, FIT: new_args}))
    return replace(base, profiles=tuple(profiles))


def config_from_file(path: str, version: KubeVersion | None = None) -> SchedulerConfiguration:
    """The scheduler configuration held by `path` (the file's only configuration document), as kube-scheduler
    of `version` decodes it (None: the default version)."""
    docs = [d for d in read_documents(path) if d.kind in SCHEDULER_CONFIG_KINDS]
    if len(docs) != 1:
        raise InputError(f"expected exactly one scheduler configuration ({' or '.join(SCHEDULER_CONFIG_KINDS)}), "
                         f"found {len(docs)}", file=path)
    return load_configuration(docs[0], version)


def candidates(base: SchedulerConfiguration, specs: Sequence[str], base_label: str = "scenario") -> list[Candidate]:
    """The scenario's configuration, then one per `--compare` entry (a strategy name or a config file)."""
    out = [Candidate(base_label, base)]
    for spec in specs:
        match = next((s for s in STRATEGIES if s.lower() == spec.lower()), None)
        if match is not None:
            notes = tuple(f"{match}: profile {p.scheduler_name} does not score with {FIT}; the strategy has no effect"
                          for p in base.profiles if FIT not in {sp.name for sp in p.score_plugins})
            out.append(Candidate(match, strategy_config(base, match), notes))
        elif Path(spec).exists() or spec == "-":
            config = config_from_file(spec, base.version)
            out.append(Candidate(spec, config, config.notes))
        else:
            raise InputError(f"--compare {spec!r}: neither a strategy ({', '.join(STRATEGIES)}) nor an existing file")
    return out


def compare(nodes: Sequence[Node], pods: Sequence[Pod], queue: Sequence[Pod], configs: Sequence[Candidate], *,
            tie_break: str = "random", seed: int | None = 0,
            progress: Callable[[str, int], None] | None = None, objects: Any = None,
            controllers: Controllers | None = None) -> list[SimulationResult]:
    """Simulate `queue` on a fresh state of `nodes` + bound `pods` (+ the cluster `objects`) under each
    configuration; with the scenario's `controllers` (`Controllers.of`), preemption victims are replaced by
    their controllers (`simulate`'s `controllers`, afresh for each run: no Job failure counted, the quotas' usage
    as loading left it)."""
    results = []
    for cand in configs:
        state = compile_state(nodes, pods, objects)
        tick = None if progress is None else (lambda done, label=cand.label: progress(label, done))
        results.append(simulate(state, cand.config, queue, tie_break=tie_break, seed=seed, progress=tick,
                                label=cand.label, controllers=None if controllers is None else controllers.afresh()))
    return results


def comparison_to_dict(results: Sequence[SimulationResult]) -> dict:
    """`{"configurations": [{name, scheduled, unschedulable, notCreated, placement, final, metrics}],
    "allocatable"}` in the order given (`notCreated` where an OrderedReady StatefulSet left pods uncreated).

    Steps are left out (a run of each configuration with plain `simulate` gives them); placement says
    where each configuration put the pods, node by node, and `final` what each node then holds
    (`allocatable`, the same nodes in every run, once); `warnings` gathers what each run told the user,
    `inputs` is the first run's (the verb sets the same on every run).
    """
    told = [r.warnings for r in results if r.warnings is not None]
    return {"configurations": [{"name": r.label, "scheduled": r.scheduled, "unschedulable": r.unschedulable,
                                **({"notCreated": r.not_created} if r.not_created else {}),
                                "placement": r.placement(), "final": r.final(), "metrics": r.metrics()}
                               for r in results],
            "allocatable": _allocatable(results[0]) if results else {},
            **told_keys([w for ws in told for w in ws] if told else None, None, results[0].inputs if results else None)}


def _allocatable(result: Any) -> dict:
    given = getattr(result, "allocatable", None)  # a run summarized on a Dask worker carries it
    return given if given is not None else node_allocatable(result.state)


def _final_nodes(result: SimulationResult) -> dict[str, str | None]:
    """Each pod's node at the end of the run (None: pending), by key (a preempting pod's last step counts)."""
    names = result.state.node_names
    return {step.pod.key: None if step.node is None else names[step.node] for step in result.steps}


def group_differences(results: Sequence[SimulationResult]) -> list[dict]:
    """The pod groups the runs place differently (another number of their pods bound, or on other nodes), in the
    order the runs first name them, with how each run scheduled them (`asGroup`: GenericWorkload on):
    `{"podGroup", "policy", "minCount", "pods", "runs": {label: {"bound", "asGroup", "placedWhole"}}}`. A group's
    pods are those its records name (a run that schedules them one by one has no record: its pods are the same)."""
    groups: dict[str, tuple[object, list[str]]] = {}
    for result in results:
        for record in getattr(result, "groups", ()):
            groups.setdefault(record.key, (record, [f"{record.namespace}/{p}" for p in record.pods]))
    finals = [_final_nodes(r) for r in results]
    out = []
    for key, (record, pods) in groups.items():
        runs, seen = {}, set()
        for result, final in zip(results, finals, strict=True):
            nodes = tuple(sorted(final.get(p) or "" for p in pods))
            mine = next((g for g in getattr(result, "groups", ()) if g.key == key), None)
            bound = sum(1 for p in pods if final.get(p) is not None)
            runs[result.label] = {"bound": bound, "asGroup": mine is not None, "placedWhole": bound == len(pods)}
            seen.add(nodes)
        if len(seen) > 1:
            out.append({"podGroup": key, "policy": record.policy or None,
                        **({"minCount": record.min_count} if record.min_count is not None else {}),
                        "pods": len(pods), "runs": runs})
    return out


def version_differences(results: Sequence[SimulationResult]) -> list[dict]:
    """Every pod placed differently by the runs (another node, or pending in one of them): `{"pod": ns/name,
    "nodes": {label: node or None}}`, in the first run's queue order. A pod that a run never scheduled (its
    controller did not create it) is None there too."""
    placed = [_final_nodes(result) for result in results]
    order = list(placed[0]) + [k for p in placed[1:] for k in p if k not in placed[0]]
    out = []
    for key in order:
        nodes = {r.label: p.get(key) for r, p in zip(results, placed, strict=True)}
        if len(set(nodes.values())) > 1:
            out.append({"pod": key, "nodes": nodes})
    return out


def version_comparison_to_dict(results: Sequence[SimulationResult]) -> dict:
    """`comparison_to_dict` of the versions' runs, plus `differences` (`version_differences`), per version how many
    pods its run placed elsewhere than the first version's (`moved`), and the pod groups placed differently
    (`groupDifferences`, `group_differences`) when some are."""
    data = comparison_to_dict(results)
    differences = version_differences(results)
    first = results[0].label
    for config in data["configurations"]:
        config["moved"] = sum(1 for d in differences if d["nodes"][config["name"]] != d["nodes"][first])
    data["differences"] = differences
    groups = group_differences(results)
    if groups:
        data["groupDifferences"] = groups
    return data
