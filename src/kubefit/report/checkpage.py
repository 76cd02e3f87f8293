"""The HTML report's page of `kubefit check`: the assertions and their verdicts, where each that does not hold
points (file, line, object) and its evidence, each workload before and after the change, and the pods the
candidate places differently from the baseline (drawn from `-o json`, nothing computed)."""

from __future__ import annotations

from typing import Any

from kubefit.checks.evaluate import CheckResult
from kubefit.report.check import answer, reported, verdict_line, where
from kubefit.report.html import Headline, Markup, Page, details, pointer, renders, section, table


@renders(CheckResult)
def check_page(data: dict[str, Any]) -> Page:
    """`kubefit check`: do the scheduling expectations hold?"""
    s = data["summary"]
    headline = [Headline("assertions hold", s["passed"], pointer("summary", "passed"), tone="good"),
                Headline("failed", s["failed"], pointer("summary", "failed"), tone="bad" if s["failed"] else ""),
                Headline("could not run", s["errors"], pointer("summary", "errors"), tone="bad" if s["errors"] else "")]
    rows = [("warning" if reported(o, data) else o["status"], o["title"], o.get("kubeVersion", ""), o["verb"],
             answer(o["actual"]), o["message"]) for o in data["assertions"]]
    sections = [section("Assertions", table(("verdict", "assertion", "version", "verb", "answer", "message"), rows),
                        anchor="assertions", note=verdict_line(data) + ".")]
    failed = [details(f"{o['title']}{' on ' + o['kubeVersion'] if o.get('kubeVersion') else ''}: {o['message']}",
                      table(("where", "what"), [(where(f), f["message"]) for f in o.get("findings", [])])
                      + table(("evidence",), [(line,) for line in o["evidence"]]), open_=True)
              for o in data["assertions"] if o["status"] != "passed"]
    if failed:
        sections.append(section("Evidence", *failed, anchor="evidence"))
    for version, change in (data.get("changes") or {}).items():
        keys = ("pods", "placed", "pending", "notCreated", "nodes", "cpu")
        rows = [(r["workload"], *(f"{r['baseline'][k]} → {r['candidate'][k]}" if r["baseline"][k] != r["candidate"][k]
                                  else r["baseline"][k] for k in keys)) for r in change["workloads"]]
        total = change["total"]
        rows.append(("total", *(f"{total['baseline'][k]} → {total['candidate'][k]}" for k in keys)))
        sections.append(section(f"Before → after ({version})", table(
            ("workload", "pods", "placed", "pending", "not created", "nodes", "cpu (m)"), rows),
            anchor=f"changes-{version}", note=f"{change['changed']} workload(s) change."))
    for version, moves in (data.get("moves") or {}).items():
        body = (table(("pod", "workload", "baseline", "candidate"), [
            (m["pod"], m.get("workload", ""), m["baseline"] or "pending", m["candidate"] or "pending") for m in moves])
                if moves else Markup("<p>Every pod of both runs lands where it landed in the baseline.</p>"))
        sections.append(section(f"Placed differently from the baseline ({version})", body, anchor=f"moves-{version}"))
    return Page("check", "Do the scheduling expectations hold?", headline, sections)
