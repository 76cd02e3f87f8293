"""Print a result as JSON, YAML or a rich table, with the same content."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import yaml
from rich.console import Console

from kubefit.parse import escape_control


class SafeConsole(Console):
    """A rich Console whose text never carries the input's control characters (ESC, CR, …) to the terminal."""

    def render_str(self, text: str, **kwargs: Any) -> Any:
        return super().render_str(escape_control(text, keep="\n"), **kwargs)


def emit(data: dict[str, Any], fmt: str, table: Callable[[Console], None] | None = None) -> None:
    """Write `data` to stdout as `fmt` (json|yaml|table); `table` renders the people's view."""
    fmt = getattr(fmt, "value", fmt)
    if fmt == "json":
        json.dump(data, sys.stdout, indent=2)
        sys.stdout.write("\n")
    elif fmt == "yaml":
        yaml.safe_dump(data, sys.stdout, sort_keys=False, default_flow_style=False)
    else:
        console = SafeConsole(width=max(Console().width, 120) if sys.stdout.isatty() else 160)
        if table is None:
            console.print_json(json.dumps(data))
        else:
            table(console)
