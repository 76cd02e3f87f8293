"""`kubefit check` for people: one row per assertion (its verb, the answer, the verdict), then each failed one
with where it points and its evidence, and in baseline mode each workload before and after (render only: the
outcomes are `kubefit.checks.evaluate`'s)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubefit.errors import printable
from kubefit.report.output import new_table

if TYPE_CHECKING:
    from rich.console import Console

MARK = {"passed": "[green]pass[/green]", "failed": "[red]FAIL[/red]", "error": "[red]ERROR[/red]",
        "warning": "[yellow]warn[/yellow]"}
WORKLOAD_ROWS = 20  # workloads shown before and after; the rest are counted


def answer(value: object) -> str:
    """A verb's answer in a cell: yes/no for a boolean, – for none."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return "–" if value is None else str(value)


def reported(o: dict, data: dict) -> bool:
    """An assertion that does not hold but only reports (severity warning, `failOn: error`)."""
    return o["status"] != "passed" and o.get("severity") == "warning" and data["summary"].get("failOn") != "warning"


def mark(o: dict, data: dict) -> str:
    """The verdict's word: pass, FAIL, ERROR, or warn for a failed assertion that only reports."""
    return MARK["warning"] if reported(o, data) else MARK[o["status"]]


def title(data: dict) -> str:
    """`kubefit check: shop` (`kubefit check` alone when the expectations have no name)."""
    name = data["name"]
    return "kubefit check" + (f": {name}" if name and name != "kubefit check" else "")


def verdict_line(data: dict) -> str:
    """`3 of 4 assertions hold` (and how many failed, could not run, or failed as warnings)."""
    s = data["summary"]
    line = f"{s['passed']} of {s['assertions']} assertion{'s' if s['assertions'] != 1 else ''} hold"
    hard = [o for o in data["assertions"] if not reported(o, data)]
    failed = sum(1 for o in hard if o["status"] == "failed")
    errors = sum(1 for o in hard if o["status"] == "error")
    warned = len(data["assertions"]) - len(hard)
    if failed:
        line += f", {failed} failed"
    if errors:
        line += f", {errors} could not run"
    if warned:
        line += f", {warned} did not hold (severity warning)"
    return line


def where(finding: dict) -> str:
    """`cluster/apps.yaml:12 (shop/deployment/web)`: a finding's place."""
    place = finding["file"] or ""
    if place and finding.get("line"):
        place += f":{finding['line']}"
    if finding.get("object"):
        place = f"{place} ({finding['object']})" if place else finding["object"]
    return place


def check_table(console: Console, data: dict) -> None:
    """The assertions with their verdicts, the findings and evidence of each that does not hold, the workloads
    before and after the change, the verdict. Every text from the input is printable (a control character, a file
    name's byte that is no UTF-8, escaped)."""
    from rich.markup import escape as markup

    def escape(text: object) -> str:
        return markup(printable(str(text)))

    versions = any("kubeVersion" in o for o in data["assertions"])
    t = new_table(escape(title(data)))
    for col in ("", "assertion", *(("version",) if versions else ()), "verb", "answer"):
        t.add_column(col, justify="right" if col == "answer" else "left")
    for o in data["assertions"]:
        t.add_row(mark(o, data), escape(o["title"]), *((o.get("kubeVersion", ""),) if versions else ()), o["verb"],
                  escape(answer(o["actual"])))
    console.print(t)
    for o in data["assertions"]:
        if o["status"] == "passed":
            continue
        version = f" on {o['kubeVersion']}" if o.get("kubeVersion") else ""
        console.print(f"{mark(o, data)} {escape(o['title'])}{version}: {escape(o['message'])}", soft_wrap=True)
        located = [f for f in o.get("findings", []) if f.get("file") or f.get("object")]
        for f in located:
            console.print(f"  at {escape(where(f))}: {escape(f['message'])}", highlight=False, soft_wrap=True)
        said = {f"{f['object']}: {f['message']}" for f in located}
        for line in o["evidence"]:
            if line not in said:  # a finding's own words, said above with its place
                console.print(f"  {escape(line)}", highlight=False, soft_wrap=True)
    for version, change in (data.get("changes") or {}).items():
        changes_table(console, change, version if len(data["changes"]) > 1 else None)
    tone = "green" if data["passed"] else "red"
    console.print(f"[{tone}]{verdict_line(data)}[/{tone}]")


def figures_cell(before: dict, after: dict, key: str) -> str:
    """`3 → 5` (or `3` when unchanged)."""
    a, b = before.get(key, 0), after.get(key, 0)
    return str(a) if a == b else f"{a} → {b}"


def changes_table(console: Console, change: dict, version: str | None) -> None:
    """The workloads whose figures the change moves (and the cluster's total), baseline → candidate."""
    from rich.markup import escape as markup

    def escape(text: object) -> str:
        return markup(printable(str(text)))

    rows = [r for r in change["workloads"] if r["baseline"] != r["candidate"]]
    t = new_table("before → after" + (f" ({version})" if version else "") + f": {change['changed']} workload(s) change")
    for col in ("workload", "pods", "placed", "pending", "not created", "nodes", "cpu (m)"):
        t.add_column(col, justify="left" if col == "workload" else "right")
    for r in rows[:WORKLOAD_ROWS]:
        t.add_row(escape(r["workload"]), *(figures_cell(r["baseline"], r["candidate"], k)
                                           for k in ("pods", "placed", "pending", "notCreated", "nodes", "cpu")))
    if len(rows) > WORKLOAD_ROWS:
        t.add_row(f"… and {len(rows) - WORKLOAD_ROWS} more", "", "", "", "", "", "")
    total = change["total"]
    t.add_row("[bold]total[/bold]", *(figures_cell(total["baseline"], total["candidate"], k)
                                      for k in ("pods", "placed", "pending", "notCreated", "nodes", "cpu")))
    console.print(t)
