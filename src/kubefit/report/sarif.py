"""`kubefit check -o sarif` (and `--sarif FILE`): the findings as SARIF 2.1.0, the format GitHub code scanning
(`github/codeql-action/upload-sarif`) and other code-review tools read. Render only: from `-o json`'s data.

One run of the tool `kubefit`; a rule per assertion kind (`maxPending`, `fullyPlaced`, ...; `kubefitWarning` for
the warnings kubefit told about the scenario), each with its description; a result per finding of an assertion
that does not hold, at the file and line of the object that causes it (a finding without a file points at the
expectation file, else the first scenario file: code scanning needs a location), level `error` or `warning` (an
assertion of severity warning that only reports), with a fingerprint (assertion, object, version) that stays
the same from run to run so an alert is tracked, not raised again. Locations are URIs relative to the
repository (`%SRCROOT%`: `$GITHUB_WORKSPACE`, else the working folder). `tests/test_check_outputs.py` validates
the document against the OASIS schema.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any
from urllib.parse import quote

from kubefit.errors import printable
from kubefit.report.check import reported
from kubefit.report.github import workspace_path

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://github.com/kubefit/kubefit"
WARNING_RULE = "kubefitWarning"
DESCRIPTIONS = {  # rule id → (short, full): what holds when the assertion holds
    "maxPending": ("Pods left pending stay within the bound",
                   "kubefit simulate (kube-scheduler's own queue and plugins) leaves at most this many pods pending."),
    "fullyPlaced": ("Every pod of the workload is placed",
                    "kubefit simulate binds every pod of this workload (or this pod) to a node."),
    "maxNodesAdded": ("The nodes to add stay within the bound",
                      "kubefit plan adds at most this many nodes of the templates, and every pod fits on some count."),
    "minRemovableNodes": ("Enough nodes can be removed",
                          "kubefit consolidate finds at least this many nodes the workload can do without."),
    "minCapacity": ("Enough more copies fit", "kubefit capacity fits at least this many more copies of the workload "
                    "beside the scenario's own pods."),
    "minAllocation": ("The cluster's allocation reaches the bound",
                      "After kubefit simulate, requested / allocatable of the resource is at least this percentage."),
    "configValid": ("kube-scheduler accepts the configuration",
                    "The scenario's KubeSchedulerConfiguration passes kube-scheduler's own decoding and validation."),
    "maxPodMoves": ("Pods stay where the baseline placed them",
                    "At most this many pods are placed elsewhere than in the baseline."),
    "claimZones": ("Pods run in their volumes' zones",
                   "Every pod whose claim is bound to a zoned PersistentVolume runs in that zone."),
    "noWarnings": ("kubefit answers without warnings",
                   "kubefit told nothing about the scenario that could change an answer."),
    WARNING_RULE: ("A warning kubefit told about the scenario",
                   "Something the scenario holds that kubefit reads differently from the cluster, or not at all."),
}


def _uri(path: str) -> tuple[str, str | None]:
    """A file as a SARIF location URI: relative to the repository (with `%SRCROOT%`), else absolute (file:)."""
    path = printable(path)
    if os.path.isabs(path):
        return "file://" + quote(path), None
    return quote(path.replace(os.sep, "/")), "%SRCROOT%"


def _location(file: str | None, line: int | None) -> dict[str, Any]:
    uri, base = _uri(file or "")
    artifact = {"uri": uri, **({"uriBaseId": base} if base else {})}
    return {"physicalLocation": {"artifactLocation": artifact, **({"region": {"startLine": line}} if line else {})}}


def _fallback(data: dict, o: dict | None) -> str | None:
    """Where a finding without a file points: the expectation file, else the first scenario file."""
    if o is not None and o.get("source") and o["source"] != "command line":
        return o["source"]
    files = (data.get("inputs") or {}).get("files") or []
    return next((f for f in files if f != "-"), None)


def _fingerprint(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:32]


def _rule(rule_id: str) -> dict[str, Any]:
    short, full = DESCRIPTIONS[rule_id]
    name = rule_id[0].upper() + rule_id[1:]
    return {"id": rule_id, "name": name, "shortDescription": {"text": short}, "fullDescription": {"text": full},
            "helpUri": f"{INFORMATION_URI}#a-check-for-pull-requests-and-pre-commit",
            "defaultConfiguration": {"level": "warning" if rule_id == WARNING_RULE else "error"},
            "properties": {"tags": ["kubernetes", "scheduling"]}}


def sarif(data: dict) -> dict[str, Any]:
    """The SARIF 2.1.0 log of a check (one run)."""
    rules: list[str] = []
    results: list[dict[str, Any]] = []

    def result(rule_id: str, level: str, text: str, file: str | None, line: int | None, key: str) -> None:
        if rule_id not in rules:
            rules.append(rule_id)
        path = workspace_path(file) or file
        results.append({"ruleId": rule_id, "ruleIndex": rules.index(rule_id), "level": level,
                        "message": {"text": printable(text, keep="\n", limit=20_000)},
                        "locations": [_location(path, line)] if path else [],
                        "partialFingerprints": {"kubefitFinding/v1": _fingerprint(rule_id, key)}})

    for o in data["assertions"]:
        if o["status"] == "passed":
            continue
        level = "warning" if reported(o, data) else "error"
        version = o.get("kubeVersion") or ""
        for f in o.get("findings") or [{"file": None, "line": None, "object": None, "message": o["message"]}]:
            text = (f"{f['object']}: {f['message']}" if f.get("object") else f["message"])
            if text != o["message"]:
                text += f"\n{o['message']}"
            file, line = (f["file"], f.get("line")) if f.get("file") else (_fallback(data, o), None)
            result(o["assertion"], level, f"{o['title']}{f' (Kubernetes {version})' if version else ''}: {text}",
                   file, line, f"{o['title']}\x00{f.get('object') or ''}\x00{version}")
    for f in data.get("warningFindings") or []:
        file, line = (f["file"], f.get("line")) if f.get("file") else (_fallback(data, None), None)
        result(WARNING_RULE, "warning", f["message"], file, line, f["message"])
    kubefit = (data.get("inputs") or {}).get("kubefitVersion") or "unknown"
    driver = {"name": "kubefit", "informationUri": INFORMATION_URI, "version": kubefit,
              "rules": [_rule(r) for r in rules]}
    return {"$schema": SCHEMA, "version": "2.1.0",
            "runs": [{"tool": {"driver": driver}, "results": results,
                      "invocations": [{"executionSuccessful": True}],
                      "properties": {"passed": data["passed"], "summary": data["summary"]}}]}
