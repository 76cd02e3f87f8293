"""The HTML report's building blocks: pages registered by result type, sections, tables, the document.

A page is drawn from a result's `-o json` dict (the same numbers, nothing computed): the renderer of
the result's type (`renders`; the built-in ones are in `kubefit.report.pages`) turns the dict into a
`Page` — title, the question, headline numbers, sections of HTML — and `document` wraps it with the
inlined stylesheet and script (`report/assets/`), charts being inline SVG (`kubefit.report.svg`);
`kubefit.report.write_html` puts the two together. The page loads nothing: a Content-Security-Policy
allows no source at all beyond its own style and script, pinned by their hashes, so neither a missed
escape nor a link can reach the network or run a script.

Adding a page for a new result type is one function::

    from kubefit.report.html import Page, renders

    @renders(ConsolidateResult)           # the type `kubefit.consolidate` returns
    def consolidate_page(data: dict) -> Page:   # data = result.to_dict(), what `-o json` prints
        return Page("consolidate", "Which nodes can go?", headline=[...], sections=[...])

in a module that `kubefit.report.htmlreport` imports (the built-in pages are `kubefit.report.pages`).

Every text from the input goes through `esc` (or `table`, `section`, ... which call it); `Markup` marks
HTML already built.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from html import escape
from importlib.resources import files
from typing import Any


class Markup(str):
    """HTML built by this module's helpers: inserted as it is (every other value is escaped)."""


def esc(value: Any) -> Markup:
    """`value` as HTML text: `<`, `>`, `&` and both quotes escaped."""
    return value if isinstance(value, Markup) else Markup(escape(str(value), quote=True))


def number(value: Any) -> str:
    """A JSON number as the report prints it: integers with thousands separators, decimals as they are."""
    if isinstance(value, bool) or value is None:
        return "–" if value is None else str(value).lower()
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def pointer(*path: str | int) -> str:
    """The JSON Pointer (RFC 6901) of a value in the `-o json` dict: `pointer("metrics", "nodesUsed")`."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


@dataclass
class Headline:
    """A headline number: its label, its value and where `-o json` holds it (a JSON Pointer)."""

    label: str
    value: Any
    at: str  # pointer(...) into the result's dict
    unit: str = ""
    tone: str = ""  # "bad" (pending pods, a failed check), "good", or ""
    group: str = ""  # cards of one group (a configuration) are drawn together under its name


@dataclass
class Page:
    """What a renderer makes of a result: the verb, the question it answers, the headline, the sections."""

    verb: str
    question: str
    headline: list[Headline] = field(default_factory=list)
    sections: list[Markup] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    inputs: dict[str, Any] | None = None


@dataclass
class Renderer:
    render: Callable[[dict[str, Any]], Page]
    data: Callable[[Any], dict[str, Any]]


RENDERERS: dict[type, Renderer] = {}


def renders(result_type: type, data: Callable[[Any], dict[str, Any]] | None = None):
    """Register the decorated function as the page of `result_type`; it receives `data(result)`, by
    default `result.to_dict()` (what `-o json` prints), and returns a `Page`."""
    def register(render: Callable[[dict[str, Any]], Page]) -> Callable[[dict[str, Any]], Page]:
        RENDERERS[result_type] = Renderer(render, data or (lambda result: result.to_dict()))
        return render
    return register


# --------------------------------------------------------------------------- building blocks

def table(headers: Sequence[str], rows: Iterable[Sequence[Any]], *, numeric: Iterable[int] = (),
          cls: str = "") -> Markup:
    """A table; cells are escaped unless `Markup`; columns in `numeric` are right-aligned (and numbers
    printed with `number`). Clicking a header sorts by that column (the page's script)."""
    right = set(numeric)
    head = "".join(f'<th{" class=num" if i in right else ""}>{esc(h)}</th>' for i, h in enumerate(headers))
    body = []
    for row in rows:
        cells = []
        for i, value in enumerate(row):
            text = value if isinstance(value, Markup) else esc(number(value) if i in right else value)
            cells.append(f'<td class="num">{text}</td>' if i in right else f"<td>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    klass = f' class="{esc(cls)}"' if cls else ""
    return Markup(f'<div class="scroll"><table{klass}><thead><tr>{head}</tr></thead>'
                  f'<tbody>{"".join(body)}</tbody></table></div>')


def section(title: str, *parts: str, anchor: str, note: str = "") -> Markup:
    """A titled section of the page (listed in its table of contents)."""
    intro = f'<p class="note">{esc(note)}</p>' if note else ""
    return Markup(f'<section id="{esc(anchor)}"><h2>{esc(title)}</h2>{intro}{"".join(parts)}</section>')


def details(summary: str, body: str, *, open_: bool = False) -> Markup:
    """A collapsible block (opened for printing by the page's script)."""
    return Markup(f'<details{" open" if open_ else ""}><summary>{esc(summary)}</summary>{body}</details>')


def paragraph(*parts: Any, cls: str = "") -> Markup:
    klass = f' class="{esc(cls)}"' if cls else ""
    return Markup(f"<p{klass}>" + "".join(esc(p) for p in parts) + "</p>")


def value(v: Any, at: str, unit: str = "") -> Markup:
    """A number of the result, tagged with its JSON Pointer (the browser tests compare it with `-o json`)."""
    return Markup(f'<span class="value" data-json="{esc(at)}">{esc(number(v))}{esc(unit)}</span>')


def code(text: str, *, copy: bool = True) -> Markup:
    """A block of text to copy (YAML, a command), with a copy button."""
    button = '<button type="button" class="copy">copy</button>' if copy else ""
    return Markup(f'<div class="code">{button}<pre>{esc(text)}</pre></div>')


def figure(svg: str, caption: str = "", *, title: str = "") -> Markup:
    """A chart with a title above it and a caption below (both optional)."""
    head = f"<h3>{esc(title)}</h3>" if title else ""
    cap = f"<figcaption>{esc(caption)}</figcaption>" if caption else ""
    return Markup(f'<figure class="chart-box">{head}{svg}{cap}</figure>')


# --------------------------------------------------------------------------- the document

def _asset(name: str) -> str:
    return files("kubefit.report").joinpath("assets", name).read_text(encoding="utf-8")


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def _warnings(warnings: Sequence[str]) -> str:
    if not warnings:
        return ""
    shown = "".join(f"<li>{esc(w)}</li>" for w in warnings)
    return (f'<aside class="warnings" role="alert"><h2>{len(warnings)} warning{"s" if len(warnings) != 1 else ""}'
            f"</h2><ul>{shown}</ul></aside>")


def _headline(items: Sequence[Headline]) -> str:
    if not items:
        return ""
    groups: dict[str, list[Headline]] = {}
    for h in items:
        groups.setdefault(h.group, []).append(h)
    blocks = []
    for name, group in groups.items():
        cards = "".join(f'<div class="card {esc(h.tone)}"><div class="big">{value(h.value, h.at, h.unit)}</div>'
                        f'<div class="label">{esc(h.label)}</div></div>' for h in group)
        blocks.append(f'<div class="group"><div class="group-name">{esc(name)}</div><div class="cards">{cards}</div></div>'
                      if name else cards)
    return f'<section id="headline" class="headline">{"".join(blocks)}</section>'


def _inputs(inputs: dict[str, Any] | None) -> str:
    """Files, versions, options and the scheduler configuration(s) with strategy and weights."""
    if not inputs:
        return ""
    rows = [("files", ", ".join(inputs.get("files") or []) or "–")]
    rows += [(f"{name} version", v) for name, v in _versions(inputs)]
    rows += [("feature gates", gates) for gates in [_feature_gates(inputs)] if gates]
    rows += [(k, _option(v)) for k, v in (inputs.get("options") or {}).items()]
    parts = [table(("input", "value"), rows, cls="inputs")]
    configs = ([{"name": "", **inputs["configuration"]}] if inputs.get("configuration")
               else inputs.get("configurations") or [])
    if configs:
        parts.append(configuration_table(configs))
    return section("Inputs", *parts, anchor="inputs")


SYSTEMS = {"kubefitVersion": "kubefit", "kubeSchedulerVersion": "kube-scheduler", "karmadaVersion": "Karmada"}


def _versions(inputs: dict[str, Any]) -> list[tuple[str, str]]:
    """(system, version) of kubefit and of the system it reproduces (the Kubernetes version answered for,
    `kubeVersion`, is the kube-scheduler patch reproduced: named once, as `kube-scheduler v1.37.0`)."""
    out = [(SYSTEMS.get(k, k.removesuffix("Version")), v) for k, v in inputs.items()
           if k.endswith("Version") and isinstance(v, str)]
    kube = inputs.get("kubeVersion")
    if isinstance(kube, dict) and kube.get("patch") and kube["patch"] != inputs.get("kubeSchedulerVersion"):
        out.append(("Kubernetes", str(kube["patch"])))
    return out


def _feature_gates(inputs: dict[str, Any]) -> str:
    """The feature gates set for the version answered for (`--feature-gates`), as kube-scheduler takes them."""
    kube = inputs.get("kubeVersion")
    gates = kube.get("featureGates") if isinstance(kube, dict) else None
    return ",".join(f"{name}={str(on).lower()}" for name, on in (gates or {}).items())


def _option(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    return ", ".join(map(str, v)) if isinstance(v, list) else str(v)


def configuration_table(configs: Sequence[dict[str, Any]]) -> Markup:
    """Per configuration and profile: source, scoring strategy, its resource weights, score plugin weights."""
    rows = []
    for c in configs:
        for p in c["profiles"]:
            strategy = p.get("scoringStrategy") or {}
            shape = (strategy.get("requestedToCapacityRatio") or {}).get("shape")
            rows.append((c.get("name") or c["source"], c["source"], p["schedulerName"], strategy.get("type", "–"),
                         ", ".join(f"{r['name']} {r['weight']}" for r in strategy.get("resources", [])) or "–",
                         ", ".join(f"{s['utilization']}→{s['score']}" for s in shape or []) or "–",
                         ", ".join(f"{k} {v}" for k, v in p["scorePlugins"].items()) or "none"))
    return table(("configuration", "source", "profile", "scoring strategy", "resource weights", "shape",
                  "score plugins (weight)"), rows, cls="config")


def document(page: Page) -> str:
    """The whole HTML file of `page`: inlined style and script, a policy that forbids every other source."""
    css, js = _asset("report.css"), _asset("report.js")
    policy = (f"default-src 'none'; style-src {_hash(css)}; script-src {_hash(js)}; img-src data:; "
              "base-uri 'none'; form-action 'none'")
    inputs = page.inputs or {}
    gates = _feature_gates(inputs)
    versions = " · ".join([f"{name} {v}" for name, v in _versions(inputs)] + ([f"feature gates {gates}"] if gates else []))
    files_ = ", ".join(inputs.get("files") or [])
    body = [_warnings(page.warnings), _headline(page.headline), *page.sections, _inputs(page.inputs)]
    toc = "".join(f'<a href="#{esc(a)}">{esc(t)}</a>' for a, t in _toc(body))
    return ("<!DOCTYPE html>\n"
            '<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{esc(policy)}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>kubefit {esc(page.verb)}{esc(' — ' + files_) if files_ else ''}</title>"
            f"<style>{css}</style></head><body>"
            f'<header><h1>kubefit {esc(page.verb)}</h1><p class="question">{esc(page.question)}</p>'
            f'<p class="meta">{esc(files_)}{esc(" · " if files_ and versions else "")}{esc(versions)}</p>'
            f'<nav>{toc}</nav></header><main>{"".join(body)}</main>'
            '<footer>Written by kubefit. Every number on this page is the one <code>-o json</code> prints for '
            "the same command; the charts only scale and order them.</footer>"
            f"<script>{js}</script></body></html>\n")


def _toc(parts: Sequence[str]) -> list[tuple[str, str]]:
    """(anchor, title) of each section, for the navigation bar."""
    import re

    out = []
    for part in parts:
        m = re.match(r'<section id="([^"]*)"[^>]*><h2>(.*?)</h2>', part)
        if m:
            out.append((Markup(m.group(1)), Markup(m.group(2))))
    return out
