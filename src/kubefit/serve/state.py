"""The scenario `kubefit serve` holds: the objects of the files it was started with, the edits made in the
browser since (each one a step that undo takes back) and the last simulation of them.

Every answer comes from `kubefit.verbs`, called on files written for it: the objects (a JSON `kind: List`,
with the scaled replicas), the configuration being edited and the pasted documents, plus the node actions
as `simulate` takes them. So what the page shows is what `kubefit simulate -f ...` prints for the same
files, and no rule of kube-scheduler is restated here. An edit that fails (bad YAML, an invalid
configuration, an unknown node) raises the verb's `KubefitError` and leaves the last good state in place.
"""

from __future__ import annotations

import copy
import os
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import orjson
import yaml

from kubefit.collector import collector_paused
from kubefit.errors import InputError
from kubefit.manifests.documents import Document, manifest_files, parse_documents, read_documents
from kubefit.manifests.kinds import SCHEDULER_CONFIG_KINDS
from kubefit.manifests.parse import REFERENCE_MAX_BYTES
from kubefit.manifests.templates import copy_names, renamed_for

PRESETS_DIR = Path(__file__).resolve().parent / "assets" / "presets"
PRESETS = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")  # NodeResourcesFit's scoring strategies
SCALABLE = ("Deployment", "ReplicaSet", "StatefulSet")  # workloads whose spec.replicas the page may change
HOSTNAME_LABEL = "kubernetes.io/hostname"
MAX_HISTORY = 100  # undo steps kept (each holds only its edits, not the objects)


def preset(name: str) -> str:
    """The YAML text of a bundled configuration preset (a NodeResourcesFit scoring strategy)."""
    if name not in PRESETS:
        raise InputError(f"unknown preset {name!r}; one of {', '.join(PRESETS)}", field="preset")
    return (PRESETS_DIR / f"{name}.yaml").read_text(encoding="utf-8")


@dataclass(frozen=True, eq=False)  # compared by identity: one per reading
class Objects:
    """The objects of the files (or of one snapshot of the live cluster) but the scheduler configuration,
    and that configuration as YAML text (None: kube-scheduler's defaults)."""

    bodies: list[dict[str, Any]]
    config: str | None
    serial: int  # which reading: names the written scenario file's content


def objects_of(documents: list[Document], serial: int) -> Objects:
    """The `Objects` of parsed documents: at most one scheduler configuration, which becomes the editor's text."""
    configs = [d for d in documents if d.kind in SCHEDULER_CONFIG_KINDS]
    if len(configs) > 1:
        raise InputError(f"expected at most one KubeSchedulerConfiguration or Policy, found {len(configs)}",
                         file=configs[1].source, obj=configs[1].label)
    return Objects([d.body for d in documents if d.kind not in SCHEDULER_CONFIG_KINDS],
                   yaml.safe_dump(configs[0].body, sort_keys=False) if configs else None, serial)


@dataclass(frozen=True)
class Edits:
    """The objects read and everything changed since; the page's history holds one per step."""

    source: Objects | None = None  # the objects these edits apply to (the files', or a later snapshot's)
    config: str | None = None  # the configuration's YAML text; None: the files' own (or kube-scheduler's defaults)
    cordon: tuple[str, ...] = ()
    drain: tuple[str, ...] = ()
    remove: tuple[str, ...] = ()
    added: tuple[str, ...] = ()  # YAML texts of pasted documents and of copied nodes, in the order given
    scale: tuple[tuple[int, int], ...] = ()  # (position of a workload among the objects, its replicas)
    label: str = "the files as given"  # what this step did, for the history and the export


@dataclass
class Run:
    """One simulation of the scenario with its edits: the verb's result and its `-o json` dict."""

    edits: Edits
    result: Any  # kubefit.scheduler.simulate.SimulationResult
    data: dict[str, Any]
    where: dict[str, str | None]  # pod ns/name → the node it ended on (None: pending), after the last step
    views: dict[str, Any] = field(default_factory=dict)  # the page's rows of this run, made once (`kubefit.serve.views`)


@dataclass
class Options:
    """How `kubefit serve` was started: the files and the version options passed to every verb."""

    files: Sequence[str]
    kube_version: str | None = None
    feature_gates: str | None = None
    kubeconfig: str | None = None
    context: str | None = None
    tie_break: str = "random"  # as `kubefit simulate`'s defaults, so the page shows what the command prints
    seed: int = 0
    recursive: bool = False  # -R: the folders' sub-folders too
    requests: Any = None  # --requests-from and the usage options: what the page's `rightsize` reads (RequestsFrom)
    gangs_as_workloads: bool = False  # --gangs-as-workloads: every verb the page runs translates other schedulers' gangs

    def versions(self) -> dict[str, Any]:
        """The options every verb of the page takes as the command does: the version, its gates, the gangs."""
        return {"kube_version": self.kube_version, "feature_gates": self.feature_gates,
                "gangs_as_workloads": self.gangs_as_workloads}


@dataclass
class Session:
    """The scenario held by the server, its history of edits and the current run (one lock for all)."""

    options: Options
    history: list[Edits] = field(default_factory=list)
    run: Run | None = None
    previous: Run | None = None  # the run before the last change, for "what moved"
    lock: threading.RLock = field(default_factory=threading.RLock)
    workdir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="kubefit-serve-")))
    readings: int = 0  # the files and each refresh from the cluster: `Objects.serial`
    _written: dict[str, Any] = field(default_factory=dict)
    _defaults: dict[str | None, str] = field(default_factory=dict)  # the default configuration's text per minor

    # ------------------------------------------------------------------ the files and what is written of them
    def read(self, documents: list[Document]) -> Objects:
        self.readings += 1
        return objects_of(documents, self.readings)

    def files(self, edits: Edits) -> list[str]:
        """Write the scenario of `edits` as files for the verbs: the objects (scaled), the configuration, the
        pasted documents. Each file is rewritten only when what it holds changed."""
        assert edits.source is not None
        paths = [self._write("scenario.json", (edits.source.serial, edits.scale),
                             lambda: _list_json(self.scaled(edits)))]
        config = self.config_text(edits)
        if config is not None:
            paths.append(self._write("configuration.yaml", config, lambda: config.encode()))
        for i, text in enumerate(edits.added, 1):
            paths.append(self._write(f"added-{i}.yaml", text, lambda text=text: text.encode()))
        return paths

    def _write(self, name: str, key: Any, content: Callable[[], bytes]) -> str:
        path = self.workdir / name
        if self._written.get(name) != key or not path.exists():
            path.write_bytes(content())
            self._written[name] = key
        return str(path)

    def config_text(self, edits: Edits | None = None) -> str | None:
        """The configuration in force for `edits` (default the current ones): edited, else the files'."""
        edits = edits or self.current
        assert edits.source is not None
        return edits.config if edits.config is not None else edits.source.config

    def default_config_text(self, minor: str | None) -> str:
        """The effective configuration kube-scheduler of `minor` (with the session's feature gates) runs under
        when the files carry none: its defaults, as `kubefit config view` prints them, ready to edit (what the
        editor shows, as kube-scheduler-simulator shows them). Made once per version."""
        if minor not in self._defaults:
            from kubefit.k8s.version import resolve
            from kubefit.scheduler.config import load_configuration

            version = resolve(minor, self.options.feature_gates)
            self._defaults[minor] = yaml.safe_dump(load_configuration(None, version).effective, sort_keys=False)
        return self._defaults[minor]

    def scaled(self, edits: Edits) -> list[dict[str, Any]]:
        """The objects with the replicas `edits` set (copies of the scaled workloads only)."""
        assert edits.source is not None
        if not edits.scale:
            return edits.source.bodies
        out = list(edits.source.bodies)
        for position, replicas in edits.scale:
            body = copy.deepcopy(out[position])
            body.setdefault("spec", {})["replicas"] = replicas
            out[position] = body
        return out

    # ------------------------------------------------------------------ runs and the history
    @property
    def current(self) -> Edits:
        return self.history[-1]

    def simulate(self, edits: Edits) -> Run:
        """`kubefit.verbs.simulate` on the scenario of `edits` (raises its `KubefitError` on bad input)."""
        from kubefit import verbs

        o = self.options
        with collector_paused():  # what a run builds lives on (no cycles): the collector's passes are pure cost
            result = verbs.simulate(self.files(edits), tie_break=o.tie_break, seed=o.seed, cordon=edits.cordon,
                                    drain=edits.drain, remove=edits.remove, warn=quiet, **o.versions())
            return Run(edits, result, result.to_dict(), final_places(result))

    def start(self) -> Run:
        """Read the files and run them once (bad files: the verb's error; the server does not start)."""
        with self.lock:
            docs = read_files(self.options.files, self.options.recursive)
            self.history = [Edits(self.read(docs))]
            self.run = self.simulate(self.current)
            return self.run

    def apply(self, edits: Edits) -> Run:
        """Run `edits`; on success they become the current step (the run before is kept for the diff)."""
        with self.lock:
            run = self.simulate(edits)
            self.previous, self.run = self.run, run
            self.history.append(edits)
            del self.history[1:-MAX_HISTORY]
            return run

    def undo(self) -> Run:
        """Back to the step before the last edit (the first step, the files as given, stays)."""
        with self.lock:
            if len(self.history) < 2:
                raise InputError("nothing to undo: this is the scenario as the files give it", field="undo")
            edits = self.history[-2]
            before = self.previous  # usually the run of those very edits: no need to simulate again
            run = before if before is not None and before.edits == edits else self.simulate(edits)
            self.history.pop()
            self.previous, self.run = self.run, run
            return run

    def refresh(self, documents: list[dict[str, Any]]) -> Run:
        """Replace the objects with a new snapshot of the cluster, keeping the configuration being edited;
        the node actions and scaling are dropped (they named the old objects). Undo goes back before it."""
        with self.lock:
            source = self.read([Document(body, "snapshot", i) for i, body in enumerate(documents, 1)])
            return self.apply(Edits(source, config=self.current.config, label="refreshed from the cluster"))

    # ------------------------------------------------------------------ the what-if edits
    def edit(self, **changes: Any) -> Run:
        """Apply the current edits with `changes` (fields of `Edits`); see `apply`."""
        return self.apply(replace(self.current, **changes))

    def workloads(self) -> list[dict[str, Any]]:
        """The scalable workloads among the objects: position, kind, namespace/name, replicas now."""
        scaled = dict(self.current.scale)
        out = []
        for i, body in enumerate(self.current.source.bodies):
            if body.get("kind") in SCALABLE:
                meta = body.get("metadata") or {}
                replicas = scaled.get(i, (body.get("spec") or {}).get("replicas", 1))
                out.append({"position": i, "kind": body["kind"], "name": f"{meta.get('namespace', 'default')}/"
                            f"{meta.get('name', '')}", "replicas": replicas})
        return out

    def scale(self, position: int, replicas: int) -> Run:
        """Set a workload's `spec.replicas` (its controller then creates that many pods, as `simulate` reads it)."""
        kinds = {w["position"]: w for w in self.workloads()}
        if position not in kinds:
            raise InputError(f"no Deployment, ReplicaSet or StatefulSet at position {position}", field="workload")
        if not 0 <= replicas <= 100_000:
            raise InputError(f"replicas must be between 0 and 100000, got {replicas}", field="replicas")
        scale = tuple((p, r) for p, r in self.current.scale if p != position) + ((position, replicas),)
        return self.edit(scale=scale, label=f"scale {kinds[position]['kind']} {kinds[position]['name']} to {replicas}")

    def add_yaml(self, text: str, source: str = "pasted") -> Run:
        """Add the objects of pasted YAML (pods, workloads, nodes...); a scheduler configuration belongs in the editor."""
        docs = parse_documents(text, source)
        if not docs:
            raise InputError("holds no objects (empty, or only comments)", file=source)
        for doc in docs:
            if doc.kind in SCHEDULER_CONFIG_KINDS:
                raise InputError("a scheduler configuration goes in the configuration editor, not here",
                                 file=source, obj=doc.label)
        labels = ", ".join(d.label for d in docs[:3]) + (f" and {len(docs) - 3} more" if len(docs) > 3 else "")
        return self.edit(added=(*self.current.added, text), label=f"add {labels}")

    def add_nodes(self, template: str, count: int) -> Run:
        """Add `count` copies of the node `template`, named `<template>-<i>` and labelled with their own
        hostname, as a new node of the same machine type registers (`kubefit plan`'s copies)."""
        if not 1 <= count <= 1000:
            raise InputError(f"count must be between 1 and 1000, got {count}", field="count")
        nodes = {n.get("metadata", {}).get("name"): n for n in self.scaled(self.current) if n.get("kind") == "Node"}
        for text in self.current.added:
            nodes.update({d.name: d.body for d in parse_documents(text) if d.kind == "Node"})
        if template not in nodes:
            raise InputError(f"no node named {template!r} to copy", field="template")
        copies = node_copies(nodes[template], count, set(nodes))
        slices = [d for d in self.scaled(self.current) if d.get("kind") == "ResourceSlice"]
        for text in self.current.added:
            slices += [d.body for d in parse_documents(text) if d.kind == "ResourceSlice"]
        copies += slice_copies(slices, template, [c["metadata"]["name"] for c in copies])
        text = yaml.safe_dump_all(copies, sort_keys=False)
        return self.edit(added=(*self.current.added, text), label=f"add {count} node(s) like {template}")

    def node_action(self, action: str, node: str) -> Run:
        """Cordon, drain or remove `node` (added to the nodes already given that action); `uncordon` etc. take it back."""
        undo = action.startswith("un")
        kind = action[2:] if undo else action
        if kind not in ("cordon", "drain", "remove"):
            raise InputError(f"unknown node action {action!r}; one of cordon, drain, remove", field="action")
        names = tuple(n for n in getattr(self.current, kind) if n != node) + (() if undo else (node,))
        return self.edit(**{kind: names, "label": f"{action} {node}"})

    def configure(self, text: str) -> Run:
        """Run with `text` as the scheduler configuration (validated first, as `kubefit config validate` does)."""
        validate_config(text, self.options.kube_version, self.options.feature_gates)
        return self.edit(config=text, label="apply the configuration")

    # ------------------------------------------------------------------ the export
    def export_yaml(self) -> str:
        """The scenario as it stands: one multi-document YAML (configuration, objects, pasted documents), with
        the node actions as the `kubefit simulate` options that reproduce the page."""
        edits = self.current
        actions = " ".join(f"--{k} {' '.join(getattr(edits, k))}" for k in ("cordon", "drain", "remove")
                           if getattr(edits, k))
        head = (f"# Exported by kubefit serve after: {edits.label}.\n"
                f"# Reproduce: kubefit simulate -f scenario.yaml {actions}".rstrip() + "\n")
        config = self.config_text(edits)
        texts = [yaml.safe_dump_all(self.scaled(edits), sort_keys=False), *(t.rstrip() + "\n" for t in edits.added)]
        return head + "---\n".join(([config.rstrip() + "\n"] if config else []) + texts)

    def close(self) -> None:
        """Remove the files written for the verbs (the server is stopping)."""
        import shutil

        shutil.rmtree(self.workdir, ignore_errors=True)

    def files_now(self) -> list[str]:
        """The current scenario's files (what the planning verbs and exports read)."""
        with self.lock:
            return self.files(self.current)


def read_files(files: Sequence[str], recursive: bool = False) -> list[Document]:
    """The documents of the files and folders given with -f, as the verbs read them (`-` is stdin, read here
    once: the session keeps its objects; a file named alone must hold some object, as `simulate` says)."""
    docs: list[Document] = []
    for given in files:
        paths = manifest_files(given, recursive=recursive)
        for path in paths:
            _check_size(path)
            docs += read_documents(path, allow_empty=len(paths) > 1 or path != str(given))
    return docs


def _check_size(path: str) -> None:
    """The session keeps every object it was given and writes them again for each run, so a file is read whole
    (at most `REFERENCE_MAX_BYTES`); the verbs themselves stream larger ones (a snapshot at Kubernetes' limits)."""
    size = os.path.getsize(path) if path != "-" and os.path.isfile(path) else 0
    if size > REFERENCE_MAX_BYTES:
        raise InputError(f"{size:,} bytes: kubefit serve keeps the scenario's objects in memory and reads at most "
                         f"{REFERENCE_MAX_BYTES >> 20} MiB a file; kubefit simulate, capacity and the other verbs "
                         "stream larger files", file=path)


def quiet(_: str) -> None:
    """The verbs' notes are in each result's ``warnings``: the page shows them there, nothing else is told."""


def _list_json(objects: list[dict[str, Any]]) -> bytes:
    return orjson.dumps({"apiVersion": "v1", "kind": "List", "items": objects})


def node_copies(template: dict[str, Any], count: int, taken: set[str]) -> list[dict[str, Any]]:
    """`count` Node manifests copied from `template`, named `<template>-<i>` (skipping names in `taken`), with
    their own `kubernetes.io/hostname` label, schedulable, without the original's identity fields."""
    meta = template.get("metadata") or {}
    out = []
    for name in copy_names(meta.get("name", "node"), count, taken):
        body = copy.deepcopy(template)
        body["metadata"] = {k: v for k, v in copy.deepcopy(meta).items()
                            if k not in ("uid", "resourceVersion", "creationTimestamp")}
        body["metadata"]["name"] = name
        body["metadata"]["labels"] = {**(meta.get("labels") or {}), HOSTNAME_LABEL: name}
        if isinstance(body.get("spec"), dict):
            body["spec"].pop("unschedulable", None)
        out.append(body)
    return out


def slice_copies(slices: list[dict[str, Any]], template: str, names: list[str]) -> list[dict[str, Any]]:
    """The node-local ResourceSlices of node `template` (`spec.nodeName`) for each copy in `names`, as `plan` copies
    a template's: `nodeName` the copy, slice and pool names renamed for it (`renamed_for`)."""
    own = [s for s in slices if isinstance(s.get("spec"), dict) and s["spec"].get("nodeName") == template]
    out = []
    for name in names:
        for s in own:
            body = copy.deepcopy(s)
            meta = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
            body["metadata"] = {k: v for k, v in meta.items() if k not in ("uid", "resourceVersion", "creationTimestamp")}
            body["metadata"]["name"] = renamed_for(str(meta.get("name", "")), template, name)
            body["spec"]["nodeName"] = name
            if isinstance(body["spec"].get("pool"), dict):
                body["spec"]["pool"]["name"] = renamed_for(str(body["spec"]["pool"].get("name", "")), template, name)
            out.append(body)
    return out


def final_places(result: Any) -> dict[str, str | None]:
    """Pod ns/name → the node its last step bound it to (None: pending), in queue order."""
    names = result.state.node_names
    return {s.pod.key: None if s.node is None else names[s.node] for s in result.steps}


def validate_config(text: str, kube_version: str | None = None, feature_gates: str | None = None) -> dict[str, Any]:
    """kube-scheduler's verdict on a configuration text (`kubefit config validate`): raises `InputError` with
    its one-line message when the YAML is bad, holds no configuration or kube-scheduler refuses it; else
    returns `{valid, notes, dialect}`."""
    from kubefit.k8s.version import resolve
    from kubefit.scheduler.config import verdict

    docs = [d for d in parse_documents(text, "configuration") if d.kind]
    configs = [d for d in docs if d.kind in SCHEDULER_CONFIG_KINDS]
    if len(configs) != 1 or len(docs) != 1:
        raise InputError("must hold exactly one KubeSchedulerConfiguration (or Policy) and nothing else, found "
                         + (", ".join(d.label for d in docs) or "none"), file="configuration")
    answer = verdict(configs[0], resolve(kube_version, feature_gates))
    if not answer["valid"]:
        raise InputError("; ".join(answer["messages"]), file="configuration")
    return answer
