"""Where `kubefit tune` runs its trials: Dask workers, of a `distributed.LocalCluster` sized to this
machine or of an existing cluster reached by its scheduler's address.

The compiled workload goes to every worker once (`Workers.ship`), each worker unpickling its own copy
at the same time; a trial is then one task naming the copy on its worker and a configuration, run as
one simulation where the data already is. This process hands the trials out itself (`Workers.run`): a
worker is given the next trial when it has fewer than two (its running one and the next, so it never
waits for this process between trials), and only one once the trials left are fewer than the workers, so
a batch ends with every worker finishing at about the same time instead of one working through a queue
while the others wait. Results come back in the order of the trials, whichever worker finished first.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from kubefit.errors import InputError

DEPTH = 2  # trials a worker is given at a time: the one it runs and the next (none waits on this process)
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


def _import_trials() -> None:
    """Run on a worker: import the modules a trial runs (the scheduler, the objectives)."""
    import kubefit.planning.tune  # noqa: F401


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
        self.warming: list[Any] = []  # each worker's import of the trial code (`_warm_up`)

    def __enter__(self) -> Workers:
        import logging

        import dask
        from distributed import Client, LocalCluster

        if self.address is None:
            n = self.requested or machine_workers()
            where = {"processes": True, "host": "127.0.0.1"} if n > 1 else {"processes": False}  # in-process: inproc://
            # CRITICAL: a worker's heartbeat racing the shutdown logs a traceback at ERROR; a trial that fails
            # reaches this process as the task's exception anyway
            # the workers' statistical profiler (a stack sample every 10 ms, for the dashboard) off: it took about
            # 5 % of a worker's CPU from the runs; and glibc's allocator left as it is: the nanny's default
            # MALLOC_TRIM_THRESHOLD_=65536, set through the environment, also fixes the mmap threshold, so every
            # large array a run makes is mapped and its pages faulted in afresh (a plan's run of the 1,000 × 10,000
            # bench file on a worker process: 1.2 s without, 1.5 s with; the workers live for one command)
            with dask.config.set({"distributed.worker.profile.enabled": False,
                                  "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}):
                self.cluster = LocalCluster(n_workers=n, threads_per_worker=1, dashboard_address="127.0.0.1:0",
                                            silence_logs=logging.CRITICAL, **where)
            self.client = Client(self.cluster)
            self._warm_up()
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
        try:
            _check_versions(versions, self.address)
        except InputError:
            self.close()  # else the client, refused, keeps reconnecting to the scheduler until it stops
            raise
        self._warm_up()
        return self

    def _warm_up(self) -> None:
        """Each worker process imports what a trial runs now, while this process compiles and pickles the
        workload, rather than when the workload arrives (not waited for; one in-process worker has it)."""
        if self.cluster is None or self.cluster.processes:
            self.warming = [self.client.submit(_import_trials, workers=[w], pure=False) for w in self.addresses()]

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
        return len(self.addresses())

    def ship(self, data: Any) -> Shipped:
        """`data` on every worker, once; the handle trials name it by. In this process (one in-process
        worker) it is the object itself; to worker processes it goes pickled once here, as bytes (copied
        between workers without pickling again), and each worker unpickles its copy, all at once
        (`Client.scatter(broadcast=True)` of the object itself would unpickle, pickle again and unpickle
        worker after worker)."""
        if self.cluster is not None and not self.cluster.processes:
            return Shipped(self.client.scatter(data, broadcast=True, hash=False), {})
        blob = self.client.scatter(pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL), broadcast=True,
                                   hash=False)
        copies = {w: self.client.submit(pickle.loads, blob, workers=[w], allow_other_workers=True, pure=False)
                  for w in self.addresses()}
        _wait(copies.values())
        return Shipped(blob, copies)

    def addresses(self) -> list[str]:
        """The workers connected now, by address."""
        return list(self.client.scheduler_info(n_workers=-1)["workers"])

    def run(self, fn: Callable[..., Any], shipped: Shipped, items: Iterable[Any],
            done: Callable[[int, Any], None] | None = None) -> list[Any]:
        """`fn(data, item)` for each item on the workers, results in the order of `items`. `items` is read
        as the workers need it: the first trials run while the later ones are still being asked for.
        `done(number, result)` is called as each item's result arrives (in the order they finish)."""
        from distributed import wait

        workers = self.addresses()  # none (all left): tasks wait for the next to come, anywhere
        busy: dict[str | None, int] = {w: 0 for w in workers} or {None: 0}  # given and not finished, per worker
        running: dict[Any, tuple[int, str | None]] = {}  # future → (item number, worker)
        results: dict[int, Any] = {}
        queue: list[tuple[int, Any]] = []
        source: Iterator[tuple[int, Any]] | None = enumerate(items)
        try:
            while source is not None or queue or running:
                if source is not None:  # items still coming: take the next, hand out, never wait
                    for future in [f for f in running if f.done()]:
                        self._collect(future, running, busy, results, done)
                    item = next(source, None)
                    if item is None:
                        source = None
                    else:
                        queue.append(item)
                    self._hand_out(fn, shipped, queue, busy, running, more=source is not None)
                else:
                    self._hand_out(fn, shipped, queue, busy, running, more=False)
                    if running:
                        for future in wait(list(running), return_when="FIRST_COMPLETED").done:
                            self._collect(future, running, busy, results, done)
        except BaseException:
            self.client.cancel(list(running))
            raise
        return [results[i] for i in range(len(results))]

    def _hand_out(self, fn: Callable[..., Any], shipped: Shipped, queue: list[tuple[int, Any]], busy: dict[str | None, int],
                  running: dict[Any, tuple[int, str | None]], more: bool) -> None:
        """Queued items to the least busy workers, in order: up to `DEPTH` each while more items may come or
        enough are queued to keep every worker's next one, else one each (the batch's end)."""
        while queue:
            worker = min(busy, key=busy.__getitem__)
            depth = DEPTH if more or len(queue) > len(busy) else 1
            if busy[worker] >= depth:
                return
            number, item = queue.pop(0)
            future = self.client.submit(fn, shipped.on(worker), item, **_on(worker), pure=False)
            running[future] = (number, worker)
            busy[worker] += 1

    @staticmethod
    def _collect(future: Any, running: dict[Any, tuple[int, str | None]], busy: dict[str | None, int],
                 results: dict[int, Any], done: Callable[[int, Any], None] | None = None) -> None:
        number, worker = running.pop(future)
        busy[worker] -= 1
        results[number] = future.result()  # a trial that failed raises here
        if done is not None:
            done(number, results[number])


@dataclass
class Shipped:
    """Data on the workers: `whole` (the object, or its pickled bytes) and, per worker address, the copy
    unpickled there (none in this process: `whole` is the object then)."""

    whole: Any
    copies: dict[str, Any]

    def on(self, worker: str | None) -> Any:
        """What a task on `worker` names: its own copy (a worker joined since gets the first one sent)."""
        if not self.copies:
            return self.whole
        return self.copies[worker] if worker in self.copies else next(iter(self.copies.values()))


def _on(worker: str | None) -> dict[str, Any]:
    """`Client.submit`'s placement for a task meant for `worker`: there if it can, else on any other; None (no
    worker listed yet, or all gone) anywhere. Dask refuses `allow_other_workers` without `workers` (a ValueError:
    the scheduler's worker list can be empty for a moment while a LocalCluster's workers register)."""
    return {} if worker is None else {"workers": [worker], "allow_other_workers": True}


def _wait(futures: Iterable[Any]) -> None:
    from distributed import wait

    for future in wait(list(futures)).done:
        if future.status == "error":  # a copy that failed to unpickle (the others stay where they are)
            future.result()


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


POLL_SECONDS = 1.0  # how often a caller waiting on a Dask worker looks whether the cluster still has workers
WAIT_FOR_WORKERS = 30.0  # seconds without any worker after which the caller gives up on the cluster


def result_while_workers(future: Any, pool: Workers | None, alone_for: float = WAIT_FOR_WORKERS) -> Any:
    """The Dask future's result; an error once the cluster has had no worker for `alone_for` seconds (Dask itself
    would wait for one for ever)."""
    from distributed import TimeoutError as DaskTimeout
    from distributed import wait

    alone = 0.0
    while True:
        try:
            wait([future], timeout=POLL_SECONDS)
        except (DaskTimeout, TimeoutError):
            pass
        if future.done():
            return future.result()
        alone = alone + POLL_SECONDS if pool is not None and pool.count == 0 else 0.0
        if alone >= alone_for:
            raise RuntimeError(f"no Dask worker for {alone_for} s")


class Background:
    """Tasks started on Dask workers now, their results waited for later, while this process works on something
    else (`kubefit check`'s baseline beside its candidate): `start` returns at once; the workers start (a
    LocalCluster of `count` processes: 1–2 s) and the data is shipped in a thread of this process. `result(i)` waits
    for the i-th task; a cluster that fails (unreachable, a worker killed, no worker for `WAIT_FOR_WORKERS`
    seconds: Dask itself would wait for ever) raises, and the caller decides what to do (run it here). Closed with
    `close`."""

    def __init__(self, address: str | None, count: int | None) -> None:
        self.address, self.count = address, count
        self.pool: Workers | None = None
        self._futures: Any = None  # the Future (of the starting thread) of the tasks' Dask futures

    def start(self, fn: Callable[[Any, Any], Any], data: Any, items: list[Any]) -> Background:
        from concurrent.futures import ThreadPoolExecutor

        starter = ThreadPoolExecutor(1, thread_name_prefix="kubefit-background")
        self._futures = starter.submit(self._submit, fn, data, items)
        starter.shutdown(wait=False)
        return self

    def _submit(self, fn: Callable[[Any, Any], Any], data: Any, items: list[Any]) -> list[Any]:
        self.pool = Workers(self.address, self.count).__enter__()
        shipped = self.pool.ship(data)
        workers = self.pool.addresses() or [None]  # the items dealt round the workers
        return [self.pool.client.submit(fn, shipped.on(w), item, **_on(w), pure=False)
                for i, item in enumerate(items) for w in [workers[i % len(workers)]]]

    def result(self, i: int) -> Any:
        """The i-th task's result (its own error raised as it is); a failure of the cluster raises too."""
        return result_while_workers(self._futures.result()[i], self.pool)

    def close(self) -> None:
        if self._futures is not None:
            try:
                for future in self._futures.result():
                    future.cancel()
            except Exception:  # noqa: BLE001,S110 - the cluster that failed to start: nothing to cancel
                pass
        if self.pool is not None:
            self.pool.close()
            self.pool = None
