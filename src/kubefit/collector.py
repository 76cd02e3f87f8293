"""Python's cyclic garbage collector around the blocks that build what a run keeps: paused inside them and,
in the `kubefit` command, what they built frozen once they end.

kubefit's objects hold no reference cycles: parsed manifests, decoded objects, the engine's per-cycle
arrays and a simulation's steps are freed by reference counting. The cyclic collector nevertheless walks
every container allocated since its last pass, which is pure cost while a block allocates what lives on:
on a 155 MB List its passes took 4 of the 6 seconds of loading; over 10,000 pods of a simulation, 2–3 %.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

_freezing = [False]


def freeze_what_is_kept() -> None:
    """For a process that keeps what it builds until it exits (the `kubefit` command, one verb per run): each
    `kept` block then ends with `gc.freeze()`, so no later collection walks what it built (on 150,000 pods:
    0.5 s for the first collection after loading, ≈ 2 s of the engine's). Not for a library user: freezing
    also keeps any cyclic garbage of the process at that moment."""
    _freezing[0] = True


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off for a block, then as it was."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextlib.contextmanager
def kept() -> Iterator[None]:
    """A block building what the caller keeps: the collector paused (`collector_paused`) and, in the
    `kubefit` command (`freeze_what_is_kept`), the heap frozen when the block ends normally, before the
    collector resumes, so that its first pass does not walk what the block built either."""
    with collector_paused():
        yield
        if _freezing[0]:
            gc.freeze()
