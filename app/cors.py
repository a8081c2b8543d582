"""Cross-origin requests (CORS) to the API: which other origins' pages may call `/graphql` and
`/a2a`, answered by `Cors`, an ASGI middleware around the app (docs/operations.md, "CORS").

`--cors-origins` (PRICKLE_CORS_ORIGINS) lists the origins, separated by commas or spaces:
exact ones (`https://app.example.com`, `http://localhost:5173`) and patterns for
subdomains (`https://*.example.com` matches `https://a.example.com` and
`https://a.b.example.com`, not `https://example.com`). Empty (the default): the server's
own origin only.

- A listed origin's preflight (`OPTIONS` with `Access-Control-Request-Method`) is answered
  204 with the methods, headers and max age allowed; a preflight for another method or
  header is refused 403 (`cors_refused`), as is any preflight from an origin not listed.
  Nothing behind the middleware runs for a preflight.
- A listed origin's request is answered with `Access-Control-Allow-Origin: <origin>`,
  `Vary: Origin` and `Access-Control-Expose-Headers: X-Request-ID`; any other origin's gets
  no CORS header (the browser keeps the answer from the page), only `Vary: Origin`, as
  does a GET without `Origin` while origins are listed (a cache must key on it).
- A WebSocket handshake to `/graphql` whose `Origin` is neither the server's own nor listed
  is refused before the upgrade (403); one without `Origin` (not a browser) is not
  concerned. A WebSocket carries no CORS header: the origin is checked here, and by
  Strawberry's own check (`allows`).

Starlette's CORSMiddleware answers a listed origin's preflight too, but it lets a preflight
from any other origin through to the app (a 405 from the route, not a refusal naming the
cause), matches subdomains only by a regular expression the operator would have to write,
and leaves WebSockets alone; hence this one, on Starlette's public types only. A leaf:
nothing of the server.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

import orjson
from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("app.cors")

PATHS = ("/graphql", "/a2a")
METHODS = ("GET", "POST", "OPTIONS")
# What our clients and the usual GraphQL and A2A clients send: the bearer token, JSON bodies
# and their Accept, the request id (`RequestLog`), an event stream's
# resumption (graphql-sse, A2A: Last-Event-ID; graphql-sse's single connection mode:
# X-GraphQL-Event-Stream-Token), Apollo Client's own headers, A2A's version and extensions.
HEADERS = (
    "accept",
    "authorization",
    "cache-control",
    "content-type",
    "last-event-id",
    "x-request-id",
    "x-graphql-event-stream-token",
    "apollographql-client-name",
    "apollographql-client-version",
    "apollo-require-preflight",
    "a2a-version",
    "a2a-extensions",
    "x-a2a-extensions",
)
EXPOSED = "X-Request-ID"
MAX_AGE = 600  # seconds a browser may keep a preflight's answer (Chromium caps it at 7200)
REFUSED = "cors_refused"
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}


class CorsSettingError(ValueError):
    """A --cors-origins entry that is not an origin."""


def _origin_parts(origin: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an origin as browsers send it, or None if it is not one."""
    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username:
        return None
    return parts.scheme, parts.hostname.lower(), port or _DEFAULT_PORTS[parts.scheme]


@dataclass(frozen=True)
class Origins:
    """The origins allowed: exact (scheme, host, port) and subdomain patterns (scheme, the
    domain below the `*.`, port)."""

    exact: frozenset[tuple[str, str, int]] = frozenset()
    patterns: tuple[tuple[str, str, int], ...] = ()
    text: str = ""

    @classmethod
    def parse(cls, text: str | None) -> Origins:
        """The origins of --cors-origins; CorsSettingError names an entry that is none."""
        exact, patterns = set(), []
        for entry in re.split(r"[\s,]+", (text or "").strip()):
            if not entry:
                continue
            wildcard = "://*." in entry
            parts = _origin_parts(entry.replace("://*.", "://", 1) if wildcard else entry)
            if parts is None or "*" in parts[1]:
                raise CorsSettingError(
                    f"--cors-origins: {entry!r} is not an origin (scheme://host[:port], or"
                    " scheme://*.domain[:port] for its subdomains)"
                )
            (patterns.append(parts) if wildcard else exact.add(parts))
        return cls(frozenset(exact), tuple(patterns), ", ".join((text or "").split()))

    def __bool__(self) -> bool:
        return bool(self.exact or self.patterns)

    def allows(self, origin: str) -> bool:
        """Whether `origin` (an Origin header's value) is listed."""
        parts = _origin_parts(origin)
        if parts is None:
            return False
        if parts in self.exact:
            return True
        scheme, host, port = parts
        return any(
            scheme == s and port == p and host.endswith("." + domain)
            for s, domain, p in self.patterns
        )


def same_origin(origin: str, host: str | None) -> bool:
    """Whether `origin` names the host and port the request was sent to (its Host header);
    the scheme is not compared, so TLS ended at a proxy still counts as the same origin."""
    parts = _origin_parts(origin)
    if parts is None or not host:
        return False
    try:
        target = urlsplit(f"//{host.strip()}")
        port = target.port or _DEFAULT_PORTS[parts[0]]
    except ValueError:
        return False
    return (target.hostname or "").lower() == parts[1] and port == parts[2]


class Cors:
    """The middleware (see the module docstring)."""

    def __init__(self, app: ASGIApp, origins: Origins) -> None:
        self.app = app
        self.origins = origins
        self.methods = ", ".join(METHODS)
        self.headers = ", ".join(HEADERS)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket") or not _covered(scope["path"]):
            await self.app(scope, receive, send)
            return
        origin = _origin_of(scope)
        if origin is None:  # not a browser's cross-origin call: nothing to add or refuse
            if self.origins and kind == "http" and scope["method"] == "GET":
                await self.app(scope, receive, _varying(send))  # a cache keys on Origin
            else:
                await self.app(scope, receive, send)
            return
        listed = self.origins.allows(origin)
        headers = Headers(scope=scope)
        if kind == "websocket":
            if listed or same_origin(origin, headers.get("host")):
                await self.app(scope, receive, send)
            else:
                log.info("websocket refused", extra={"code": REFUSED, "origin": origin[:200]})
                await send({"type": "websocket.close", "code": 1008})
            return
        if scope["method"] == "OPTIONS" and "access-control-request-method" in headers:
            await self._preflight(origin, listed, headers, send)
            return
        if not listed:
            await self.app(scope, receive, _varying(send) if self.origins else send)
            return

        async def send_allowed(message: Message) -> None:
            if message["type"] == "http.response.start":
                answer = MutableHeaders(scope=message)
                answer["access-control-allow-origin"] = origin
                answer["access-control-expose-headers"] = EXPOSED
                answer.add_vary_header("Origin")
            await send(message)

        await self.app(scope, receive, send_allowed)

    async def _preflight(self, origin: str, listed: bool, headers: Headers, send: Send) -> None:
        method = headers["access-control-request-method"].strip().upper()
        asked = [
            h.strip().lower()
            for h in headers.get("access-control-request-headers", "").split(",")
            if h.strip()
        ]
        refusal = None
        if not listed:
            refusal = f"the origin {origin[:200]!r} is not allowed (--cors-origins)"
        elif method not in METHODS:
            refusal = f"the method {method[:40]!r} is not allowed; allowed: {self.methods}"
        elif unknown := [h for h in asked if h not in HEADERS]:
            shown = ", ".join(h[:60] for h in unknown[:5])
            refusal = f"the header(s) {shown} are not allowed; allowed: {self.headers}"
        if refusal is not None:
            log.info("preflight refused", extra={"code": REFUSED, "origin": origin[:200]})
            body = {"errors": [{"message": refusal, "extensions": {"code": REFUSED}}]}
            await _respond(send, 403, [(b"content-type", b"application/json")], body)
            return
        answer = [
            (b"access-control-allow-origin", origin.encode("latin-1")),
            (b"access-control-allow-methods", self.methods.encode()),
            (b"access-control-allow-headers", self.headers.encode()),
            (b"access-control-max-age", str(MAX_AGE).encode()),
            (b"vary", b"Origin"),
        ]
        await _respond(send, 204, answer, None)


def _varying(send: Send) -> Send:
    """`send` adding `Vary: Origin`: with origins listed, an answer depends on the request's
    Origin, so a cache (a CDN keeping GET queries) must not serve one origin's to another."""

    async def varying(message: Message) -> None:
        if message["type"] == "http.response.start":
            MutableHeaders(scope=message).add_vary_header("Origin")
        await send(message)

    return varying


def _origin_of(scope: Scope) -> str | None:
    for name, value in scope["headers"]:
        if name == b"origin":
            return str(value.decode("latin-1"))
    return None


def _covered(path: str) -> bool:
    return any(path == p or path.startswith(p + "/") for p in PATHS)


async def _respond(
    send: Send, status: int, headers: list[tuple[bytes, bytes]], body: object | None
) -> None:
    content = b"" if body is None else orjson.dumps(body)
    if body is not None:
        headers = [*headers, (b"content-length", str(len(content)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": content})
