"""`kubefit check` in a GitHub Actions job: annotations at the manifest lines a pull request changes, a Markdown
job summary, and the step's outputs. Render only: the outcomes are `kubefit.checks.evaluate`'s.

- `annotations`: an `::error` per finding of an assertion that does not hold (`::warning` for one of severity
  warning that only reports), at the file and line of the object that causes it (the workload, the node, the
  configuration; else the assertion's own line in the expectation file), and a `::warning` per warning kubefit
  told about the scenario, at the object it names. GitHub shows at most 10 error and 10 warning annotations of a
  step: past 9 of a level the 10th says how many more there are, and the job summary lists them all. A file is
  named relative to `$GITHUB_WORKSPACE` (the repository), as annotations need it to appear in the diff.
- Workflow commands escape as the Actions toolkit escapes them (`%`, CR, LF in the message; also `:` and `,` in a
  property); other control characters and bytes that are no UTF-8 are written escaped (`\\x1b`), and a message is
  cut at `MESSAGE_CHARS`: an input's text can never end a command early, start another, or break the log.
- `step_summary`: the verdict, every assertion, the findings and evidence of each (those that hold folded), and
  in baseline mode the workloads before and after.
- `outputs`: `passed`, `failed`, `errors`, `warnings`, `summary` (a copy of the Markdown summary's path), for the
  steps after (`$GITHUB_OUTPUT`).
"""

from __future__ import annotations

import os
from html import escape

from kubefit.errors import printable
from kubefit.report.check import answer, reported, title, verdict_line, where

ANNOTATIONS = 10  # GitHub shows at most this many annotations of each level per step
MESSAGE_CHARS = 4000  # an annotation's message is cut past this (GitHub shows about as much)
TITLE_CHARS = 200


def _data(text: str) -> str:
    text = printable(text, keep="\r\n", limit=MESSAGE_CHARS)
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(printable(text, limit=TITLE_CHARS)).replace(":", "%3A").replace(",", "%2C")


def workspace_path(file: str | None) -> str | None:
    """`file` as GitHub names it: relative to `$GITHUB_WORKSPACE` when it lies there (else as given); a git
    baseline's `REF:path` is no file of the checkout (None)."""
    if not file or (":" in file and not os.path.exists(file)):
        return None
    root = os.environ.get("GITHUB_WORKSPACE")
    if root:
        full = os.path.abspath(file)
        if os.path.commonpath([full, os.path.abspath(root)]) == os.path.abspath(root):
            return os.path.relpath(full, root)
    return file


def command(level: str, message: str, title_: str, file: str | None = None, line: int | None = None) -> str:
    """One workflow command: `::error file=F,line=L,title=T::message`."""
    path = workspace_path(file)
    props = [f"file={_property(path)}" if path else "", f"line={line}" if path and line else "",
             f"title={_property(title_)}"]
    return f"::{level} {','.join(p for p in props if p)}::{_data(message)}"


def _findings(data: dict) -> tuple[list[str], list[str]]:
    """The error and warning commands of the assertions that do not hold, each finding one."""
    errors, warnings = [], []
    for o in data["assertions"]:
        if o["status"] == "passed":
            continue
        version = f" (Kubernetes {o['kubeVersion']})" if o.get("kubeVersion") else ""
        head = f"kubefit check: {o['title']}{version}"
        level, into = ("warning", warnings) if reported(o, data) else ("error", errors)
        for f in o.get("findings") or [{"file": None, "line": None, "object": None, "message": o["message"]}]:
            said = f"{f['object']}: {f['message']}" if f.get("object") else f["message"]
            if said != o["message"]:
                said += "\n" + o["message"]
            into.append(command(level, said, head, f.get("file"), f.get("line")))
    return errors, warnings


def _told(data: dict) -> list[str]:
    """A `::warning` per warning kubefit told, at the object it names (`warningFindings`) when it names one."""
    located = data.get("warningFindings") or [{"file": None, "line": None, "message": m} for m in
                                              data.get("warnings") or []]
    return [command("warning", f["message"], "kubefit: warning", f.get("file"), f.get("line")) for f in located]


def _capped(lines: list[str], level: str) -> list[str]:
    """At most `ANNOTATIONS` of a level: the 10th says how many more the job summary lists."""
    if len(lines) <= ANNOTATIONS:
        return lines
    rest = len(lines) - (ANNOTATIONS - 1)
    more = command(level, f"{rest} more {level}s: the job summary and -o json list them all",
                   f"kubefit check: {rest} more {level}s")
    return [*lines[:ANNOTATIONS - 1], more]


def annotations(data: dict) -> list[str]:
    """The workflow commands of a check: errors then warnings, at most `ANNOTATIONS` of each level."""
    errors, warnings = _findings(data)
    return _capped(errors, "error") + _capped(warnings + _told(data), "warning")


def _cell(text: object) -> str:
    """Text in a Markdown table cell: one line, pipes and HTML escaped."""
    return escape(printable(str(text), limit=500)).replace("|", "\\|")


def _block(lines: list[str]) -> list[str]:
    return ["```text", *(printable(line, limit=2000).replace("```", "` ` `") for line in lines), "```"]


def step_summary(data: dict) -> str:
    """The Markdown job summary: the verdict, a table of the assertions, the findings and evidence of each (those
    that hold folded), and the workloads before and after the change."""
    ok = data["passed"]
    out = [f"### {'✅' if ok else '❌'} {_cell(title(data))}", "", _cell(verdict_line(data)) + ".", "",
           "| | assertion | verb | answer | message |", "|---|---|---|---|---|"]
    for o in data["assertions"]:
        icon = "⚠️" if reported(o, data) or o["status"] == "error" else {"passed": "✅", "failed": "❌"}[o["status"]]
        version = f" ({o['kubeVersion']})" if o.get("kubeVersion") else ""
        out.append(f"| {icon} | {_cell(o['title'])}{_cell(version)} | {o['verb']} | {_cell(answer(o['actual']))} | "
                   f"{_cell(o['message'])} |")
    for o in data["assertions"]:
        lines = [f"at {where(f)}: {f['message']}" for f in o.get("findings", []) if f.get("file") or f.get("object")]
        lines += o["evidence"]
        if not lines:
            continue
        state = "" if o["status"] == "passed" else " open"
        version = f" ({o['kubeVersion']})" if o.get("kubeVersion") else ""
        out += ["", f"<details{state}><summary>{_cell(o['title'])}{_cell(version)}: "
                    f"{'evidence' if o['status'] == 'passed' else 'why'}</summary>", "", *_block(lines), "</details>"]
    for version, change in (data.get("changes") or {}).items():
        out += ["", *_changes(change, version if len(data["changes"]) > 1 else None)]
    if data.get("warnings"):
        out += ["", f"<details><summary>kubefit's warnings ({len(data['warnings'])})</summary>", "",
                *_block(data["warnings"]), "</details>"]
    return "\n".join(out) + "\n"


def _changes(change: dict, version: str | None) -> list[str]:
    """The workloads before → after as a Markdown table (those that change, then the total)."""
    from kubefit.report.check import WORKLOAD_ROWS, figures_cell

    keys = ("pods", "placed", "pending", "notCreated", "nodes", "cpu")
    rows = [r for r in change["workloads"] if r["baseline"] != r["candidate"]]
    out = [f"**Before → after{f' ({version})' if version else ''}**: {change['changed']} workload(s) change", "",
           "| workload | pods | placed | pending | not created | nodes | cpu (m) |", "|---|---|---|---|---|---|---|"]
    out += [f"| {_cell(r['workload'])} | " + " | ".join(figures_cell(r["baseline"], r["candidate"], k) for k in keys)
            + " |" for r in rows[:WORKLOAD_ROWS]]
    if len(rows) > WORKLOAD_ROWS:
        out.append(f"| … and {len(rows) - WORKLOAD_ROWS} more | | | | | | |")
    total = change["total"]
    out.append("| **total** | " + " | ".join(figures_cell(total["baseline"], total["candidate"], k) for k in keys)
               + " |")
    return out


def outputs(data: dict, summary_path: str | None) -> str:
    """The step's outputs, as `$GITHUB_OUTPUT` takes them (`name=value` lines)."""
    s = data["summary"]
    values = {"passed": str(data["passed"]).lower(), "failed": str(s["failed"]), "errors": str(s["errors"]),
              "warnings": str(s.get("warnings", 0)), "summary": summary_path or ""}
    return "".join(f"{k}={printable(v)}\n" for k, v in values.items())
