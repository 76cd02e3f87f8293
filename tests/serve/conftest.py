"""Fixtures of the `kubefit serve` tests: servers started on the files given, stopped after each test."""

from __future__ import annotations

from typing import Any

import pytest
from serve_support import WORKLOAD, Served, start


@pytest.fixture
def serve_files():
    """Start servers on the files given; each is stopped after the test."""
    started: list[Served] = []

    def run(files: list[str] | None = None, **kw: Any) -> Served:
        served = start(files or [WORKLOAD], **kw)
        started.append(served)
        return served
    yield run
    for served in started:
        served.server.stop()
        served.session.close()


@pytest.fixture
def served(serve_files) -> Served:
    """The bundled workload example, served."""
    return serve_files()
