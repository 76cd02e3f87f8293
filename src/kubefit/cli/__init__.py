"""The `kubefit` command: kubectl-like verbs over the same functions as the Python API.

Each family of verbs lives in its own module (`cli/scheduler.py`, `cli/config.py`, `cli/karmada.py`,
`cli/cluster.py`) and registers on `app`; this module holds the shared options and error handling.
"""

from __future__ import annotations

import sys
from enum import Enum
from typing import Annotated

import typer

from kubefit.errors import KubefitError

app = typer.Typer(
    name="kubefit",
    help="Where do these pods go, and how much more fits? kube-scheduler v1.34 and Karmada, exactly.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """Where do these pods go, and how much more fits? kube-scheduler v1.34 and Karmada, exactly."""


class OutputFormat(str, Enum):
    table = "table"
    json = "json"
    yaml = "yaml"


FilesOption = Annotated[list[str], typer.Option("-f", "--filename", help="Scenario file(s): YAML, JSON or kind: List; '-' is stdin.")]
OutputOption = Annotated[OutputFormat, typer.Option("-o", "--output", help="table for people, json/yaml for programs.")]


def warn(message: str) -> None:
    """A note for the user on stderr (never mixed into -o json/yaml output)."""
    print(f"warning: {message}", file=sys.stderr)


def _register_verbs() -> None:
    """Import the verb modules; each adds its commands to `app`."""
    # One import per family; a module missing here simply has no verbs yet.
    import importlib

    for module in ("scheduler", "config", "karmada", "cluster", "simulate", "config_convert", "fleet"):
        try:
            importlib.import_module(f"kubefit.cli.{module}")
        except ModuleNotFoundError as exc:
            if exc.name != f"kubefit.cli.{module}":
                raise


def main(argv: list[str] | None = None) -> int:
    """Entry point: run a verb; bad input becomes one clear line on stderr and exit 2."""
    _register_verbs()
    try:
        app(args=argv, prog_name="kubefit")  # standalone: usage errors print and exit 2
    except KubefitError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())


def run() -> None:
    """Console-script entry: exit with `main`'s code."""
    sys.exit(main())
