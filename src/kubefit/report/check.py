"""`kubefit check` for people: one row per assertion (its verb, the answer, the verdict), then each failed one
with its evidence (render only: the outcomes are `kubefit.checks.evaluate`'s)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubefit.report.output import new_table

if TYPE_CHECKING:
    from rich.console import Console

MARK = {"passed": "[green]pass[/green]", "failed": "[red]FAIL[/red]", "error": "[red]ERROR[/red]"}


def answer(value: object) -> str:
    """A verb's answer in a cell: yes/no for a boolean, – for none."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return "–" if value is None else str(value)


def verdict_line(data: dict) -> str:
    """`3 of 4 assertions hold` (and how many failed or could not run)."""
    s = data["summary"]
    line = f"{s['passed']} of {s['assertions']} assertion{'s' if s['assertions'] != 1 else ''} hold"
    if s["failed"]:
        line += f", {s['failed']} failed"
    if s["errors"]:
        line += f", {s['errors']} could not run"
    return line


def check_table(console: Console, data: dict) -> None:
    """The assertions with their verdicts, the evidence of each that does not hold, the verdict."""
    from rich.markup import escape

    versions = any("kubeVersion" in o for o in data["assertions"])
    name = data["name"]
    t = new_table("kubefit check" + (f": {escape(name)}" if name != "kubefit check" else ""))
    for col in ("", "assertion", *(("version",) if versions else ()), "verb", "answer"):
        t.add_column(col, justify="right" if col == "answer" else "left")
    for o in data["assertions"]:
        t.add_row(MARK[o["status"]], escape(o["title"]), *((o.get("kubeVersion", ""),) if versions else ()), o["verb"],
                  escape(answer(o["actual"])))
    console.print(t)
    for o in data["assertions"]:
        if o["status"] == "passed":
            continue
        version = f" on {o['kubeVersion']}" if o.get("kubeVersion") else ""
        console.print(f"{MARK[o['status']]} {escape(o['title'])}{version}: {escape(o['message'])}", soft_wrap=True)
        for line in o["evidence"]:
            console.print(f"  {escape(line)}", highlight=False, soft_wrap=True)
    tone = "green" if data["passed"] else "red"
    console.print(f"[{tone}]{verdict_line(data)}[/{tone}]")
