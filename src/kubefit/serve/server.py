"""Start `kubefit serve`: read the files, run them once, then serve the page with uvicorn until stopped."""

from __future__ import annotations

import contextlib
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

from kubefit.errors import InputError
from kubefit.serve.security import DEFAULT_MAX_BODY, Guard
from kubefit.serve.state import Options, Session


def prepare(options: Options, host: str = "127.0.0.1", port: int = 8765, token: str | None = None,
            max_body: int = DEFAULT_MAX_BODY) -> tuple[Any, Guard, Session]:
    """The application, its guard and the session, the files read and simulated once (bad files: their
    `KubefitError`, before anything listens)."""
    from kubefit.serve.app import create_app

    session = Session(options)
    try:
        session.start()
    except BaseException:
        session.close()
        raise
    guard = Guard.for_bind(host, port, token, max_body)
    return create_app(session, guard), guard, session


def bind(host: str, port: int) -> socket.socket:
    """The listening socket (port 0: a free one), refused with one line when taken or not allowed."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise InputError(f"cannot listen on {host}:{port}: {exc.strerror or exc}", field="--port") from None
    sock.listen(128)
    return sock


def uvicorn_server(config: Any) -> Any:
    """A uvicorn server whose stop signal (Ctrl-C, SIGTERM) ends `run` normally once it has shut down, so that
    the command's cleanup runs; uvicorn itself raises the signal again after its shutdown, which for SIGTERM
    ends the process before any `finally`."""
    import uvicorn

    class Stoppable(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield  # signals reach only the main thread: the caller stops a threaded server (`Server.stop`)
                return
            original = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
            try:
                yield
            finally:
                for sig, handler in original.items():
                    signal.signal(sig, handler)

    return Stoppable(config)


class Server:
    """uvicorn serving `app` on an already bound socket, in this thread (`run`) or another (`start`)."""

    def __init__(self, app: Any, sock: socket.socket) -> None:
        import uvicorn

        self.sock = sock
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                                timeout_graceful_shutdown=1)
        self.server = uvicorn_server(config)
        self.thread: threading.Thread | None = None

    def run(self) -> None:
        self.server.run(sockets=[self.sock])

    def start(self, ready: Callable[[], None] | None = None) -> Server:
        """Serve in a daemon thread; return once it accepts connections."""
        self.thread = threading.Thread(target=self.run, daemon=True, name="kubefit-serve")
        self.thread.start()
        while not self.server.started:
            if not self.thread.is_alive():
                raise RuntimeError("the server stopped while starting")
            self.thread.join(0.01)
        if ready is not None:
            ready()
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        if self.thread is not None:
            self.thread.join(5)
        self.sock.close()
