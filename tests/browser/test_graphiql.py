"""GraphiQL at GET /graphql, served from the server itself: in headless Chromium with every
host but 127.0.0.1 blocked, it loads, runs a query with the token header, and shows the
live events of a `task_events` subscription.

The libraries (React, GraphiQL, its explorer) come from app/static/vendor/, which
scripts/vendor.py fills from npm (scripts/install.sh runs it).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from chromium import ARTIFACTS, needs_chromium, wait_until
from factory import ALICE, BOB, give, setup
from live import DEBUG_ENV, settle
from server import Server, module_database, start

from app import graphiql, vendor
from app.service import admin
from app.storage.migrate import upgrade
from app.storage.store import Store

pytestmark = pytest.mark.once  # the same on either backend: not run on PostgreSQL


async def _seed(url: str) -> tuple[str, str, str]:
    """alice's token, bob's token, and a task of alice/planner's for bob/coder."""
    store = Store(url)
    try:
        await upgrade(store.engine)
        await setup(store)
        task = await give(store)
        alice = (await admin.provision_token(store, ALICE)).token
        bob = (await admin.provision_token(store, BOB)).token
        return alice, bob, task.id
    finally:
        await store.close()


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Server, tuple[str, str, str]]]:
    directory = tmp_path_factory.mktemp("graphiql")
    with module_database(directory) as url:
        seeded = asyncio.run(_seed(url))
        server = start(url, directory / "logs", env=DEBUG_ENV)
        try:
            yield server, seeded
        finally:
            server.stop()


def test_a_browser_asking_for_graphql_gets_the_page_and_libraries_from_this_server(
    served,
) -> None:  # type: ignore[no-untyped-def]
    server, _ = served
    page = httpx.get(server.graphql_url, headers={"Accept": "text/html"})
    assert page.status_code == 200, page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert not re.search(r"https?://", page.text), "the page names another host"
    for src in re.findall(r'(?:src|href)="(/[^"]+)"', page.text):
        asset = httpx.get(f"{server.base_url}{src}")
        assert asset.status_code == 200, src
    assert httpx.get(f"{server.base_url}/vendor/nothing.js").status_code == 404
    assert httpx.get(f"{server.base_url}/graphiql/../board.py").status_code == 404


def test_without_the_libraries_the_page_says_how_to_fetch_them(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(vendor, "_path", lambda name: tmp_path / name)
    answer = graphiql.page()
    body = bytes(answer.body).decode()
    assert answer.status_code == 503
    assert "scripts/vendor.py" in body and "graphiql.min.js" in body


def _offline(tab: Any) -> list[str]:
    """Abort every request to a host other than 127.0.0.1; the list of those aborted."""
    refused: list[str] = []

    def route(request_route: Any) -> None:
        url = request_route.request.url
        if urlsplit(url).hostname == "127.0.0.1" or url.startswith("data:"):
            request_route.continue_()
        else:
            refused.append(url)
            request_route.abort()

    tab.context.route("**/*", route)
    return refused


def _editor(tab: Any, selector: str) -> str:
    return f"document.querySelector('{selector} .CodeMirror').CodeMirror"


def _run(tab: Any, query: str) -> None:
    """Type a query and run it. GraphiQL takes an edit (and the operation name it reads
    from it) 100 ms after the change; a click before that sends the new text with the old
    operation name (the default query's `Me`), which the server rightly refuses with 400.
    The edit has landed once GraphiQL has stored the query."""
    tab.evaluate(f"(q) => {_editor(tab, '.graphiql-query-editor')}.setValue(q)", query)
    wait_until(tab, f"localStorage.getItem('graphiql:query') === {query!r}")
    tab.click("button.graphiql-execute-button")


def _response(tab: Any) -> str:
    return tab.evaluate(f"{_editor(tab, '.graphiql-response')}.getValue()")


@needs_chromium
def test_graphiql_runs_a_query_and_a_subscription_with_no_outside_host(served, page) -> None:  # type: ignore[no-untyped-def]
    server, (alice, bob, task_id) = served
    refused = _offline(page)
    page.add_init_script(f"sessionStorage.setItem('prickle.token', {alice!r})")
    page.goto(server.graphql_url)
    wait_until(page, "document.querySelector('.graphiql-query-editor .CodeMirror')")
    shown = _editor(page, ".graphiql-editor-tool .graphiql-editor:not(.hidden)")
    headers = page.evaluate(f"{shown}.getValue()")
    assert f"Bearer {alice}" in headers

    _run(page, "query { me { kind id } }")
    wait_until(page, f"{_editor(page, '.graphiql-response')}.getValue().includes('alice')")
    assert '"id": "alice"' in _response(page)

    _run(page, 'subscription { task_events(project: "work") { kind verb task_id to_state } }')
    # the subscription is registered (its connection_init carried the token)
    assert settle(server, lambda figures: figures["subscribers"] == 1)["subscribers"] == 1
    server.run_data("mutations/accept_task", {"task_id": task_id}, bob)
    wait_until(page, f"{_editor(page, '.graphiql-response')}.getValue().includes('accept_task')")
    shown = _response(page)
    assert task_id in shown and '"to_state": "accepted"' in shown
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "graphiql.png"))
    assert refused == [], refused
