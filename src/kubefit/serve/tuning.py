"""`kubefit tune` in the background for the planning page: one run at a time, its trials done, a stop.

The run is `kubefit.verbs.tune` on a copy of the scenario's files and its cordon, drain and remove as they
stood when it started (edits made meanwhile do not change what it reads), with the session's version and
tie-break options; its `progress`
callback records the trials done, and raises `Stopped` at the next batch once a stop is asked. The page
polls `status()`; the result is the verb's own `-o json` headline, configuration file and HTML report.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kubefit.errors import InputError, KubefitError, shorten

DEFAULTS = {"objective": "pending", "trials": 16, "batch": 4, "workers": 1}  # a short search, in this process
MAX_WORKERS = 64  # local worker processes the page may start


class Stopped(Exception):
    """Raised from the progress callback: the page asked the run to stop."""


def settings(data: dict[str, Any]) -> dict[str, Any]:
    """The page's tune settings (defaults for those not given), refused before anything runs as the verb
    refuses them: the objective's name, the trials and the batch."""
    from kubefit.planning.objectives import objective
    from kubefit.planning.tune import check_settings

    out = {**DEFAULTS, **{k: v for k, v in data.items() if k in DEFAULTS and v not in (None, "")}}
    for name in ("trials", "batch", "workers"):
        if not isinstance(out[name], int) or isinstance(out[name], bool):
            raise InputError(f"must be an integer, got {shorten(str(out[name]), 20)}", field=name)
    if not 1 <= out["workers"] <= MAX_WORKERS:
        raise InputError(f"must be within 1..{MAX_WORKERS}, got {out['workers']}", field="workers")
    objective(str(out["objective"]))
    check_settings(out["trials"], out["batch"], "first", None)
    return out


def start(job: dict[str, Any], files: list[str], workdir: Path, run: Callable[..., Any],
          finish: Callable[[Any], dict[str, Any]]) -> threading.Thread:
    """Copy `files` into `workdir` and run `run(copies, progress)` in a daemon thread, recording in `job` its
    progress and how it ended: `finish(result)`'s fields when done, the message when it failed."""
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    copies = [str(shutil.copy(f, workdir / f"{i}-{Path(f).name}")) for i, f in enumerate(files)]
    stop: threading.Event = job["stop"]

    def progress(done: int, total: int) -> None:
        job.update(done=done, total=total)
        if stop.is_set():
            raise Stopped

    def work() -> None:
        try:
            job.update(finish(run(copies, progress)), state="done")
        except Stopped:
            job.update(state="stopped")
        except KubefitError as exc:
            job.update(state="failed", error=str(exc))
        except Exception as exc:  # never a traceback for the page
            job.update(state="failed", error=f"internal error: {type(exc).__name__}: {shorten(str(exc), 200)} "
                                             "(please report)")
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    thread = threading.Thread(target=work, daemon=True, name="kubefit-serve-tune")
    thread.start()
    return thread


def status(job: dict[str, Any] | None) -> dict[str, Any]:
    """What the page shows of the run: its state, trials done of planned, and when done its result; with the
    objectives tune knows and the page's defaults, for its form."""
    from kubefit.planning.objectives import OBJECTIVES

    form = {"objectives": list(OBJECTIVES), "defaults": DEFAULTS}
    if job is None:
        return {"state": "idle", **form}
    return {**{k: v for k, v in job.items() if k != "stop"}, **form}
