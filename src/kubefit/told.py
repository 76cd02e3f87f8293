"""What a verb told the user, carried by its result: the `warnings` and `nodeActions` keys of `-o json`."""

from __future__ import annotations


def told_keys(warnings: list[str] | None, node_actions: dict | None = None) -> dict:
    """`{"warnings": [...], "nodeActions": {...}}` for those a verb set (None: the key is left out).

    >>> told_keys(["a note"]), told_keys(None)
    ({'warnings': ['a note']}, {})
    """
    return {k: v for k, v in (("warnings", warnings), ("nodeActions", node_actions)) if v is not None}
