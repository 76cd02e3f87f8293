"""`write_html`: a result (what a `kubefit` verb function returns) → its page → one self-contained HTML file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubefit.report.checkpage  # noqa: F401  (registers the page of kubefit check)
import kubefit.report.pages  # noqa: F401  (registers the built-in pages)
import kubefit.report.rightsizepage  # noqa: F401  (registers the page of kubefit rightsize)
from kubefit.report.html import RENDERERS, Renderer, document


def renderer_for(result: Any) -> Renderer:
    """The page registered for `result`'s type (or the nearest base class)."""
    for cls in type(result).__mro__:
        if cls in RENDERERS:
            return RENDERERS[cls]
    known = ", ".join(sorted(t.__name__ for t in RENDERERS))
    raise TypeError(f"no HTML report for a {type(result).__name__} (reports exist for: {known})")


def write_html(result: Any, path: str | Path, *, data: dict[str, Any] | None = None) -> None:
    """Write `result` (what a `kubefit` verb function returns) as one self-contained HTML page.

    `data` is the result's `-o json` dict when the caller already has it (else `result.to_dict()`).

    >>> import kubefit, kubefit.report, tempfile, pathlib
    >>> result = kubefit.capacity(["examples/workload/cluster.yaml"], "report-0")
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "capacity.html"
    >>> kubefit.report.write_html(result, out)
    >>> '<span class="value" data-json="/count">2</span>' in out.read_text()
    True
    """
    Path(path).write_text(render_html(result, data=data), encoding="utf-8")


def render_html(result: Any, *, data: dict[str, Any] | None = None) -> str:
    """The page of `result` as text (see `write_html`)."""
    renderer = renderer_for(result)
    data = renderer.data(result) if data is None else data
    page = renderer.render(data)
    page.warnings = page.warnings or list(data.get("warnings") or [])
    page.inputs = page.inputs or data.get("inputs")
    return document(page)
