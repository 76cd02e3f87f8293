"""`kubefit … --help` never cuts an option name or a word, at any terminal width (issue #46, item 8).

At the 80 columns of a default terminal, typer's rich table narrowed its columns until `kubefit simulate --help`
printed `--replace-vict…`, `--no-replace-v…` and `kubefit.io/dura…`: a user could not learn the flags. Every
command's help is rendered here at several widths, and each of its option names (and negative names) must
appear whole, with no "…" beyond those its own help texts write.
"""

from __future__ import annotations

import re

import pytest
import typer

from kubefit.cli import _register_verbs, app, main

WIDTHS = (40, 80, 100, 160)


def _commands() -> list[tuple[tuple[str, ...], object]]:
    """Every command and group of `kubefit`, with the words that name it."""
    _register_verbs()
    found = []

    def walk(path: tuple[str, ...], command: object) -> None:
        found.append((path, command))
        for name, sub in getattr(command, "commands", {}).items():
            walk((*path, name), sub)

    walk((), typer.main.get_command(app))
    return found


COMMANDS = _commands()


def _written(command: object) -> int:
    """How many "…" the command's own texts write (its help and its options' help)."""
    texts = [getattr(command, "help", "") or ""] + [getattr(p, "help", "") or "" for p in command.params]
    texts += [getattr(c, "short_help", "") or getattr(c, "help", "") or ""
              for c in getattr(command, "commands", {}).values()]
    return sum(t.count("…") for t in texts)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[" ".join(p) or "kubefit" for p, _ in COMMANDS])
def test_help_shows_every_option_name_whole(capsys, monkeypatch, path, command, width):
    monkeypatch.setenv("COLUMNS", str(width))
    monkeypatch.delenv("TERMINAL_WIDTH", raising=False)
    assert main([*path, "--help"]) == 0
    shown = capsys.readouterr().out
    names = [o for p in command.params if not getattr(p, "hidden", False)
             for o in (*p.opts, *getattr(p, "secondary_opts", ())) if o.startswith("--")]
    cut = [n for n in names if not re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", shown)]
    assert cut == [], f"{' '.join(path)} --help at {width} columns cuts {cut}"
    assert shown.count("…") <= _written(command), f"{' '.join(path)} --help at {width} columns cuts words"
