"""What a verb told the user, carried by its result: the `warnings`, `nodeActions` and `inputs` keys of `-o json`."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

KUBE_SCHEDULER_VERSION = "v1.34.1"  # the kube-scheduler whose semantics the scheduler verbs reproduce
KARMADA_VERSION = "v1.19 pre-release f8fdd02"  # the Karmada the fleet verbs reproduce
# kubefit's own version: pyproject.toml's `[project] version` (tests/test_version_string.py keeps them equal); a
# constant, not `importlib.metadata`, which alone costs 40-60 ms of every command's start
KUBEFIT_VERSION = "0.1.0"


def told_keys(warnings: list[str] | None, node_actions: dict | None = None, inputs: dict | None = None) -> dict:
    """`{"warnings": [...], "nodeActions": {...}, "inputs": {...}}` for those a verb set (None: the key is left out).

    >>> told_keys(["a note"]), told_keys(None)
    ({'warnings': ['a note']}, {})
    """
    return {k: v for k, v in (("warnings", warnings), ("nodeActions", node_actions), ("inputs", inputs))
            if v is not None}


def inputs(files: Iterable[str | Path], system: str, options: dict[str, Any], *, reproduces: str | None = None,
           **more: Any) -> dict[str, Any]:
    """What a result was computed from: the files, the options that differ from none, the versions of
    kubefit and of the `system` reproduced ("kube-scheduler" or "karmada"), and `more` (the configuration).

    >>> inputs(["a.yaml"], "kube-scheduler", {"seed": 0, "drain": [], "recursive": False})["options"]
    {'seed': 0}
    """
    reproduces = reproduces or {"kube-scheduler": KUBE_SCHEDULER_VERSION, "karmada": KARMADA_VERSION}[system]
    return {"files": [str(f) for f in files], "kubefitVersion": KUBEFIT_VERSION, f"{_camel(system)}Version": reproduces,
            "options": {k: v for k, v in options.items() if not _unset(v)}, **more}


def _unset(value: Any) -> bool:
    """An option left at nothing: None, False or empty (0 is a value: `--seed 0`)."""
    return value is None or value is False or (isinstance(value, list | tuple | dict | str) and not value)


def _camel(name: str) -> str:
    head, *rest = name.split("-")
    return head + "".join(w.capitalize() for w in rest)
