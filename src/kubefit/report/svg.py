"""Charts as inline SVG for the HTML report: bars per node, sorted profiles, lines over time, bars per cluster.

Plain SVG written as text: no script, no font or file to fetch, vector in print, hover details from
SVG `<title>` elements (the browser's own tooltips). Every text that comes from the input (node,
cluster and configuration names) goes through `escape`. The charts draw the numbers they are given;
they scale them to pixels and never compute a result.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from kubefit.k8s.quantity import format_quantity
from kubefit.report.allocation import NodeUse

# Okabe-Ito: told apart by people with any common colour blindness, and in greyscale print by the dashes
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#8C6D1F", "#000000")
DASHES = ("", "6 3", "2 2", "8 3 2 3", "1 3", "10 4")
NAME_CHARS = 36  # longer names are cut on the chart (the tooltip has them whole)
MAX_POINTS = 4000  # a line with more samples is drawn through evenly spaced ones (the tables have them all)
ROW = 16  # pixels per node or cluster in a bar chart


def colour(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def _svg(width: float, height: float, body: list[str], label: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" aria-label="{escape(label)}" '
            f'width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}">'
            + "".join(body) + "</svg>")


def _text(x: float, y: float, text: str, *, anchor: str = "start", cls: str = "") -> str:
    klass = f' class="{cls}"' if cls else ""
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{klass}>{escape(text)}</text>'


def _short(name: str) -> str:
    return name if len(name) <= NAME_CHARS else name[: NAME_CHARS - 1] + "…"


def _name_width(names: Sequence[str]) -> float:
    return 12 + 7 * min(NAME_CHARS, max((len(n) for n in names), default=4))


def amount(resource: str, value: int) -> str:
    """A resource amount as people write it (`3500m`, `16Gi`, `4`)."""
    return format_quantity(resource, value)


def allocation_bars(uses: Sequence[NodeUse], resources: Sequence[str], *, marked: frozenset[str] = frozenset(),
                    label: str = "per-node allocation", taken: str = "requested") -> str:
    """One row per node (in the order given, names on the left), one column per resource: a bar as long
    as requested / allocatable, the percentage beside it, the amounts in the bar's tooltip (`taken`
    names the numerator there: "allocated" for devices). A node of `marked` is drawn in bold with a `+`
    (plan's added nodes, consolidate's removable ones); an overcommitted node's bar is red."""
    bar, col = 120, 175
    left = _name_width([u.name for u in uses]) + (12 if marked else 0)
    width, height = left + col * len(resources), 24 + ROW * len(uses)
    body = [_text(left + i * col, 14, r, cls="head") for i, r in enumerate(resources)]
    for row, use in enumerate(uses):
        y = 24 + row * ROW
        mark = "+ " if use.name in marked else ""
        body.append(f'<g><title>{escape(use.name)}</title>'
                    + _text(left - 8, y + 11, mark + _short(use.name), anchor="end",
                            cls="node added" if mark else "node") + "</g>")
        for i, r in enumerate(resources):
            x = left + i * col
            f = use.fraction(r)
            if f is None:
                body.append(_text(x, y + 11, "–", cls="none"))
                continue
            req, cap = use.requested.get(r, 0), use.allocatable[r]
            tip = f"{use.name} · {r}: {amount(r, req)} of {amount(r, cap)} {taken} ({100 * f:.1f} %)"
            fill = "#C0392B" if f > 1 else colour(i)
            body.append(f'<g><title>{escape(tip)}</title>'
                        f'<rect x="{x}" y="{y + 2}" width="{bar}" height="{ROW - 5}" class="track"/>'
                        f'<rect x="{x}" y="{y + 2}" width="{bar * min(f, 1.0):.1f}" height="{ROW - 5}" '
                        f'fill="{fill}"/>' + _text(x + bar + 5, y + 11, f"{100 * f:.0f}%", cls="pct") + "</g>")
    return _svg(width, height, body, label)


def _axes(x0: float, y0: float, w: float, h: float, y_max: float, y_label: str, ticks: int = 4,
          y_min: float = 0.0) -> list[str]:
    body = [f'<rect x="{x0}" y="{y0}" width="{w}" height="{h}" class="plot"/>']
    for k in range(ticks + 1):
        v = y_min + (y_max - y_min) * k / ticks
        y = y0 + h - h * k / ticks
        body.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x0 + w}" y2="{y:.1f}" class="grid"/>')
        body.append(_text(x0 - 4, y + 4, tick(v), anchor="end", cls="tick"))
    body.append(f'<text x="12" y="{y0 + h / 2:.1f}" transform="rotate(-90 12 {y0 + h / 2:.1f})" '
                f'text-anchor="middle" class="tick">{escape(y_label)}</text>')
    return body


def _polyline(xs: Sequence[float], ys: Sequence[float], i: int, title: str) -> str:
    points = " ".join(f"{x:.1f},{y:.1f}" for x, y in zip(xs, ys, strict=True))
    dash = f' stroke-dasharray="{DASHES[i % len(DASHES)]}"' if DASHES[i % len(DASHES)] else ""
    return (f'<polyline points="{points}" fill="none" stroke="{colour(i)}" stroke-width="1.6"{dash}>'
            f'<title>{escape(title)}</title></polyline>')


def _legend(x: float, y: float, names: Sequence[str], *, swatch: bool = False) -> list[str]:
    """One entry per name: its line (dash pattern and colour) or, for bars, a square of its colour."""
    body = []
    for i, name in enumerate(names):
        dash = DASHES[i % len(DASHES)]
        yy = y + 16 * i
        if swatch:
            body.append(f'<rect x="{x + 6}" y="{yy - 5}" width="10" height="10" fill="{colour(i)}"/>')
        else:
            pattern = f' stroke-dasharray="{dash}"' if dash else ""
            body.append(f'<line x1="{x}" y1="{yy}" x2="{x + 22}" y2="{yy}" stroke="{colour(i)}" stroke-width="2"{pattern}/>')
        body.append(_text(x + 28, yy + 4, _short(name), cls="legend"))
    return body


def _legend_width(names: Sequence[str]) -> float:
    return 40 + 7.5 * min(NAME_CHARS, max((len(n) for n in names), default=4))


def tick(v: float) -> str:
    """An axis label: `1.5`, `2000`, `7.52G` (SI prefixes from 10,000 on)."""
    for size, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e4, "k")):
        if abs(v) >= size:
            return f"{v / size:.3g}{prefix}"
    return f"{v:.4g}"


def _evenly(n: int) -> list[int]:
    """At most MAX_POINTS indices of 0..n-1, evenly spaced, first and last included."""
    if n <= MAX_POINTS:
        return list(range(n))
    return sorted({round(k * (n - 1) / (MAX_POINTS - 1)) for k in range(MAX_POINTS)})


def sorted_profile(resource: str, runs: Sequence[tuple[str, Sequence[NodeUse]]]) -> str:
    """For a large cluster, one resource: each run's nodes sorted from fullest to emptiest for that
    resource, allocated % against the node's rank (a curve that reaches 0 early is a run that leaves
    nodes free). Nodes offering none of the resource are left out."""
    w, h, x0, y0 = 300, 150, 44, 10
    lines, counts, top = [], [], 100.0
    for name, uses in runs:
        values = sorted((100 * f for f in (u.fraction(resource) for u in uses) if f is not None), reverse=True)
        counts.append(len(values))
        top = max(top, values[0] if values else 0)
        lines.append((name, values))
    n = max(counts, default=0)
    body = _axes(x0, y0, w, h, top, f"{resource} allocated %")
    for i, (name, values) in enumerate(lines):
        idx = _evenly(len(values))
        xs = [x0 + w * (k / max(n - 1, 1)) for k in idx]
        ys = [y0 + h - h * values[k] / top for k in idx]
        if xs:
            body.append(_polyline(xs, ys, i, f"{name}: {len(values)} nodes with {resource}"))
    body.append(_text(x0 + w / 2, y0 + h + 16, f"{n} nodes, fullest first", anchor="middle", cls="tick"))
    legend = _legend(x0 + w + 12, y0 + 8, [name for name, _ in runs]) if len(runs) > 1 else []
    width = x0 + w + (12 + _legend_width([name for name, _ in runs]) if legend else 10)
    return _svg(width, y0 + h + 24, body + legend, f"{resource}: sorted per-node allocation")


def line_chart(x: Sequence[float], series: dict[str, Sequence[float]], *, x_label: str, y_label: str,
               y_max: float | None = None, steps: bool = False) -> str:
    """Lines over a common x axis; beyond MAX_POINTS samples, through evenly spaced ones. `steps`: each
    value holds until the next sample (the timeline's metrics change only at events)."""
    w, h, x0, y0 = 560, 180, 52, 10
    top = y_max if y_max is not None else max([1.0, *(max(v, default=0) for v in series.values())])
    left, right = (x[0], x[-1]) if x else (0, 1)
    span = (right - left) or 1
    idx = _evenly(len(x))
    body = _axes(x0, y0, w, h, top, y_label)
    for i, (name, values) in enumerate(series.items()):
        xs = [x0 + w * (x[k] - left) / span for k in idx]
        ys = [y0 + h - h * min(values[k], top) / top for k in idx]
        if steps and xs:
            xs, ys = _stepped(xs, ys)
        body.append(_polyline(xs, ys, i, name))
    body.append(_text(x0, y0 + h + 16, tick(left), cls="tick"))
    body.append(_text(x0 + w, y0 + h + 16, tick(right), anchor="end", cls="tick"))
    body.append(_text(x0 + w / 2, y0 + h + 16, x_label, anchor="middle", cls="tick"))
    legend = _legend(x0 + w + 12, y0 + 8, list(series))
    width = x0 + w + 12 + _legend_width(list(series))
    return _svg(width, y0 + h + 24, body + legend, y_label)


def bars(labels: Sequence[str], series: Sequence[tuple[str, Sequence[int | None]]], *, label: str) -> str:
    """Horizontal bars, one group per label (a cluster, a node), one bar per series, the value printed
    beside it; None draws no bar ("–")."""
    values = [v for _, vs in series for v in vs if v is not None]
    top = max([1, *values])
    bar, left = 260, _name_width(labels)
    per = ROW * len(series) + 6
    body = []
    for row, name in enumerate(labels):
        y = 6 + row * per
        body.append(f'<g><title>{escape(name)}</title>' + _text(left - 8, y + 11, _short(name), anchor="end",
                                                                 cls="node") + "</g>")
        for i, (what, vs) in enumerate(series):
            v, yy = vs[row], y + i * ROW
            if v is None:
                body.append(_text(left, yy + 11, "–", cls="none"))
                continue
            length = bar * max(v, 0) / top
            body.append(f'<g><title>{escape(f"{name} · {what}: {v}")}</title>'
                        f'<rect x="{left}" y="{yy + 2}" width="{length:.1f}" height="{ROW - 4}" fill="{colour(i)}"/>'
                        + _text(left + length + 5, yy + 12, f"{v:,}", cls="pct") + "</g>")
    legend = _legend(left + bar + 80, 14, [s for s, _ in series], swatch=True) if len(series) > 1 else []
    width = left + bar + 80 + (_legend_width([s for s, _ in series]) if legend else 0)
    return _svg(width, 12 + per * len(labels), body + legend, label)


def _value_range(values: Sequence[float]) -> tuple[float, float]:
    """The y axis of values that may sit far from 0 (nodes used: 659 → 614): from 0 when the smallest is
    at most half the largest, else around them with a margin (the differences stay visible)."""
    low, high = min(values, default=0.0), max(values, default=0.0)
    if high <= 0 or (low >= 0 and low <= high / 2):
        return min(low, 0.0), max(high, 1.0)
    margin = max((high - low) / 10, abs(high) / 100, 0.5)
    return low - margin, high + margin


def trial_chart(values: Sequence[float], best_so_far: Sequence[float], tips: Sequence[str], *,
                marked: dict[int, str], y_label: str) -> str:
    """`kubefit tune`'s history: a dot per trial at its value (trial number across), the best value so
    far as a stepped line; the trials of `marked` (index → what they are: a baseline, the best) drawn as
    rings, a colour per kind, named in the legend. Beyond MAX_POINTS trials, dots of evenly spaced ones
    (the line keeps every change)."""
    w, h, x0, y0 = 560, 200, 56, 10
    n = len(values)
    low, high = _value_range([*values, *best_so_far])
    span, last = (high - low) or 1.0, max(n - 1, 1)

    def at(i: int, v: float) -> tuple[float, float]:
        return x0 + w * i / last, y0 + h - h * (v - low) / span
    body = _axes(x0, y0, w, h, high, y_label, y_min=low)
    for i in _evenly(n):
        x, y = at(i, values[i])
        body.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour(0)}" fill-opacity="0.75" class="trial">'
                    f"<title>{escape(tips[i])}</title></circle>")
    if n:
        changes = sorted({0, n - 1, *(i for i in range(1, n) if best_so_far[i] != best_so_far[i - 1])})
        xs, ys = _stepped(*zip(*(at(i, best_so_far[i]) for i in changes), strict=True))
        body.append(_polyline(xs, ys, 1, "best so far"))
    kinds = list(dict.fromkeys(marked.values()))
    for i, what in marked.items():
        x, y = at(i, values[i])
        body.append(_ring(x, y, 6, colour(2 + kinds.index(what)), f"{what}: {tips[i]}", cls=what))
    body.append(_text(x0, y0 + h + 16, "0", cls="tick"))
    body.append(_text(x0 + w, y0 + h + 16, str(max(n - 1, 0)), anchor="end", cls="tick"))
    body.append(_text(x0 + w / 2, y0 + h + 16, "trial", anchor="middle", cls="tick"))
    lx, ly = x0 + w + 12, y0 + 8
    legend = [f'<circle cx="{lx + 11}" cy="{ly}" r="3" fill="{colour(0)}"/>', _text(lx + 28, ly + 4, "trial", cls="legend"),
              f'<line x1="{lx}" y1="{ly + 16}" x2="{lx + 22}" y2="{ly + 16}" stroke="{colour(1)}" stroke-width="2" '
              f'stroke-dasharray="{DASHES[1]}"/>', _text(lx + 28, ly + 20, "best so far", cls="legend")]
    for k, what in enumerate(kinds):
        legend += [_ring(lx + 11, ly + 16 * (2 + k), 5, colour(2 + k)),
                   _text(lx + 28, ly + 16 * (2 + k) + 4, _short(what), cls="legend")]
    width = lx + _legend_width(["best so far", *kinds])
    return _svg(width, y0 + h + 24, body + legend, f"{y_label} per trial")


def _ring(x: float, y: float, r: float, stroke: str, title: str = "", cls: str = "") -> str:
    tip = f"<title>{escape(title)}</title>" if title else ""
    klass = f' class="{escape(cls)}"' if cls else ""
    return (f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r}" fill="none" stroke="{stroke}" stroke-width="2.2"{klass}>'
            f"{tip}</circle>")


def _stepped(xs: Sequence[float], ys: Sequence[float]) -> tuple[list[float], list[float]]:
    """The points of a line on which each value holds until the next sample: (x0, y0) (x1, y0) (x1, y1) …"""
    return ([xs[0], *(a for a in xs[1:] for _ in (0, 1))], [*(b for b in ys[:-1] for _ in (0, 1)), ys[-1]])
