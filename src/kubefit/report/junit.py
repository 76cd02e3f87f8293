"""`kubefit check --junit FILE`: the outcomes as JUnit XML, the report CI systems (GitLab, Jenkins, Azure
Pipelines, GitHub test reporters) read: a test suite per Kubernetes version, a test case per assertion, a
`<failure>` with the evidence for one that does not hold and an `<error>` for one that could not run.

Written to the common JUnit schema (Jenkins' junit-10.xsd: `testsuites` › `testsuite` › `testcase`
› `failure`/`error`, the counts as attributes); `tests/fixtures/junit.xsd` holds the constraints the tests
validate it against.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from xml.etree import ElementTree as ET

if TYPE_CHECKING:
    from kubefit.checks.evaluate import CheckResult, Outcome


def _counts(element: ET.Element, outcomes: list[Outcome]) -> None:
    element.set("tests", str(len(outcomes)))
    element.set("failures", str(sum(1 for o in outcomes if o.status == "failed")))
    element.set("errors", str(sum(1 for o in outcomes if o.status == "error")))
    element.set("time", f"{sum(o.seconds for o in outcomes):.3f}")


def junit_xml(result: CheckResult) -> str:
    """The JUnit XML document of `result` (UTF-8 text with its declaration)."""
    root = ET.Element("testsuites", name=result.name)
    _counts(root, result.outcomes)
    suites: dict[str | None, list[Outcome]] = {}
    for outcome in result.outcomes:
        suites.setdefault(outcome.kube_version, []).append(outcome)
    for version, outcomes in suites.items():
        suite = ET.SubElement(root, "testsuite", name=result.name + (f" (Kubernetes {version})" if version else ""))
        _counts(suite, outcomes)
        suite.set("skipped", "0")
        for o in outcomes:
            a = o.assertion
            case = ET.SubElement(suite, "testcase", name=a.title, classname=f"kubefit.check.{a.verb.replace(' ', '-')}",
                                 time=f"{o.seconds:.3f}")
            if o.status != "passed":
                tag = "failure" if o.status == "failed" else "error"
                detail = ET.SubElement(case, tag, message=o.message, type=a.kind)
                detail.text = "\n".join([f"{a.source}: {a.field}", *o.evidence])
            out = ET.SubElement(case, "system-out")
            out.text = "\n".join([o.message, *o.evidence])
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
