"""`--help` that never cuts an option name or a word: typer's rich tables where they fit, click's plain help where not.

typer lays a command's options out as a rich table (names, short names, negative names, metavar, help) and rich
fits it to the terminal by narrowing its widest columns, then cutting what no longer fits with "…": at the 80
columns of a default terminal `kubefit simulate --help` printed `--replace-vict…` and `kubefit.io/dura…`. The
table keeps every cell whole when the terminal is at least as wide as its fixed columns plus a help column wide
enough for the longest word of any help text (rich narrows the widest column first: the help column, which then
never gets narrower than the name columns). Below that width the command's help is click's plain layout, which
puts a long option on its own line and wraps help text between words: nothing is ever cut.
"""

from __future__ import annotations

from typing import Any

PANEL = 4  # a rich Panel's two borders and its padding of one on each side
PADDING = 2  # typer's options table: padding (0, 1) between columns, none at the edges


def _cells(param: Any, ctx: Any) -> list[str]:
    """What typer puts in the fixed columns of an option's row: long names, short names, negative long and short
    names, metavar (`rich_utils._print_options_panel`)."""
    long_names = [o for o in param.opts if "--" in o]
    short_names = [o for o in param.opts if "--" not in o]
    negative_long = [o for o in getattr(param, "secondary_opts", ()) if "--" in o]
    negative_short = [o for o in getattr(param, "secondary_opts", ()) if "--" not in o]
    try:
        metavar = param.make_metavar(ctx=ctx)
    except TypeError:  # pragma: no cover - click before 8.2 takes no ctx
        metavar = param.make_metavar()
    if "bool" in str(metavar).lower():
        metavar = ""
    return [",".join(long_names), ",".join(short_names), ",".join(negative_long), ",".join(negative_short),
            str(metavar or "")]


def _words(text: str | None) -> int:
    """The longest word of a help text (rich cuts a word longer than its column)."""
    return max((len(w) for w in (text or "").split()), default=0)


def needed_width(command: Any, ctx: Any) -> int:
    """The terminal width typer's rich help of `command` needs to show every name and word whole."""
    params = [p for p in command.get_params(ctx) if not getattr(p, "hidden", False)]
    needed = 0
    if params:
        rows = [_cells(p, ctx) for p in params]
        widths = [max(len(row[i]) for row in rows) for i in range(5)]
        columns = 6 + any(getattr(p, "required", False) for p in params)
        fixed = sum(widths) + (1 if columns == 7 else 0)
        words = max([_words(getattr(p, "help", "")) for p in params] + [len(_default(p)) for p in params])
        needed = PANEL + fixed + max(words, *widths) + PADDING * (columns - 1)
    commands = getattr(command, "commands", {})
    if commands:
        names = max(len(name) for name in commands)
        words = max(_words(c.short_help or c.help) for c in commands.values())
        needed = max(needed, PANEL + names + PADDING + max(words, names))
    return needed


def _default(param: Any) -> str:
    """The longest word of `[default: X]` typer adds to an option's help."""
    default = getattr(param, "default", None)
    if default is None or callable(default) or not getattr(param, "show_default", True):
        return ""
    return max(str(default).split() or [""], key=len) + "]"


def plain_help_where_narrow(command: Any, width: int, ctx_class: Any) -> None:
    """Give `command` and each of its sub-commands whose rich help would not fit `width` click's plain help
    (`rich_markup_mode = None`: typer's `format_help` then defers to click's)."""
    ctx = ctx_class(command, info_name=command.name)
    if needed_width(command, ctx) > width:
        command.rich_markup_mode = None
    for sub in getattr(command, "commands", {}).values():
        plain_help_where_narrow(sub, width, ctx_class)
