"""`kubefit check` in a GitHub Actions job: an `::error` annotation per assertion that does not hold (shown on
the run and, with the file, on the pull request's diff) and a Markdown job summary (appended to the file
`$GITHUB_STEP_SUMMARY` names). Render only: the outcomes are `kubefit.checks.evaluate`'s.

Workflow commands escape as the Actions toolkit escapes them (`%`, CR, LF in the message; also `:` and `,`
in a property), so an input's text can never end the command early or start another.
"""

from __future__ import annotations

from html import escape

from kubefit.report.check import answer, verdict_line


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def annotations(data: dict) -> list[str]:
    """`::error file=…,title=…::message` for each assertion that failed or could not run; the file is the
    expectation file the assertion came from (else the first scenario file)."""
    files = (data.get("inputs") or {}).get("files") or []
    lines = []
    for o in data["assertions"]:
        if o["status"] == "passed":
            continue
        where = o["source"] if o["source"] != "command line" else (files[0] if files else "")
        version = f" (Kubernetes {o['kubeVersion']})" if o.get("kubeVersion") else ""
        title = f"kubefit check: {o['title']}{version}"
        message = "\n".join([o["message"], *o["evidence"]])
        props = ",".join(p for p in (f"file={_property(where)}" if where else "", f"title={_property(title)}") if p)
        lines.append(f"::error {props}::{_data(message)}")
    return lines


def _cell(text: object) -> str:
    """Text in a Markdown table cell: pipes escaped, one line."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def step_summary(data: dict) -> str:
    """The Markdown job summary: the verdict, a table of the assertions, the evidence of each that fails."""
    ok = data["passed"]
    out = [f"### {'✅' if ok else '❌'} kubefit check: {_cell(data['name'])}", "", verdict_line(data) + ".", "",
           "| | assertion | verb | answer | message |", "|---|---|---|---|---|"]
    for o in data["assertions"]:
        mark = {"passed": "✅", "failed": "❌", "error": "⚠️"}[o["status"]]
        version = f" ({o['kubeVersion']})" if o.get("kubeVersion") else ""
        out.append(f"| {mark} | {_cell(o['title'])}{version} | {o['verb']} | {_cell(answer(o['actual']))} | "
                   f"{_cell(o['message'])} |")
    for o in data["assertions"]:
        if o["status"] != "passed" and o["evidence"]:
            out += ["", f"<details><summary>{escape(o['title'])}: evidence</summary>", "", "```text",
                    *(line.replace("```", "` ` `") for line in o["evidence"]), "```", "</details>"]
    return "\n".join(out) + "\n"
