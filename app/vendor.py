"""The browser libraries under /vendor/<file>: React, GraphiQL, dagre, axe-core.

They are not committed: scripts/vendor.py takes them from npm, pinned by version and
integrity in the static `vendor.json`, into the static `vendor/` (scripts/install.sh runs it).
Without them the server still serves everything else, and the pages that need them say
how to fetch them (`missing()`).
"""

from __future__ import annotations

import json
from functools import cache, lru_cache
from importlib.resources import files
from pathlib import Path

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

FETCH_HINT = "python3 scripts/vendor.py (scripts/install.sh runs it)"
TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
HEADERS = {
    "Cache-Control": "public, max-age=86400",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def routes() -> list[Route]:
    return [Route("/vendor/{name}", asset, methods=["GET", "HEAD"])]


@cache
def names() -> frozenset[str]:
    """The files the manifest takes, by the name they are served under."""
    manifest = json.loads((files("app") / "static" / "vendor.json").read_text())
    return frozenset(name for p in manifest["packages"] for name in p["files"].values())


def _path(name: str) -> Path:
    return Path(str(files("app") / "static" / "vendor" / name))


def missing(*wanted: str) -> list[str]:
    """Which of `wanted` are not on disk (checked on each call: a fetch needs no restart)."""
    return [name for name in wanted if not _path(name).is_file()]


async def asset(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in names():
        return PlainTextResponse("not found", status_code=404)
    path = _path(name)
    if not path.is_file():
        return PlainTextResponse(
            f"{name} is not fetched on this server: run {FETCH_HINT}", status_code=404
        )
    body = _bytes(name, path.stat().st_mtime_ns)
    return Response(body, media_type=TYPES.get(path.suffix), headers=HEADERS)


@lru_cache(maxsize=32)
def _bytes(name: str, mtime_ns: int) -> bytes:
    return _path(name).read_bytes()
