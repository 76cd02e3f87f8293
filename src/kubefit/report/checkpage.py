"""The HTML report's page of `kubefit check`: the assertions and their verdicts, the evidence of each that does not
hold, and the pods the candidate places differently from the baseline (drawn from `-o json`, nothing computed)."""

from __future__ import annotations

from typing import Any

from kubefit.checks.evaluate import CheckResult
from kubefit.report.check import answer, verdict_line
from kubefit.report.html import Headline, Markup, Page, details, pointer, renders, section, table


@renders(CheckResult)
def check_page(data: dict[str, Any]) -> Page:
    """`kubefit check`: do the scheduling expectations hold?"""
    s = data["summary"]
    headline = [Headline("assertions hold", s["passed"], pointer("summary", "passed"), tone="good"),
                Headline("failed", s["failed"], pointer("summary", "failed"), tone="bad" if s["failed"] else ""),
                Headline("could not run", s["errors"], pointer("summary", "errors"), tone="bad" if s["errors"] else "")]
    rows = [(o["status"], o["title"], o.get("kubeVersion", ""), o["verb"], answer(o["actual"]), o["message"])
            for o in data["assertions"]]
    sections = [section("Assertions", table(("verdict", "assertion", "version", "verb", "answer", "message"), rows),
                        anchor="assertions", note=verdict_line(data) + ".")]
    failed = [details(f"{o['title']}{' on ' + o['kubeVersion'] if o.get('kubeVersion') else ''}: {o['message']}",
                      table(("evidence",), [(line,) for line in o["evidence"]]), open_=True)
              for o in data["assertions"] if o["status"] != "passed"]
    if failed:
        sections.append(section("Evidence", *failed, anchor="evidence"))
    for version, moves in (data.get("moves") or {}).items():
        body = (table(("pod", "baseline", "candidate"), [(m["pod"], m["baseline"] or "pending",
                                                          m["candidate"] or "pending") for m in moves])
                if moves else Markup("<p>Every pod queued in both lands where it landed in the baseline.</p>"))
        sections.append(section(f"Placed differently from the baseline ({version})", body, anchor=f"moves-{version}"))
    return Page("check", "Do the scheduling expectations hold?", headline, sections)
