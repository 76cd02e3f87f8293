"""Verbs over one cluster: `score` (more to come: simulate, capacity)."""

from __future__ import annotations

from kubefit.cli import app


@app.command()
def version() -> None:
    """Print kubefit's version and the versions of the systems it reproduces."""
    from importlib.metadata import version as pkg_version

    print(f"kubefit {pkg_version('kubefit')} (kube-scheduler v1.34.1, Karmada v1.19 pre-release f8fdd02)")
