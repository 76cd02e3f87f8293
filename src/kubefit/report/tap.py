"""`kubefit check -o tap`: the outcomes as TAP version 14 (the Test Anything Protocol `prove`, `tap-parser` and
many CI runners read): a test point per assertion, `ok` or `not ok`, its message, findings and evidence in the
point's YAML diagnostics block; an assertion of severity warning that only reports is `not ok … # TODO` (a
failure that does not fail the run). Render only: from `-o json`'s data. A description never holds a `#` (it
would start a directive) or a line break, unescaped."""

from __future__ import annotations

import yaml

from kubefit.errors import printable
from kubefit.report.check import reported, where


def _description(text: str) -> str:
    return printable(text, limit=500).replace("\\", "\\\\").replace("#", "\\#")


def tap(data: dict) -> str:
    """The TAP 14 document of a check."""
    out = ["TAP version 14", f"1..{len(data['assertions'])}"]
    for i, o in enumerate(data["assertions"], start=1):
        version = f" (Kubernetes {o['kubeVersion']})" if o.get("kubeVersion") else ""
        status = "ok" if o["status"] == "passed" else "not ok"
        line = f"{status} {i} - {_description(o['title'] + version)}"
        if reported(o, data):
            line += " # TODO severity warning: reported, not failed"
        out.append(line)
        diagnostics = {"verb": o["verb"], "status": o["status"], "severity": o.get("severity", "error"),
                       "message": printable(o["message"], limit=2000), "actual": o["actual"]}
        findings = [printable(f"{where(f)}: {f['message']}", limit=2000) for f in o.get("findings", [])
                    if f.get("file") or f.get("object")]
        if findings:
            diagnostics["at"] = findings
        if o["evidence"]:
            diagnostics["evidence"] = [printable(e, limit=2000) for e in o["evidence"]]
        block = yaml.safe_dump(diagnostics, sort_keys=False, allow_unicode=True, width=1_000_000)
        out += ["  ---", *(f"  {row}" for row in block.rstrip("\n").split("\n")), "  ..."]
    return "\n".join(out) + "\n"
