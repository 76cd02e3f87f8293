"""Print a result as JSON, YAML or a rich table, with the same content."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

from kubefit.errors import escape_control


def _safe_console(console: type[Console]) -> type[Console]:
    """A rich Console whose text never carries the input's control characters (ESC, CR, …) to the terminal."""

    class SafeConsole(console):  # type: ignore[misc, valid-type]
        def render_str(self, text: str, **kwargs: Any) -> Any:
            return super().render_str(escape_control(text, keep="\n"), **kwargs)

    return SafeConsole


def emit(data: dict[str, Any], fmt: str, table: Callable[[Console], None] | None = None) -> None:
    """Write `data` to stdout as `fmt` (json|yaml|table); `table` renders the people's view."""
    fmt = getattr(fmt, "value", fmt)
    if fmt == "json":
        text = _json_bytes(data)
        out = getattr(sys.stdout, "buffer", None)
        if text is not None and out is not None and str(getattr(sys.stdout, "encoding", "")).lower() in UTF8:
            sys.stdout.flush()  # orjson's UTF-8 as it is: not decoded, then encoded again (3 copies of 170 MB)
            out.write(text)
            out.write(b"\n")
            return
        sys.stdout.write(to_json(data))
        sys.stdout.write("\n")
    elif fmt == "yaml":
        import yaml  # (-o yaml only: -o json and the tables start without PyYAML)

        yaml.safe_dump(data, sys.stdout, sort_keys=False, default_flow_style=False)
    else:
        from rich.console import Console  # only tables need rich: -o json/yaml start faster

        console = _safe_console(Console)(width=max(Console().width, 120) if sys.stdout.isatty() else 160)
        if table is None:
            console.print_json(json.dumps(data))
        else:
            table(console)


def new_table(title: str) -> Table:
    """A rich table titled on the left, as every report draws them (rich is imported only for tables)."""
    from rich.table import Table

    return Table(title=title, title_justify="left")


UTF8 = ("utf-8", "utf8")


def _json_bytes(data: Any) -> bytes | None:
    """`to_json`'s text as orjson writes it (UTF-8), or None where the standard encoder writes it."""
    try:
        import orjson

        return orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS)
    except (ImportError, TypeError):
        return None


def to_json(data: Any) -> str:
    """`json.dumps(data, indent=2)`, written by orjson when it can (10x faster on large results).

    orjson keeps non-ASCII text as UTF-8 where `json` escapes it; values beyond its types (integers over
    64 bits) fall back to the standard encoder.
    """
    text = _json_bytes(data)
    return json.dumps(data, indent=2) if text is None else text.decode()
