"""Rendering results for people (rich tables, PNG plots, the HTML report) and programs (JSON/YAML);
reports never compute.

`write_html(result, path)` writes any verb's result as one self-contained HTML page
(`kubefit.report.htmlreport`; imported on first use, so a verb that writes no report does not load it).
"""

from typing import Any

__all__ = ["render_html", "write_html"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from kubefit.report import htmlreport

        return getattr(htmlreport, name)
    raise AttributeError(f"module 'kubefit.report' has no attribute {name!r}")
