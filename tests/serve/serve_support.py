"""A real `kubefit serve` for the tests: uvicorn in a thread on 127.0.0.1 at a free port, over a session of
the files given, and a small HTTP client (urllib: no dependency) that never raises on an error status.
The fixtures (conftest.py) start and stop them."""

from __future__ import annotations

import json
import textwrap
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubefit.serve.server import Server, bind, prepare
from kubefit.serve.state import Options

ROOT = Path(__file__).resolve().parents[2]
WORKLOAD = str(ROOT / "examples" / "workload" / "cluster.yaml")
# Two nodes of 4 cpus and a Deployment of two 1-cpu pods: what the scaling and node-copy tests grow.
SCALED = textwrap.dedent("""\
    apiVersion: v1
    kind: Node
    metadata: {name: n1, labels: {kubernetes.io/hostname: n1, pool: a}}
    status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
    ---
    apiVersion: v1
    kind: Node
    metadata: {name: n2, labels: {kubernetes.io/hostname: n2, pool: b}}
    status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
    ---
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web, namespace: default}
    spec:
      replicas: 2
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec:
          containers: [{name: c, image: nginx, resources: {requests: {cpu: "1", memory: 1Gi}}}]
    """)


@dataclass
class Reply:
    status: int
    headers: Any
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Served:
    """A running server: its base URL, guard (token, CSRF) and session."""

    url: str
    guard: Any
    session: Any
    server: Server

    def request(self, path: str, *, method: str = "GET", body: bytes | str | dict | None = None,
                headers: dict[str, str] | None = None, csrf: bool = True, token: bool = True) -> Reply:
        """`path` with the page's headers (CSRF on a POST, the token when one is set) unless told otherwise."""
        sent = dict(headers or {})
        if method == "POST" and csrf:
            sent.setdefault("X-CSRF-Token", self.guard.csrf)
        if token and self.guard.token:
            sent.setdefault("X-Kubefit-Token", self.guard.token)
        data = json.dumps(body).encode() if isinstance(body, dict) else (
            body.encode() if isinstance(body, str) else body)
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=sent)
        try:
            with urllib.request.urlopen(req, timeout=120) as resp:
                return Reply(resp.status, resp.headers, resp.read())
        except urllib.error.HTTPError as exc:
            return Reply(exc.code, exc.headers, exc.read())

    def get(self, path: str, **kw: Any) -> Any:
        reply = self.request(path, **kw)
        assert reply.status == 200, reply.body
        return reply.json()

    def post(self, path: str, body: Any = None, **kw: Any) -> Reply:
        return self.request(path, method="POST", body=body if body is not None else {}, **kw)


def start(files: list[str], *, host: str = "127.0.0.1", token: str | None = None, max_body: int = 8 << 20,
          **options: Any) -> Served:
    sock = bind(host, 0)
    port = sock.getsockname()[1]
    app, guard, session = prepare(Options(files, **options), host, port, token, max_body)
    server = Server(app, sock).start()
    return Served(f"http://127.0.0.1:{port}", guard, session, server)


def batched() -> str:
    """tests/scheduler/test_batch.py's `test_full_node_hands_the_next_pod_the_next_node` as one file:
    MostAllocated over NodeResourcesFit and BalancedAllocation, n1 half full, n2 a quarter, three 2-cpu pods.
    From v1.35 p1 is scored (→ n1), then n1 is full and p2, p3 are bound to the batch's hints n2, n3, unscored."""
    from scheduler.test_batch import BASE, FILLS, _pod, _profile

    items = [_profile(), *BASE, *(_pod(name, FILLS) for name in ("p1", "p2", "p3"))]
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": items})
