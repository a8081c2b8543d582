"""A page on another origin calls the API from headless Chromium (Debian's /usr/bin/chromium,
through the `playwright` package, as tests/browser/test_board.py does): with a bearer token it
queries, mutates and subscribes when its origin is listed in `--cors-origins`, and is
refused, with nothing run on the server, when it is not.

Each origin is a tiny static HTTP server of its own on 127.0.0.1 (a port is part of an
origin): one listed, one not.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from chromium import CHROMIUM, CHROMIUM_ARGS, wait_until
from factory import packet
from server import Server, module_database, routed_task, start

pytestmark = pytest.mark.once  # the HTTP layer and a browser: the same on either backend

PAGE = "<!doctype html><html><head><title>elsewhere</title></head><body>a frontend</body></html>"

# In the page: a GraphQL request with the bearer token, as a frontend sends it; what the
# page sees (the answer, or the failure fetch() reports).
FETCH = """async ([url, token, query, variables]) => {
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
    });
    return { status: response.status, body: await response.json(),
             requestId: response.headers.get("x-request-id") };
  } catch (error) {
    return { failed: String(error) };
  }
}"""

# In the page: a graphql-transport-ws subscription; its first event, or how it ended.
SUBSCRIBE = """([url, token, taskId]) => new Promise((resolve) => {
  const ws = new WebSocket(url, "graphql-transport-ws");
  let opened = false;
  ws.onopen = () => {
    opened = true;
    const payload = { Authorization: `Bearer ${token}` };
    ws.send(JSON.stringify({ type: "connection_init", payload }));
  };
  ws.onmessage = (message) => {
    const data = JSON.parse(message.data);
    if (data.type === "connection_ack") {
      ws.send(JSON.stringify({ id: "1", type: "subscribe", payload: {
        query: "subscription($t: ID) { task_events(task_id: $t) { kind task_id to_state } }",
        variables: { t: taskId } } }));
    } else if (data.type === "next") {
      ws.close();
      resolve({ event: data.payload.data.task_events });
    }
  };
  ws.onclose = (event) => resolve({ closed: event.code, opened });
})"""

MUTATION = "mutation($n: String!) { register_agent(name: $n) { agent_id } }"


class Origin:
    """A static HTTP server on 127.0.0.1 serving PAGE: one origin."""

    def __init__(self, directory: Path) -> None:
        (directory / "index.html").write_text(PAGE)
        handler = partial(_Quiet, directory=str(directory))
        self.http = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.http.shutdown()
        self.http.server_close()


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def origins(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Origin, Origin]]:
    listed = Origin(tmp_path_factory.mktemp("listed"))
    other = Origin(tmp_path_factory.mktemp("other"))
    try:
        yield listed, other
    finally:
        listed.stop()
        other.stop()


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, origins: tuple[Origin, Origin]
) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("cors")
    with module_database(directory) as url:
        served = start(url, directory / "logs", "--cors-origins", origins[0].url)
        try:
            yield served
        finally:
            served.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip(f"no {CHROMIUM}: install Debian's chromium (apt-get install -y chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def page_at(browser: Any, origin: Origin) -> Any:
    context = browser.new_context()
    tab = context.new_page()
    tab.goto(f"{origin.url}/index.html")
    return context, tab


def registered(server: Server, agent: str) -> bool:
    query = "query($id: String!) { principal(id: $id) { id } }"
    return server.data(query, {"id": agent})["principal"] is not None


def test_a_listed_origins_page_queries_mutates_and_subscribes(
    server: Server, origins: tuple[Origin, Origin], browser: Any
) -> None:
    task, tokens = routed_task(server, packet())
    context, tab = page_at(browser, origins[0])
    try:
        token = server.owner_token
        read = tab.evaluate(FETCH, [server.graphql_url, token, "{ me { id } }", {}])
        assert read["status"] == 200 and read["body"]["data"]["me"]["id"] == "admin", read
        assert read["requestId"]  # exposed to the page
        wrote = tab.evaluate(FETCH, [server.graphql_url, token, MUTATION, {"n": "from-page"}])
        assert wrote["body"]["data"]["register_agent"]["agent_id"] == "admin/from-page", wrote
        heard = tab.evaluate(SUBSCRIBE, [server.ws_url, tokens["bob"], task["id"]])
        assert heard.get("event") == {
            "kind": "snapshot",
            "task_id": task["id"],
            "to_state": "routed",
        }, heard
    finally:
        context.close()
    assert registered(server, "admin/from-page")


def test_another_origins_page_is_refused_and_nothing_runs(
    server: Server, origins: tuple[Origin, Origin], browser: Any
) -> None:
    task, tokens = routed_task(server, packet())
    context, tab = page_at(browser, origins[1])
    try:
        token = server.owner_token
        read = tab.evaluate(FETCH, [server.graphql_url, token, "{ me { id } }", {}])
        assert "failed" in read, read  # the preflight was refused: fetch() fails
        wrote = tab.evaluate(FETCH, [server.graphql_url, token, MUTATION, {"n": "refused"}])
        assert "failed" in wrote, wrote
        heard = tab.evaluate(SUBSCRIBE, [server.ws_url, tokens["bob"], task["id"]])
        assert heard == {"closed": 1006, "opened": False}, heard  # refused before the upgrade
    finally:
        context.close()
    assert not registered(server, "admin/refused")


def test_the_board_loads_and_goes_live_under_trusted_documents_only(
    tmp_path_factory: pytest.TempPathFactory, browser: Any
) -> None:
    """Every document the board sends as it loads (its page, states, inbox, the live
    subscriptions) is in the server's manifest: app/api/documents.json."""
    directory = tmp_path_factory.mktemp("trusted-board")
    database = module_database(directory)
    with ThreadPoolExecutor(1) as thread:  # its event loop apart from playwright's
        url = thread.submit(database.__enter__).result()
    server = start(url, directory / "logs", "--trusted-documents-only")
    try:
        coder = server.run_data("mutations/register_agent", {"name": "coder"})
        handoff = {"project": "seen", "assignee": "admin/coder", "packet": packet()}
        task = server.run_data("mutations/handoff", {"input": handoff})["handoff"]
        context = browser.new_context()
        tab = context.new_page()
        problems: list[str] = []
        tab.on("console", lambda m: m.type == "error" and problems.append(m.text))
        try:
            tab.goto(f"{server.base_url}/board?project=seen")
            tab.fill("#token", server.owner_token)
            tab.click("#token-form button[type=submit]")
            until = "window.prickleBoard.size >= 1 && prickleBoard.status === 'live'"
            wait_until(tab, until)
            assert tab.evaluate("(id) => prickleBoard.stateOf(id)", task["id"]) == "routed"
            accept = {"task_id": task["id"]}  # a move, heard live by the board
            server.run_data("mutations/accept_task", accept, coder["register_agent"]["token"])
            wait_until(tab, f"prickleBoard.stateOf('{task['id']}') === 'accepted'")
        finally:
            context.close()
        assert not problems, problems
    finally:
        server.stop()
        with ThreadPoolExecutor(1) as thread:
            thread.submit(database.__exit__, None, None, None).result()
