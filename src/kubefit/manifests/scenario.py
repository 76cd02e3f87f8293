"""Documents → the scenario: each object decoded by its kind, workloads expanded into the pods their
controllers create, pods and claims admitted as the API server admits them; the whole of `kubefit`'s input as `load_scenario` returns it."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from kubefit.api.core import Pod
from kubefit.collector import kept
from kubefit.errors import InputError
from kubefit.k8s.names import generate_name
from kubefit.manifests import cluster, dra, podgroups, policy, quota, schedulergangs, storage
from kubefit.manifests.admission import admit_scenario
from kubefit.manifests.disruption import PDB, resolve_budgets
from kubefit.manifests.documents import Document, manifest_files, out_of_memory, read_documents
from kubefit.manifests.fastpod import FastPods
from kubefit.manifests.kinds import (
    FLEET_KINDS,
    LIST_KINDS,
    SCHEDULER_CONFIG_KINDS,
    WORKLOAD_KINDS,
    foreign_kind,
    removed_api_message,
    skipped_kind,
)
from kubefit.manifests.load import Scenario, decode_node, decode_pod
from kubefit.manifests.registration import registration_notes
from kubefit.manifests.served import serving_versions, unserved_message
from kubefit.manifests.stream import Entry, progress_while_read, read_entries, streamable
from kubefit.manifests.workloads import expand_workloads


def load_scenario(paths: Iterable[str | Path], progress: Callable[[str, int, int], None] | None = None, *,
                  recursive: bool = False, admission: bool = True, quota_at_arrival: bool = False) -> Scenario:
    """Read every file (a folder: its manifests, like kubectl -f DIR [-R]) and sort its objects into a
    `Scenario` (see DESIGN.md, "The scenario file"); workloads become the pods their controllers create,
    and the pods not stored yet go through the API server's admission (`kubefit.manifests.admission`;
    `admission=False`: pods as given, as kube-scheduler's own tests create them; `quota_at_arrival`: the pods
    being created are left to the timeline to charge to the ResourceQuotas as they arrive).

    `progress(file, objects decoded, objects in the file)` is called after each file's parse (0 decoded),
    every 1,024 objects and at the file's end; for a file of 1 MiB or more read by the compiled reader
    (`stream.progress_while_read`), `progress(file, megabytes read, megabytes in the file)` every 1,024
    objects and at its end.

    Python's cyclic garbage collector is paused meanwhile and, in the `kubefit` command, what was loaded
    is then frozen (`kubefit.collector.kept`).
    """
    with kept():
        return _load_scenario(paths, progress, recursive, admission, quota_at_arrival)


def _load_scenario(paths: Iterable[str | Path], progress: Callable[[str, int, int], None] | None,
                   recursive: bool, admission: bool, quota_at_arrival: bool = False) -> Scenario:
    scenario = Scenario()
    pods = FastPods()
    for path in paths:
        scenario.sources.append(str(path))
        files = manifest_files(path, recursive=recursive)
        for file in files:
            allow_empty = len(files) > 1 or file != str(path)
            if not streamable(file):
                entries = [Entry(doc=d) for d in read_documents(file, allow_empty=allow_empty)]
                _add_entries(scenario, file, entries, progress)
                continue
            try:
                if progress_while_read(file):  # progress while reading, in megabytes; decoding is then quick
                    for entry in read_entries(file, allow_empty=allow_empty, pods=pods, progress=progress):
                        add_entry(scenario, entry)
                else:
                    _add_entries(scenario, file, read_entries(file, allow_empty=allow_empty, pods=pods), progress)
            except MemoryError:
                raise out_of_memory(file) from None
    scenario.admission = admission  # the controllers' creates go through it too (a StatefulSet's claims)
    expand_workloads(scenario)
    admit_scenario(scenario, enabled=admission, quota_at_arrival=quota_at_arrival)
    if PDB in scenario.objects.by_kind:  # the disruption controller's status for budgets written without one
        resolve_budgets(scenario.objects.by_kind[PDB], scenario.workloads)
        scenario.objects._named.pop(PDB, None)
    scenario.warnings += registration_notes(scenario.pending_pods, scenario.nodes)
    _refuse_duplicates("Node", [(n.name, f"Node/{n.name}", n.source) for n in scenario.nodes])
    if len({(p.namespace, p.name) for p in scenario.pods}) < len(scenario.pods):  # (labels only when needed)
        _refuse_duplicates("Pod", [(p.key, f"Pod/{p.name}", p.source) for p in scenario.pods])
    for kind, items in scenario.objects.by_kind.items():
        _refuse_duplicates(kind, [(o.meta.key, f"{kind}/{o.meta.name}", o.meta.source) for o in items])
    return scenario


# Kind → decoder of every cluster object kind kubefit reads beyond Nodes and Pods (Namespace, Service,
# ReplicaSet, PVC, DeviceClass, LimitRange, …): each module keeps its own `DECODERS`.
CLUSTER_OBJECT_DECODERS: dict[str, Callable[[Document, list[str]], Any]] = {
    **cluster.DECODERS, **storage.DECODERS, **dra.DECODERS, **policy.DECODERS, **quota.DECODERS, **podgroups.DECODERS}


def _add_entries(scenario: Scenario, file: str, entries: list[Entry],
                 progress: Callable[[str, int, int], None] | None) -> None:
    """A file read whole: its objects added, `progress(file, objects decoded, objects)` told after its parse,
    every 1,024 objects and at its end."""
    if progress is not None:
        progress(file, 0, len(entries))
    for i, entry in enumerate(entries, start=1):
        add_entry(scenario, entry)
        if progress is not None and (i & 1023) == 0:
            progress(file, i, len(entries))
    if progress is not None:
        progress(file, len(entries), len(entries))


def add_entry(scenario: Scenario, entry: Entry) -> None:
    """A streamed object: a document to decode, or a node or pod the stream decoded (with its warnings)."""
    if entry.doc is not None:
        add_document(scenario, entry.doc)
    elif isinstance(entry.decoded, Pod):
        scenario.pods.append(entry.decoded)
        scenario.warnings += entry.warnings
    else:
        scenario.nodes.append(entry.decoded)  # type: ignore[arg-type]
        scenario.warnings += entry.warnings


def add_document(scenario: Scenario, doc: Document) -> None:
    kind = doc.kind
    removed = removed_api_message(str((doc.body or {}).get("apiVersion") or ""), str(kind or ""))
    if removed is not None:  # what no supported kube-apiserver serves any more (kinds.py)
        raise InputError(removed, file=doc.source, obj=doc.label, field="apiVersion")
    _name_generated(scenario, doc)
    if (gang := schedulergangs.group_of(doc)) is not None:  # coscheduling's or Volcano's PodGroup (their CRDs)
        scenario.objects.add(schedulergangs.KIND_OF[gang], schedulergangs.decode_scheduler_gang(doc))
    elif foreign_kind(doc):  # an operator's kind of another API group (apps.kruise.io StatefulSet): not the built-in
        scenario.skipped.append(doc)
    elif kind == "Node":
        scenario.nodes.append(decode_node(doc, scenario.warnings))
    elif kind == "Pod":
        scenario.pods.append(decode_pod(doc, scenario.warnings, scenario.pod_specs))
    elif kind in SCHEDULER_CONFIG_KINDS:
        if scenario.scheduler_config is not None:
            first = scenario.scheduler_config
            raise InputError(f"a scenario holds at most one scheduler configuration; the first is "
                             f"{first.label} in {first.source}", file=doc.source, obj=doc.label)
        scenario.scheduler_config = doc
    elif kind in CLUSTER_OBJECT_DECODERS or kind in WORKLOAD_KINDS:
        if kind in CLUSTER_OBJECT_DECODERS:  # read by plugins (a ReplicaSet's selector for spreading)
            scenario.objects.add(kind, CLUSTER_OBJECT_DECODERS[kind](doc, scenario.warnings))
        if kind in WORKLOAD_KINDS:  # and expanded into the pods its controller would still create
            scenario.workloads.append(doc)
            doc.position = len(scenario.pods)  # its pods join the queue here, in document order
    elif kind in FLEET_KINDS:
        scenario.fleet.append(doc)
    elif not kind:
        raise InputError("object has no kind", file=doc.source, obj=doc.label, field="kind")
    elif skipped_kind(doc):
        scenario.skipped.append(doc)
    else:
        supported = ", ".join(dict.fromkeys(("Node", "Pod", *SCHEDULER_CONFIG_KINDS, *LIST_KINDS, *FLEET_KINDS,
                                             *WORKLOAD_KINDS, *CLUSTER_OBJECT_DECODERS)))
        version = str(doc.body.get("apiVersion") or "")
        if serving_versions(kind):  # a kind the API server serves, in another version
            raise InputError(unserved_message(version, kind), file=doc.source, obj=doc.label, field="apiVersion")
        raise InputError(f"{unserved_message(version, kind)} (unknown kind {kind!r}: no supported kube-apiserver "
                         f"serves it; kubefit reads {supported})", file=doc.source, obj=doc.label, field="kind")


def _refuse_duplicates(kind: str, objects: list[tuple[str, str, str]]) -> None:
    """Two objects of one kind with one name (`key`, `label`, `source`) would be one object in a cluster."""
    seen: dict[str, str] = {}
    for key, label, source in objects:
        if key in seen:
            raise InputError(f"a second {kind} named {key!r} (the first is in {seen[key]}); names must be unique",
                             file=source, obj=label, field="metadata.name")
        seen[key] = source


def _name_generated(scenario: Scenario, doc: Document) -> None:
    """An object with `generateName` and no name is named as the API server would (stable suffix per position)."""
    meta = doc.body.get("metadata")
    if not isinstance(meta, dict) or meta.get("name") or not isinstance(meta.get("generateName"), str):
        return
    seed = (doc.kind, str(len(scenario.nodes)), str(len(scenario.pods)), str(len(scenario.workloads)))
    meta["name"] = generate_name(meta["generateName"], *seed)
