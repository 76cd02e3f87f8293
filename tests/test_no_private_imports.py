"""kubefit uses typer, rich, matplotlib and kubernetes through their public names only."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "kubefit"
THIRD_PARTY = ("typer", "rich", "matplotlib", "kubernetes", "click", "numpy", "yaml", "orjson")


def private_imports(tree: ast.AST) -> list[str]:
    """Imported modules or names of the third-party packages that start with `_` (private by convention)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in THIRD_PARTY:
            parts = node.module.split(".") + [a.name for a in node.names]
            found += [node.module for p in parts if p.startswith("_") and not p.startswith("__")]
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] in THIRD_PARTY
                      and any(p.startswith("_") for p in a.name.split("."))]
    return found


def test_the_checker_sees_a_private_import():
    assert private_imports(ast.parse("from typer._click.exceptions import UsageError")) == ["typer._click.exceptions"]
    assert private_imports(ast.parse("from rich.console import _is_jupyter")) == ["rich.console"]
    assert private_imports(ast.parse("from rich.console import Console\nimport numpy as np")) == []


def test_no_module_of_kubefit_imports_a_private_name():
    offenders = {str(path.relative_to(SRC)): found for path in sorted(SRC.rglob("*.py"))
                 if (found := private_imports(ast.parse(path.read_text(encoding="utf-8"))))}
    assert offenders == {}
