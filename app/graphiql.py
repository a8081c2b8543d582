"""GraphiQL at `GET /graphql` (a browser asking for HTML), served from this server alone.

The page (app/static/graphiql/) loads React, GraphiQL and its explorer plugin from /vendor
(`app.vendor`) under the same strict Content-Security-Policy as the board, so it works
where the internet does not reach. Without the vendored files it says how to fetch them.
"""

from __future__ import annotations

from functools import cache
from html import escape
from importlib.resources import files

from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route

from app import vendor
from app.board import HEADERS as BOARD_HEADERS

LIBRARIES = (
    "react.production.min.js",
    "react-dom.production.min.js",
    "graphiql.min.js",
    "graphiql.min.css",
    "plugin-explorer.umd.js",
    "plugin-explorer.css",
)
ASSETS = {
    "graphiql.js": "text/javascript; charset=utf-8",
    "graphiql.css": "text/css; charset=utf-8",
}
# GraphiQL's stylesheet carries its fonts as data: URLs.
HEADERS = {
    **BOARD_HEADERS,
    "Content-Security-Policy": BOARD_HEADERS["Content-Security-Policy"].replace(
        "img-src 'self' data:;", "img-src 'self' data:; font-src 'self' data:;"
    ),
}


def routes() -> list[Route]:
    return [Route("/graphiql/{name}", asset, methods=["GET", "HEAD"])]


@cache
def _read(name: str) -> bytes:
    return (files("app") / "static" / "graphiql" / name).read_bytes()


def page() -> Response:
    absent = vendor.missing(*LIBRARIES)
    if absent:
        return HTMLResponse(_missing_page(absent), status_code=503, headers=HEADERS)
    return HTMLResponse(_read("index.html"), headers=HEADERS)


async def asset(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in ASSETS:
        return PlainTextResponse("not found", status_code=404)
    return Response(_read(name), media_type=ASSETS[name], headers=HEADERS)


def _missing_page(absent: list[str]) -> str:
    items = "".join(f"<li><code>{escape(name)}</code></li>" for name in absent)
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        "<title>GraphiQL is not installed</title>"
        '<link rel="stylesheet" href="/graphiql/graphiql.css"></head>'
        '<body><main class="missing"><h1>GraphiQL is not installed on this server</h1>'
        "<p>Its browser libraries are fetched from npm when the server is installed, and "
        f"these are missing:</p><ul>{items}</ul>"
        f"<p>Fetch them with <code>{escape(vendor.FETCH_HINT)}</code> in the server's "
        "source folder; no restart is needed. <code>POST /graphql</code> works meanwhile."
        "</p></main></body></html>"
    )
