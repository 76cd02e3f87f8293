"""`kubefit config validate|view`: a scheduler configuration as kube-scheduler of each version reads it."""

from __future__ import annotations

from typing import Annotated

import typer

from kubefit.cli import KubeVersionOption, OutputFormat, SchedulerGatesOption, app, name_some, warn
from kubefit.errors import InputError, escape_control
from kubefit.manifests.documents import Document, read_documents
from kubefit.manifests.kinds import FLEET_KINDS, SCHEDULER_CONFIG_KINDS
from kubefit.manifests.load import Scenario
from kubefit.manifests.scenario import add_document
from kubefit.report.output import emit
from kubefit.scheduler.config import V1, load_configuration
from kubefit.scheduler.config import verdict as config_verdict
from kubefit.scheduler.config.dialects import print_notes

config_app = typer.Typer(no_args_is_help=True, help="Check and show scheduler configurations.")
app.add_typer(config_app, name="config")
# `kubefit config convert` (old dialects → v1) lives in kubefit/cli/config_convert.py and registers on
# `config_app` (the command imports both modules for the `config` verbs: cli.FAMILY_OF_VERB).

ConfigFileOption = Annotated[str, typer.Option("-f", "--filename", help="File holding one KubeSchedulerConfiguration (any version) or Policy.")]


def config_document(path: str) -> Document | None:
    """The one scheduler configuration in `path`, or None when the file holds none (kube-scheduler defaults)."""
    every = read_documents(path, allow_empty=False)
    for doc in every:  # other objects of a scenario may come along; unknown or kind-less ones are reported
        if doc.kind not in (*SCHEDULER_CONFIG_KINDS, "Node", "Pod", *FLEET_KINDS):
            add_document(Scenario(), doc)
    docs = [d for d in every if d.kind in SCHEDULER_CONFIG_KINDS]
    others = [f"{d.source}: {d.label}" for d in every if d.kind not in SCHEDULER_CONFIG_KINDS]
    if others:  # a scenario's nodes, pods, fleet objects: said, not dropped silently
        warn(f"kubefit config reads only the scheduler configuration, not {name_some(others)}; ignored")
    if len(docs) > 1:
        raise InputError(f"expected at most one KubeSchedulerConfiguration or Policy, found {len(docs)} "
                         f"(the first is {docs[0].label})", file=path, obj=docs[1].label)
    return docs[0] if docs else None


ConfigVersionsOption = Annotated[str | None, typer.Option(
    "--kube-version", help="The Kubernetes version(s) to check against: 1.34 … 1.37, several separated by commas, "
    "or all; default: $KUBEFIT_KUBE_VERSION, else the newest.")]


@config_app.command("validate")
def validate(
    filename: ConfigFileOption,
    kube_version: ConfigVersionsOption = None,
    feature_gates: SchedulerGatesOption = None,
    output: Annotated[OutputFormat, typer.Option("-o", "--output", help="table (lines), json or yaml.")] = OutputFormat.table,
) -> None:
    """Check a configuration the way kube-scheduler does: prints "valid" or its messages (exit 2), for one
    version or several (`--kube-version 1.34,1.37`, `all`), each with that version's defaults and messages.

    An older apiVersion (or a legacy Policy) is checked as that version was, and the answer says that
    kube-scheduler reads only v1 and how to convert the file."""
    from kubefit.k8s.version import resolve_each

    versions = resolve_each(kube_version, feature_gates)
    doc = config_document(filename)
    if doc is None:
        raise InputError("no KubeSchedulerConfiguration or Policy to validate (a file without one means "
                         "kube-scheduler's defaults: see `kubefit config view`)", file=filename)
    verdicts = {f"{v.name}": {"patch": v.patch, **config_verdict(doc, v)} for v in versions}
    valid = all(v["valid"] for v in verdicts.values())
    if output != OutputFormat.table:
        emit({"file": filename, "valid": valid, "versions": verdicts}, output.value)
    elif len(verdicts) == 1:
        _print_verdict(filename, next(iter(verdicts.values())), versions[0].patch)
    else:
        for name, verdict in verdicts.items():
            print(f"{name} ({verdict['patch']}): " + ("valid" if verdict["valid"] else "invalid"))
            for message in verdict["messages"]:
                print(f"  {escape_control(message)}")
    if not valid:
        raise typer.Exit(2)


def _print_verdict(filename: str, verdict: dict, patch: str) -> None:
    """One version's verdict as lines: "valid" (with the notes), or the messages."""
    if not verdict["valid"]:
        print(escape_control(f"{filename}: invalid scheduler configuration:"))
        for message in verdict["messages"]:
            print(f"  {escape_control(message)}")
        return
    for note in verdict["notes"]:
        print(f"note: {escape_control(note)}")
    if verdict["dialect"] in ("v1", "default"):
        print("valid")
        return
    old = "a legacy Policy" if verdict["dialect"] == "Policy" else f"{V1.rsplit('/', 1)[0]}/{verdict['dialect']}"
    print(f"valid as {old}")
    print(escape_control(f"note: kube-scheduler {patch} loads only {V1} (it refuses {old}); "
                         f"convert the file with: kubefit config convert -f {filename}"))


@config_app.command("view")
def view(
    filename: ConfigFileOption,
    output: Annotated[OutputFormat, typer.Option("-o", "--output", help="yaml or json.")] = OutputFormat.yaml,
    kube_version: KubeVersionOption = None,
    feature_gates: SchedulerGatesOption = None,
) -> None:
    """Print the effective v1 configuration after kube-scheduler's defaulting (of `--kube-version`)."""
    from kubefit.k8s.version import resolve

    config = load_configuration(config_document(filename), resolve(kube_version, feature_gates))
    print_notes(config.notes)  # what the conversion and defaulting chose, on stderr
    fmt = "json" if output == OutputFormat.json else "yaml"
    emit(config.effective or {}, fmt)
