"""The progress display on a terminal (stderr): bars while large files load and while long work runs (the pods of a
simulation, consolidate's candidates, tune's trials), and `plan`'s line saying each simulation of its search.
Nothing is drawn on a pipe."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

PROGRESS_MIN_PODS = 2000  # shorter runs finish before a bar is worth drawing
LOADING_MIN_BYTES = 16 << 20  # smaller files load in well under a second


@contextmanager
def progress_bars(files: list[str], runs: int = 1, minimum: int | None = None) -> Iterator[tuple[Any, Any]]:
    """On a terminal: one rich display with a bar per large file while loading (together LOADING_MIN_BYTES
    or more) and a bar per run while working (`minimum` steps or more in all: pods, default PROGRESS_MIN_PODS,
    or candidates); else no callbacks.

    Yields the verbs' `loading` (file, done, total) and `progress` ((label,) done, total) callbacks; the
    display opens at the first bar worth drawing. A search (`plan`) tells (label, done, total or None while
    unknown, what to say): drawn always, the bar's text replaced by what it says.
    """
    if not sys.stderr.isatty():
        yield None, None
        return
    size = sum(os.path.getsize(f) for f in files if f != "-" and os.path.isfile(f))
    with ExitStack() as stack:
        bars: list = []
        tasks: dict[str, int] = {}

        def draw(label: str, done: int, total: int | None, description: str | None = None) -> None:
            if not bars:
                bars.append(stack.enter_context(progress_display()))
            if label not in tasks:
                tasks[label] = bars[0].add_task(description or label, total=total)
            bars[0].update(tasks[label], completed=done, total=total, description=description or label)

        def loading(path: str, done: int, total: int) -> None:
            draw(f"loading {path}", done, total)

        def progress(*args) -> None:
            if len(args) == 4:  # (label, done, about how many in all or None, what to say): a search (`plan`)
                draw(*args)
                return
            label, done, total = args if len(args) == 3 else ("scheduling", *args)
            if total * runs >= (PROGRESS_MIN_PODS if minimum is None else minimum):
                draw(str(label), done, total)
        yield (loading if size >= LOADING_MIN_BYTES else None), progress


def progress_display():
    """The transient rich progress display on stderr."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                    console=Console(stderr=True), transient=True)


@contextmanager
def loading_progress(files: list[str]):
    """The loading bars alone (see `progress_bars`): a callback on a terminal for large files, else None."""
    with progress_bars(files) as (loading, _):
        yield loading
