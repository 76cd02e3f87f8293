"""Where `kubefit tune` runs its trials: Dask workers, of a `distributed.LocalCluster` sized to this
machine or of an existing cluster reached by its scheduler's address.

The compiled workload is scattered to every worker once (`Client.scatter(..., broadcast=True)`); a trial
is then one task naming it and a configuration, run as one simulation where the data already is.
Results come back in the order the trials were submitted, whichever worker finished first.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from kubefit.errors import InputError

CONNECT_TIMEOUT = "30s"  # reaching an existing scheduler, and waiting for its first worker
PROBE_TIMEOUT = 10  # seconds: a TCP connection to the scheduler's port, before Dask's own handshake


def machine_workers() -> int:
    """The cores this process may run on (one single-threaded worker process each)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _kubefit_version() -> str:
    """Run on a worker (and here): the version of kubefit installed there. Sent by reference (this module's
    name), so a worker that cannot import kubefit fails to even load it."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("kubefit")
    except PackageNotFoundError:  # run from a source tree
        return "unknown"


class Workers:
    """A Dask client for the trials: `with Workers(address, count) as w: ...` starts a LocalCluster of
    `count` single-threaded worker processes (one in-process worker for `count == 1`), or connects to the
    scheduler at `address` (tcp://HOST:PORT; its workers must import kubefit); closed on exit."""

    def __init__(self, address: str | None = None, count: int | None = None) -> None:
        if address is not None and count is not None:
            raise InputError("give either a Dask scheduler address or a number of local workers, not both",
                             field="--workers")
        if count is not None and count < 1:
            raise InputError(f"must be at least 1, got {count}", field="--workers")
        self.address, self.requested = address, count
        self.client: Any = None
        self.cluster: Any = None

    def __enter__(self) -> Workers:
        import logging

        from distributed import Client, LocalCluster

        if self.address is None:
            n = self.requested or machine_workers()
            where = {"processes": True, "host": "127.0.0.1"} if n > 1 else {"processes": False}  # in-process: inproc://
            # CRITICAL: a worker's heartbeat racing the shutdown logs a traceback at ERROR; a trial that fails
            # reaches this process as the task's exception anyway
            self.cluster = LocalCluster(n_workers=n, threads_per_worker=1, dashboard_address="127.0.0.1:0",
                                        silence_logs=logging.CRITICAL, **where)
            self.client = Client(self.cluster)
            return self
        _probe(self.address)
        try:
            self.client = Client(self.address, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError, ValueError) as exc:
            raise InputError(f"cannot reach the Dask scheduler at {self.address!r}: {exc}",
                             field="--dask-scheduler") from None
        try:
            self.client.wait_for_workers(1, timeout=CONNECT_TIMEOUT)
            versions = self.client.run(_kubefit_version)
        except Exception as exc:  # noqa: BLE001 - a worker without kubefit fails inside Dask, whatever the type
            self.close()
            raise InputError(f"the Dask cluster at {self.address!r} cannot run kubefit trials (no worker, or "
                             f"kubefit not importable on its workers: {type(exc).__name__}: {exc})",
                             field="--dask-scheduler") from None
        _check_versions(versions, self.address)
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None
        if self.cluster is not None:
            self.cluster.close()
            self.cluster = None

    @property
    def count(self) -> int:
        """Workers connected now."""
        return len(self.client.scheduler_info(n_workers=-1)["workers"])

    def ship(self, data: Any) -> Any:
        """`data` on every worker, once; the handle trials name it by."""
        return self.client.scatter(data, broadcast=True, hash=False)

    def run(self, fn: Callable[..., Any], shipped: Any, items: Sequence[Any]) -> list[Any]:
        """`fn(data, item)` for each item on the workers, results in the order of `items`."""
        futures = [self.client.submit(fn, shipped, item, pure=False) for item in items]
        return self.client.gather(futures)


def _probe(address: str) -> None:
    """For tcp:// (Dask's default protocol), an error at once when nothing listens at the address (Dask itself
    would retry for its whole connect timeout)."""
    import socket
    from urllib.parse import urlsplit

    scheme, _, rest = address.rpartition("://")
    if scheme not in ("", "tcp"):
        return
    try:
        where = urlsplit(f"tcp://{rest}")
        host, port = where.hostname, where.port
    except ValueError:
        host = port = None
    if not host or not port:
        raise InputError(f"must be tcp://HOST:PORT, got {address!r}", field="--dask-scheduler")
    try:
        socket.create_connection((host, port), timeout=PROBE_TIMEOUT).close()
    except OSError as exc:
        raise InputError(f"cannot reach the Dask scheduler at {address!r}: {exc.strerror or exc}",
                         field="--dask-scheduler") from None


def _check_versions(versions: dict[str, str], address: str) -> None:
    """Every worker runs the kubefit this process runs (else trials could disagree with `simulate` here)."""
    mine = _kubefit_version()
    other = {v for v in versions.values() if v != mine}
    if other:
        raise InputError(f"the workers of the Dask cluster at {address!r} run kubefit {', '.join(sorted(other))}, "
                         f"this process {mine}: install the same version on both", field="--dask-scheduler")
