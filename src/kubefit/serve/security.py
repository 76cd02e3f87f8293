"""Who may talk to `kubefit serve`, and what the browser may load: token, same-origin, CSRF, CSP, body limits.

- The token: bound to a loopback address the server needs none (only this machine reaches it); on any
  other host one is required (`--token`, else generated with `secrets` and printed in the URL). With a
  token every request must carry it: the `?token=` of the printed URL (the first page load turns it into
  an HttpOnly, SameSite=Strict cookie), the cookie, or the `X-Kubefit-Token` header.
- The Host header must name the server itself on a loopback bind (a DNS-rebinding page carries its own
  host name), and a state-changing request (POST) must come from the page's own origin (`Origin`, when
  sent, equal to the server's) and carry the session's CSRF token in `X-CSRF-Token`: the page reads it
  from its own `<meta>`, which another origin cannot read.
- Every response forbids inline script (`script-src 'self'`) and framing by others; a request body larger
  than the limit is refused with 413 and a message saying the limit.
"""

from __future__ import annotations

import ipaddress
import secrets
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse
from starlette.types import ASGIApp, Receive, Scope, Send

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "frame-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
# The embedded HTML report (its own inline script and style, as a file on disk has them) in a sandbox: an
# opaque origin that can read nothing of the app's and fetch nothing.
REPORT_CSP = ("sandbox allow-scripts; default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
              "img-src data:; frame-ancestors 'self'")
COOKIE = "kubefit_token"
TOKEN_HEADER = "x-kubefit-token"
CSRF_HEADER = "x-csrf-token"
SAFE_METHODS = ("GET", "HEAD")
DEFAULT_MAX_BODY = 8 << 20  # bytes of one request: pasted YAML, a configuration


def is_loopback(host: str) -> bool:
    """Whether `host` (an address or `localhost`) reaches only this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass
class Guard:
    """The server's security settings: its token (None: none required), the session's CSRF token, where it
    listens (for the Host check) and the body limit."""

    host: str
    port: int
    token: str | None = None
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    max_body: int = DEFAULT_MAX_BODY

    @classmethod
    def for_bind(cls, host: str, port: int, token: str | None, max_body: int = DEFAULT_MAX_BODY) -> Guard:
        """A loopback bind takes the token given (if any); any other bind requires one, generated if not given."""
        if token is None and not is_loopback(host):
            token = secrets.token_urlsafe(24)
        return cls(host, port, token, max_body=max_body)

    def hosts(self) -> set[str] | None:
        """The Host headers accepted: the loopback names at the port on a loopback bind; None (any) otherwise,
        where the token is what keeps others out."""
        if not is_loopback(self.host):
            return None
        port = f":{self.port}"
        return {f"{h}{port}" for h in ("127.0.0.1", "localhost", "[::1]", self.host)}

    def url(self, shown_host: str | None = None) -> str:
        """The URL to open (with the token, when one is required)."""
        host = shown_host or ("127.0.0.1" if self.host in ("0.0.0.0", "::") else self.host)
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.port}/" + (f"?token={self.token}" if self.token else "")

    def refusal(self, request: Request) -> tuple[int, str] | None:
        """Why `request` is refused (status, message), or None when it may go on."""
        headers = request.headers
        hosts = self.hosts()
        if hosts is not None and headers.get("host", "") not in hosts:
            return 421, "unexpected Host header: open the address kubefit serve printed"
        if request.method not in (*SAFE_METHODS, "POST"):
            return 405, f"method {request.method} not allowed"
        if self.token is not None and not self.has_token(request):
            return 401, "a token is required: open the URL kubefit serve printed (with ?token=...)"
        if request.method in SAFE_METHODS:
            return None
        origin = headers.get("origin")
        if origin is not None and origin != f"http://{headers.get('host', '')}":
            return 403, f"cross-origin request refused (Origin {origin})"
        if not secrets.compare_digest(headers.get(CSRF_HEADER, ""), self.csrf):
            return 403, "missing or wrong CSRF token: reload the page"
        return None

    def has_token(self, request: Request) -> bool:
        given = (request.headers.get(TOKEN_HEADER) or request.cookies.get(COOKIE)
                 or request.query_params.get("token") or "")
        return secrets.compare_digest(given.encode(), (self.token or "").encode())


def security_headers(csp: str = CSP) -> dict[str, str]:
    """The headers every response carries (a report page brings its own sandboxing CSP)."""
    return {"content-security-policy": csp, "x-content-type-options": "nosniff", "referrer-policy": "no-referrer",
            "cross-origin-opener-policy": "same-origin", "cache-control": "no-store"}


def with_security_headers(raw: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """`raw` ASGI headers with each security header the response did not set itself added."""
    present = {k.lower() for k, _ in raw}
    return raw + [(k.encode(), v.encode()) for k, v in security_headers().items() if k.encode() not in present]


class GuardMiddleware:
    """Refuses what `Guard.refusal` refuses, turns a `?token=` page load into the cookie, and adds the
    security headers to every response. Plain ASGI (no response buffering)."""

    def __init__(self, app: ASGIApp, guard: Guard) -> None:
        self.app, self.guard = app, guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        refused = self.guard.refusal(request)
        if refused is not None:
            response: Any = JSONResponse({"error": refused[1]}, status_code=refused[0])
        elif self.guard.token and request.query_params.get("token") and request.method == "GET":
            response = RedirectResponse(request.url.path, status_code=303)  # the token leaves the address bar
            response.set_cookie(COOKIE, self.guard.token, httponly=True, samesite="strict")
        else:
            response = None
        if response is not None:
            response.raw_headers = with_security_headers(response.raw_headers)
            await response(scope, receive, send)
            return

        async def send_with_headers(message: dict) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = with_security_headers(list(message.get("headers", [])))
            await send(message)

        await self.app(scope, receive, send_with_headers)


class BodyTooLarge(Exception):
    """A request body over the limit (answered 413)."""


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refused past `limit` bytes (by Content-Length first, else while it streams)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge(f"request body too large: {int(declared):,} bytes, at most {limit:,} "
                           f"(paste less, or start kubefit serve with the file: -f FILE)")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(f"request body too large: more than {limit:,} bytes "
                               f"(paste less, or start kubefit serve with the file: -f FILE)")
        chunks.append(chunk)
    return b"".join(chunks)
