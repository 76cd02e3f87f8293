"""The outputs the README shows (blocks after `<!-- kubefit-output: ARGS -->`) are what kubefit prints."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from kubefit.cli import main

ROOT = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"<!-- kubefit-output: (.*?) -->\n```text\n(.*?)```", re.S)


def shown_outputs() -> list[tuple[str, str]]:
    return MARKER.findall((ROOT / "README.md").read_text(encoding="utf-8"))


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.rstrip("\n").splitlines()]


def test_the_readme_shows_outputs():
    assert len(shown_outputs()) >= 4


@pytest.mark.parametrize(("command", "shown"), shown_outputs(), ids=[c for c, _ in shown_outputs()])
def test_readme_output_is_what_kubefit_prints(command, shown, monkeypatch, capsys):
    """The block is the start of the output (or, for `| tail -N`, its last N lines), line by line; a command
    the README shows failing says its exit code (`(exit 2)` after it)."""
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("KUBEFIT_KUBE_VERSION")  # what a user sees: the default version (tests/conftest.py)
    command, _, code = command.partition(" (exit ")
    args, _, tail = command.partition("| tail -")
    rc = main(shlex.split(args))
    out = _lines(capsys.readouterr().out)
    expected = _lines(shown)
    assert rc == (int(code.rstrip(")")) if code else 0)
    got = out[-int(tail):] if tail else out[:len(expected)]
    assert got == expected
