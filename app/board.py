"""The live board at /board: static HTML, CSS and JavaScript, served as they are.

The page talks to `/graphql` alone (queries over HTTP, `task_events` over
graphql-transport-ws); nothing is built at run time and nothing is fetched from elsewhere,
which the Content-Security-Policy below enforces.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

ASSETS = {
    "index.html": "text/html; charset=utf-8",
    "board.js": "text/javascript; charset=utf-8",
    "board.css": "text/css; charset=utf-8",
    "graph.js": "text/javascript; charset=utf-8",
    "graph.css": "text/css; charset=utf-8",
}
HEADERS = {
    "Cache-Control": "no-cache",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
}


def routes() -> list[Route]:
    """`/board` (and `/board/`) is the page; `/board/<asset>` its script and stylesheet."""
    return [
        Route("/board", page, methods=["GET", "HEAD"]),
        Route("/board/", page, methods=["GET", "HEAD"]),
        Route("/board/{name}", asset, methods=["GET", "HEAD"]),
    ]


@cache
def _read(name: str) -> bytes:
    return (files("app") / "static" / "board" / name).read_bytes()


def _serve(name: str) -> Response:
    return Response(_read(name), media_type=ASSETS[name], headers=HEADERS)


async def page(request: Request) -> Response:
    return _serve("index.html")


async def asset(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in ASSETS or name == "index.html":
        return PlainTextResponse("not found", status_code=404)
    return _serve(name)
