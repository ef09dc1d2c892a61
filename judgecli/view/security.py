"""Who may reach the viewer, and who may write through it (docs/view.md, "Security").

- Every state-changing request (POST) carries the server's write token in the header
  `X-Judge-Token`; the page carries it as `<meta name="judge-token">`. Another site's page
  can send a request to 127.0.0.1 but cannot read the token, so it cannot write a label
  (403 without it). The token is new each time the server starts.
- Bound to any address but loopback, every request needs the access token printed at
  start: `?token=...` once (which sets a cookie, HttpOnly and SameSite=Strict), then the
  cookie. Without it: 401, and a page saying where the token is.
- The Host header must name the address served: a page of another site cannot reach the
  viewer through a name of its own that resolves to 127.0.0.1 (DNS rebinding).
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from aiohttp import web

TOKEN_HEADER = "X-Judge-Token"
ACCESS_COOKIE = "judge_access"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def loopback(host: str) -> bool:
    """Whether an address is this machine's loopback (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def same(given: str | None, token: str) -> bool:
    """A token compared in constant time (no timing tells how much of it was right)."""
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


@dataclass
class Tokens:
    """The server's tokens: one for writes always, one for access off loopback."""

    host: str
    write: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    access: str | None = None

    def __post_init__(self) -> None:
        if self.access is None and not loopback(self.host):
            self.access = secrets.token_urlsafe(24)

    def host_allowed(self, header: str | None, port: int) -> bool:
        """Whether a request's Host names this server (loopback names on a loopback
        server; any name on a server bound to another address, which the access token
        guards).
        """
        if not loopback(self.host):
            return True
        if header is None:
            return False
        name = header.rsplit(":", 1)[0] if not header.endswith("]") else header
        name = name.strip("[]")
        return loopback(name) and header.endswith(f":{port}")


def problem(status: int, message: str, *, json: bool) -> web.Response:
    """An error as the API (JSON `{"error"}`) or the page (one plain line) gives it."""
    if json:
        return web.json_response({"error": message}, status=status)
    return web.Response(status=status, text=f"error: {message}\n", content_type="text/plain")


def guard(
    tokens: Tokens, port: Callable[[], int]
) -> Callable[[web.Request, Handler], Awaitable[web.StreamResponse]]:
    """The middleware that enforces the rules of the module's docstring."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        api = request.path.startswith("/api/")
        if not tokens.host_allowed(request.headers.get("Host"), port()):
            return problem(403, "this server answers requests to its own address only", json=api)
        given = request.query.get("token")
        if tokens.access is not None and not (
            same(given, tokens.access) or same(request.cookies.get(ACCESS_COOKIE), tokens.access)
        ):
            return problem(
                401,
                "this viewer needs its access token: open the address judge view printed "
                "at start (with ?token=...)",
                json=api,
            )
        if request.method not in SAFE_METHODS and not same(
            request.headers.get(TOKEN_HEADER), tokens.write
        ):
            return problem(
                403,
                f"a change needs the {TOKEN_HEADER} header with this server's token "
                '(the page carries it as <meta name="judge-token">)',
                json=api,
            )
        response = await handler(request)
        if tokens.access is not None and same(given, tokens.access):
            response.set_cookie(ACCESS_COOKIE, tokens.access, httponly=True, samesite="Strict")
        return response

    return middleware
