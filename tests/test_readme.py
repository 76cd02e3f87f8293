"""Every `kubefit …` command shown in the README runs (from the repository root) and succeeds."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from kubefit.cli import main

ROOT = Path(__file__).resolve().parents[1]


def readme_commands() -> list[str]:
    """`kubefit` command lines of the README's ```sh blocks (continuations joined, comments dropped)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = []
    for block in re.findall(r"```(?:sh|bash)\n(.*?)```", text, flags=re.S):
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            line = line.split("  #")[0].strip()
            if line.startswith("kubefit "):
                commands.append(line)
    return commands


COMMANDS = readme_commands()


def check_serve(args: list[str]) -> None:
    """`kubefit serve …` starts (on a free port), prints its URL and answers the page there."""
    import subprocess
    import sys
    import urllib.request

    proc = subprocess.Popen([sys.executable, "-m", "kubefit.cli", *args, "--port", "0"], cwd=ROOT,
                            stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()
        assert "open http://127.0.0.1:" in line, line + proc.stderr.read()
        url = line.split("open ", 1)[1].split()[0]
        with urllib.request.urlopen(url, timeout=60) as page:
            assert page.status == 200 and b"kubefit serve" in page.read()
    finally:
        proc.terminate()
        proc.wait(10)


def test_the_readme_shows_commands():
    assert len(COMMANDS) >= 8


@pytest.mark.parametrize("command", COMMANDS)
def test_readme_command_runs(command, monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(ROOT)
    args = shlex.split(command)[1:]
    if args[0] == "serve":  # a server: started, its page fetched, stopped
        check_serve(args)
        return
    for option in ("--plot", "--report"):  # files go to a temporary directory, not into the checkout
        if option in args:
            i = args.index(option) + 1
            args[i] = str(tmp_path / Path(args[i]).name)
    rc = main(args)
    out, err = capsys.readouterr()
    assert rc == 0, f"{command}\n{err}"
    assert out.strip()
    if "--plot" in args:
        assert Path(args[args.index("--plot") + 1]).read_bytes()[:4] == b"\x89PNG"
    if "--report" in args:
        assert Path(args[args.index("--report") + 1]).read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
