"""`kubefit check --junit FILE` (and `-o junit`): the outcomes as JUnit XML, the report CI systems (GitLab,
Jenkins, Azure Pipelines, GitHub test reporters) read: a test suite per Kubernetes version, a test case per
assertion, a `<failure>` with the findings and evidence for one that does not hold and an `<error>` for one that
could not run (one of severity warning that only reports passes, its verdict in `<system-err>`).

Written to the common JUnit schema (Jenkins' junit-10.xsd: `testsuites` › `testsuite` › `testcase`
› `failure`/`error`, the counts as attributes, the suite's `timestamp` and `hostname`); `tests/fixtures/junit.xsd`
holds the constraints the tests validate it against. Test cases of two versions differ in `classname`
(`kubefit.check.v1_37.simulate`) and name, as reporters key a test by both. Every text is XML 1.0's: a control
character or a byte that is no UTF-8 in an input's text is written escaped (`\\x1b`), never raw (which no XML
parser reads), and names are cut at `NAME_CHARS`.
"""

from __future__ import annotations

import re
import socket
from typing import TYPE_CHECKING
from xml.etree import ElementTree as ET

from kubefit.errors import printable

if TYPE_CHECKING:
    from kubefit.checks.evaluate import CheckResult, Outcome

NAME_CHARS = 500
TEXT_CHARS = 20_000
_NOT_XML = re.compile("[\ufffe\uffff]")  # characters XML 1.0 has no place for, besides the controls


def _text(text: str, limit: int = TEXT_CHARS) -> str:
    text = printable(text, keep="\t\n", limit=limit)
    return _NOT_XML.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def _name(text: str) -> str:
    return _text(text, NAME_CHARS)


def _counts(element: ET.Element, outcomes: list[Outcome], fail_on: str) -> None:
    element.set("tests", str(len(outcomes)))
    element.set("failures", str(sum(1 for o in outcomes if o.status == "failed" and o.fails(fail_on))))
    element.set("errors", str(sum(1 for o in outcomes if o.status == "error" and o.fails(fail_on))))
    element.set("time", f"{sum(o.seconds for o in outcomes):.3f}")


def _classname(verb: str, version: str | None) -> str:
    """`kubefit.check.simulate`, or with the version when several are judged: `kubefit.check.v1_37.simulate`."""
    kind = verb.replace(" ", "-")
    return f"kubefit.check.v{version.replace('.', '_')}.{kind}" if version else f"kubefit.check.{kind}"


def junit_xml(result: CheckResult) -> str:
    """The JUnit XML document of `result` (UTF-8 text with its declaration)."""
    root = ET.Element("testsuites", name=_name(result.name))
    _counts(root, result.outcomes, result.fail_on)
    suites: dict[str | None, list[Outcome]] = {}
    for outcome in result.outcomes:
        suites.setdefault(outcome.kube_version, []).append(outcome)
    host = _name(socket.gethostname())
    for version, outcomes in suites.items():
        suite = ET.SubElement(root, "testsuite", name=_name(result.name + (f" (Kubernetes {version})" if version else "")))
        _counts(suite, outcomes, result.fail_on)
        suite.set("skipped", "0")
        suite.set("timestamp", result.started)
        suite.set("hostname", host)
        seen: dict[str, int] = {}
        for o in outcomes:
            a = o.assertion
            name = a.title + (f" (Kubernetes {version})" if version else "")
            seen[name] = seen.get(name, 0) + 1
            if seen[name] > 1:  # the same assertion twice: reporters key a test case by its name
                name += f" #{seen[name]}"
            case = ET.SubElement(suite, "testcase", name=_name(name), classname=_classname(a.verb, version),
                                 time=f"{o.seconds:.3f}")
            lines = [f"at {f.file or ''}{f':{f.line}' if f.line else ''} ({f.object}): {f.message}"
                     if f.object else f"at {f.file or a.source}: {f.message}" for f in o.findings]
            if o.fails(result.fail_on):
                tag = "failure" if o.status == "failed" else "error"
                detail = ET.SubElement(case, tag, message=_name(o.message), type=a.kind)
                detail.text = _text("\n".join([f"{a.source}: {a.field}", *lines, *o.evidence]))
            elif o.status != "passed":
                ET.SubElement(case, "system-err").text = _text("\n".join(
                    [f"warning (severity warning): {o.message}", *lines]))
            out = ET.SubElement(case, "system-out")
            out.text = _text("\n".join([o.message, *o.evidence]))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
