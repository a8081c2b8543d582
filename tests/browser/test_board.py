"""The live board at /board, driven in headless Chromium against a real `prickle serve`.

The board's database is seeded with 1,000 tasks through the service layer before the server
starts; the tests then move tasks through the HTTP GraphQL API and watch the page. The
browser is Debian's `chromium` driven by the `playwright` package (never `playwright
install`); without /usr/bin/chromium the browser tests skip. Figures and a screenshot go to
test-artifacts/.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from axe import every_violation
from bulk import copy_tasks
from chromium import ARTIFACTS, needs_chromium, wait_until
from factory import ALICE, BOB, CODER, HELPER, call, evidence, give, packet, result, setup
from live import last_cursor
from server import Server, free_port, module_database, start

from app.service import admin
from app.storage.migrate import upgrade
from app.storage.store import Store

pytestmark = pytest.mark.once  # the same on either backend: not run on PostgreSQL

PROJECT = "board"
TASKS = 1000
FITS = "Rotate the signing keys of the billing API"  # longer than a line, shorter than three
LONG = "Reconcile the invoices of every customer in the northern region against the ledger export"
SPARES = 4  # routed tasks the tests move, one or more each
RENDER_BUDGET_MS = 2000  # generous: a slow CI machine must not fail, a frozen page must
FROM_TOKEN_BUDGET_MS = 8000  # the target is 1 s (docs/board.md has the figure); this catches a hang
APPLY_BUDGET_MS = 2000  # a frozen page, not a loaded machine (the figures: docs/board.md)
MISSED = 1000  # events made while the board is away
CATCH_UP_BUDGET_MS = 8000  # the target is 1 s (docs/board.md has the figure); this catches a hang
HUGE = "huge"  # a project too big to read whole (board.js's WHOLE is 2,000)
HUGE_TASKS = 2500
COLUMN_PAGE = 30  # board.js's: a column's first screen, and each page after it


# The assignee's verbs that spread the seeded tasks across the columns.
SPREAD = [
    (),
    ("accept_task",),
    ("accept_task", "start_task"),
    ("accept_task", "start_task", "wait_on"),
    ("accept_task", "start_task", "return_result"),
    ("hand_back",),
]


@dataclass
class Seeded:
    alice: str  # a person's token: a member of the project, the board's viewer
    bob: str  # the assignee's owner, who moves tasks through the API
    spares: list[str]
    rich: str  # a task with a parent, children, a dependency, a checkpoint and a result
    huge: list[str]  # the tasks of HUGE, oldest first


async def seed(url: str) -> Seeded:
    """1,000 tasks in the project, across states, plus a few the tests move."""
    store = Store(url)
    try:
        await upgrade(store.engine)
        await setup(store)
        rich = await _rich_family(store)
        spares = [(await _task(store, f"Spare {i}")).id for i in range(SPARES)]
        await _task(store, LONG)
        await _task(store, FITS)
        for i in range(TASKS - 6 - SPARES):
            task = await _task(store, f"Task {i}")
            for verb in SPREAD[i % len(SPREAD)]:
                await call(store, verb, CODER, task.id)
        template = await give(store, project=HUGE, display_title="Huge 0")
        huge = [template.id, *await copy_tasks(store, template.id, HUGE_TASKS - 1, "H", "Huge")]
        alice = (await admin.provision_token(store, ALICE)).token
        bob = (await admin.provision_token(store, BOB)).token
        return Seeded(alice, bob, spares, rich, huge)
    finally:
        await store.close()


async def _task(store: Store, title: str, **fields: Any):  # type: ignore[no-untyped-def]
    fields.setdefault("packet", packet(task=f"{title}: add a health check endpoint"))
    return await give(store, project=PROJECT, display_title=title, **fields)


async def _rich_family(store: Store) -> str:
    """A grandparent, the rich task (its child, with a dependency), and a grandchild."""
    dependency = await _task(store, "Write the API schema")
    top = await _task(store, "Ship the health check")
    await call(store, "accept_task", CODER, top.id)
    await call(store, "start_task", CODER, top.id)
    rich = await give(
        store,
        by=CODER,
        project=PROJECT,
        assignee="bob/helper",
        parent_task_id=top.id,
        display_title="Health endpoint and its docs",
        packet=packet(depends_on=[dependency.id], context="The service runs behind nginx."),
    )
    await call(store, "accept_task", HELPER, rich.id)
    await call(store, "start_task", HELPER, rich.id)
    await give(
        store,
        by=HELPER,
        project=PROJECT,
        assignee="bob/coder",
        parent_task_id=rich.id,
        display_title="Document /health in the README",
    )
    checkpoint = {
        "progress": "The handler answers 200; the README section is drafted.",
        "decisions": ["Answer JSON, not plain text"],
        "next_steps": ["Link it from the index"],
        "open_questions": ["Should /health check the database?"],
        "files_touched": ["app/main.py"],
    }
    await call(store, "save_checkpoint", HELPER, rich.id, checkpoint=checkpoint)
    items = [
        evidence([0], summary="curl -i /health answers 200", url="https://ci.example/runs/1"),
        evidence(kind="note", summary="The README draft is open for review"),
    ]
    await call(store, "return_result", HELPER, rich.id, result=result(items))
    return rich.id


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Seeded]]:
    """`prickle serve` (tests/support/server.py) on a database seeded with the project's tasks."""
    directory = tmp_path_factory.mktemp("board")
    with module_database(directory) as url:
        seeded = asyncio.run(seed(url))
        server = start(url, directory / "logs")
        try:
            yield server, seeded
        finally:
            server.stop()


def state_of(page: Any, task_id: str) -> str | None:
    """The column the card is drawn in, read from the DOM."""
    return page.evaluate(
        "(id) => document.querySelector(`.card[data-id='${id}']`)"
        "?.closest('.column')?.dataset.state ?? null",
        task_id,
    )


def open_board(page: Any, server: Server, token: str) -> None:
    page.goto(f"{server.base_url}/board?project={PROJECT}")
    page.fill("#token", token)
    page.click("#token-form button[type=submit]")
    wait_until(page, f"window.prickleBoard.size >= {TASKS} && prickleBoard.status === 'live'")


def move(server: Server, verb: str, task_id: str, token: str, **variables: Any) -> dict:
    return server.run_data(f"mutations/{verb}", {"task_id": task_id, **variables}, token)[verb]


class Proxy:
    """A TCP proxy in front of the server that the test controls: `silence()` keeps every
    connection open but lets nothing through (a network that died without closing
    anything), `restore()` ends those connections and lets new ones through again."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self.port = free_port()
        self.silent = False
        self.open: list[socket.socket] = []
        self.lock = threading.Lock()
        self.listener = socket.create_server(("127.0.0.1", self.port))
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.upstream))
            with self.lock:
                self.open += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                if not self.silent:
                    sink.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                _end(end)

    def silence(self) -> None:
        self.silent = True

    def restore(self) -> None:
        with self.lock:
            ends, self.open = self.open, []
        for end in ends:
            _end(end)
        self.silent = False

    def close(self) -> None:
        self.listener.close()
        self.restore()


def _end(end: socket.socket) -> None:
    with contextlib.suppress(OSError):
        end.shutdown(socket.SHUT_RDWR)
    end.close()


# the page and its assets


def test_the_board_and_its_assets_are_served_by_the_server_itself(board) -> None:
    server, _ = board
    page = httpx.get(f"{server.base_url}/board")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "connect-src 'self'" in page.headers["content-security-policy"]
    for name, kind in [("board.js", "text/javascript"), ("board.css", "text/css")]:
        asset = httpx.get(f"{server.base_url}/board/{name}")
        assert asset.status_code == 200 and asset.headers["content-type"].startswith(kind)
        assert f"/board/{name}" in page.text
        assert not re.search(r"https?://|//cdn", asset.text), f"{name} names another host"
    assert not re.search(r"https?://", page.text)
    assert httpx.get(f"{server.base_url}/board/../app/board.py").status_code == 404
    assert httpx.get(f"{server.base_url}/board/index.htm").status_code == 404


# in the browser


@needs_chromium
def test_a_move_through_the_api_moves_its_card_without_a_reload(board, page) -> None:
    server, seeded = board
    task_id = seeded.spares[0]
    open_board(page, server, seeded.alice)
    assert state_of(page, task_id) == "routed"
    render = page.evaluate("prickleBoard.metrics.render")
    page.evaluate("window.notReloaded = true")

    move(server, "accept_task", task_id, seeded.bob)

    wait_until(page, f"prickleBoard.stateOf('{task_id}') === 'accepted'")
    assert state_of(page, task_id) == "accepted"
    assert page.evaluate("window.notReloaded") is True
    assert page.locator(f".card[data-id='{task_id}']").count() == 1
    applied = page.evaluate("prickleBoard.metrics.applies")
    frame = page.evaluate("prickleBoard.metrics.renderFrame")
    load = page.evaluate("prickleBoard.metrics.load")
    token = page.evaluate("prickleBoard.metrics.fromToken")
    _record(
        {
            "from_token": token,
            "load": load,
            "render": render,
            "render_to_next_frame": frame,
            "apply": applied[-1],
        }
    )
    assert token["tasks"] >= TASKS and token["ms"] < FROM_TOKEN_BUDGET_MS, token
    assert render["ms"] < RENDER_BUDGET_MS, render
    assert applied[-1]["ms"] < APPLY_BUDGET_MS, applied


@needs_chromium
def test_the_board_catches_up_after_a_dropped_connection(board, page) -> None:
    server, seeded = board
    moved, created_title = seeded.spares[1], "Made while the board was away"
    open_board(page, server, seeded.alice)
    before = page.evaluate("prickleBoard.cursor")

    # the connection is closed and stays closed until the test brings it back: the moves
    # below are made while the board is away, however slow the machine
    dropped = page.evaluate("(prickleBoard.pauseConnection(), prickleBoard.status)")
    assert dropped == "reconnecting"
    move(server, "accept_task", moved, seeded.bob)
    move(server, "start_task", moved, seeded.bob)
    inp = {
        "project": PROJECT,
        "assignee": "bob/coder",
        "packet": packet(),
        "display_title": created_title,
    }
    created = server.run_data("mutations/handoff", {"input": inp}, seeded.alice)["handoff"]["id"]
    assert state_of(page, moved) == "routed", "the board saw a move while disconnected"
    assert page.evaluate("prickleBoard.connections") == 1

    page.evaluate("prickleBoard.resumeConnection()")
    wait_until(page, "prickleBoard.status === 'live' && prickleBoard.connections === 2")
    wait_until(page, f"prickleBoard.stateOf('{moved}') === 'working'")
    wait_until(page, f"prickleBoard.stateOf('{created}') === 'routed'")
    assert page.locator(f".card[data-id='{created}']").inner_text().startswith(created_title)
    assert int(page.evaluate("prickleBoard.cursor")) > int(before)


@needs_chromium
def test_a_server_fallen_silent_is_said_within_3_s_and_the_board_catches_up_after(
    board, browser
) -> None:
    server, seeded = board
    proxy = Proxy(int(server.base_url.rsplit(":", 1)[1]))
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    errors: list[str] = []  # a lost network logs failed requests: only script errors count
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        open_board(page, Server(proxy.base_url, "", server.process, server.logs), seeded.alice)
        assert page.locator("#stale").is_hidden()
        page.evaluate("prickleBoard.metrics.lost = null")
        page.add_script_tag(url=f"{proxy.base_url}/vendor/axe.min.js")  # read before the loss

        proxy.silence()  # nothing closes: only the board's own pings can tell
        silenced = time.monotonic()
        wait_until(page, "prickleBoard.status !== 'live'")
        noticed = time.monotonic() - silenced
        lost = page.evaluate("prickleBoard.metrics.lost")
        print(f"board: a silent server noticed after {noticed * 1000:.0f} ms ({lost})")
        assert lost, "the board noticed by its pings, not by a close"  # the figure: docs/board.md
        indicator = page.locator("#live").inner_text()
        assert re.fullmatch(r"(reconnecting|offline) — last event \d+ s ago", indicator), indicator
        banner = page.locator("#stale")
        assert banner.is_visible() and "may be out of date" in banner.inner_text()
        moved = seeded.spares[2]
        move(server, "accept_task", moved, seeded.bob)
        page.screenshot(path=str(ARTIFACTS / "board-stale.png"))
        assert every_violation(page) == []
        assert state_of(page, moved) == "routed"

        proxy.restore()
        wait_until(page, f"prickleBoard.stateOf('{moved}') === 'accepted'")
        wait_until(page, "prickleBoard.status === 'live'")
        assert page.locator("#stale").is_hidden()
        assert errors == []
    finally:
        context.close()
        proxy.close()


@needs_chromium
def test_offline_is_said_at_once_and_the_board_catches_up_when_the_network_is_back(
    board, page
) -> None:
    server, seeded = board
    open_board(page, server, seeded.alice)
    wait_until(page, "prickleBoard.inbox !== null")  # nothing is being read when it goes
    page.context.set_offline(True)
    wait_until(page, "prickleBoard.status === 'offline'")
    assert re.fullmatch(r"offline — last event \d+ s ago", page.locator("#live").inner_text())
    assert "You are offline" in page.locator("#stale").inner_text()
    moved = seeded.spares[3]
    move(server, "accept_task", moved, seeded.bob)
    assert state_of(page, moved) == "routed"

    page.context.set_offline(False)
    wait_until(page, f"prickleBoard.stateOf('{moved}') === 'accepted'")
    assert page.evaluate("prickleBoard.status") == "live"
    assert page.locator("#stale").is_hidden()


async def _checkpoints(url: str, task_ids: list[str], n: int) -> str:
    """`n` checkpoints spread over the tasks, written through the service layer (a move
    through HTTP costs ten times as much): events the board has not seen. The agent's token
    for one more."""
    store = Store(url)
    try:
        for i in range(n):
            task_id = task_ids[i % len(task_ids)]
            await call(store, "save_checkpoint", CODER, task_id, checkpoint={"progress": f"{i}"})
        return (await admin.provision_token(store, CODER)).token
    finally:
        await store.close()


@needs_chromium
def test_the_board_catches_up_on_1000_missed_events_from_its_cursor(board, page) -> None:
    server, seeded = board
    open_board(page, server, seeded.alice)
    working = page.evaluate(
        "[...document.querySelectorAll('.column[data-state=working] .card')]"
        ".filter(c => c.textContent.includes('bob/coder')).map(c => c.dataset.id)"
    )
    assert len(working) > 100
    page.evaluate("prickleBoard.pauseConnection()")
    with ThreadPoolExecutor(1) as thread:  # playwright's loop runs in this one
        coder = thread.submit(asyncio.run, _checkpoints(server.database_url, working, MISSED - 1))
        coder = coder.result()
    last = move(server, "save_checkpoint", working[0], coder, checkpoint={"progress": "last"})
    head = last_cursor(server, seeded.alice, PROJECT)
    assert page.evaluate("prickleBoard.connections") == 1

    page.evaluate("prickleBoard.resumeConnection()")
    wait_until(page, f"prickleBoard.cursor === '{head}'")
    wait_until(page, f"prickleBoard.versionOf('{working[0]}') === {last['version']}")
    caught_up = page.evaluate("prickleBoard.metrics.drawnAt - prickleBoard.metrics.reconnected.at")
    print(f"board: {MISSED} missed events caught up {caught_up:.0f} ms after the reconnection")
    _record({"catch_up": {"events": MISSED, "ms": round(caught_up)}}, "board-catch-up.json")
    assert caught_up < CATCH_UP_BUDGET_MS  # a hang, not a slow machine; the target is 1 s


@needs_chromium
def test_clicking_a_card_shows_the_task_in_full(board, page) -> None:
    server, seeded = board
    open_board(page, server, seeded.alice)
    # read whole after its first screen, each column is newest activity first throughout
    times = page.evaluate(
        "[...document.querySelectorAll('.column')].map(c =>"
        " [...c.querySelectorAll('.card .m time')].map(t => t.getAttribute('datetime')))"
    )
    assert sum(map(len, times)) >= TASKS
    assert all(column == sorted(column, reverse=True) for column in times)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "board-columns.png"))
    page.click(f".card[data-id='{seeded.rich}']")
    detail = page.locator(f"#detail [data-task='{seeded.rich}']")
    detail.wait_for()
    detail.locator("#timeline .tl").first.wait_for()
    shown = detail.inner_text()
    for text in [
        "Health endpoint and its docs",
        "PACKET",
        "The service runs behind nginx.",
        "ACCEPTANCE CRITERIA",
        "GET /health answers 200",
        "uncovered",
        "LATEST CHECKPOINT",
        "The handler answers 200",
        "Should /health check the database?",
        "RESULT",
        "curl -i /health answers 200",
        "Evidence report",
        "incomplete",
        "PARENT",
        "Ship the health check",
        "CHILDREN",
        "Document /health in the README",
        "DEPENDENCIES",
        "Write the API schema",
        "TIMELINE",
        "return_result",
    ]:
        assert text in shown, f"{text!r} is not in the detail panel"
    assert detail.locator("a[href='https://ci.example/runs/1']").count() == 1
    page.set_viewport_size({"width": 1680, "height": 1400})
    page.screenshot(path=str(ARTIFACTS / "board.png"))

    page.click("#detail a[data-open]:has-text('Ship the health check')")
    page.locator("#detail [data-task] h2:has-text('Ship the health check')").wait_for()
    assert "task=" in page.url


@needs_chromium
def test_the_token_is_entered_once_per_tab(board, page) -> None:
    server, seeded = board
    page.goto(f"{server.base_url}/board?project={PROJECT}")
    page.fill("#token", "prk_not-a-token")
    page.click("#token-form button[type=submit]")
    page.locator("#token-error:has-text('did not accept')").wait_for()
    page.fill("#token", seeded.alice)
    page.click("#token-form button[type=submit]")
    wait_until(page, f"prickleBoard.size >= {TASKS}")

    page.reload()
    wait_until(page, f"prickleBoard.size >= {TASKS} && prickleBoard.status === 'live'")
    assert not page.locator("#token-dialog").is_visible()
    assert page.evaluate("sessionStorage.getItem('prickle.token')") == seeded.alice
    assert page.input_value("#project") == PROJECT


def _record(figures: dict, name: str = "board-metrics.json") -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / name).write_text(json.dumps(figures, indent=2) + "\n")
    print(f"board: {json.dumps(figures)}")


@needs_chromium
def test_a_project_too_big_to_read_whole_shows_its_first_screen_and_reads_on_when_scrolled(
    board, page
) -> None:
    server, seeded = board
    page.goto(f"{server.base_url}/board?project={HUGE}")
    page.fill("#token", seeded.alice)
    page.click("#token-form button[type=submit]")
    wait_until(page, "prickleBoard.status === 'live' && prickleBoard.metrics.firstScreen")
    assert page.evaluate("prickleBoard.size") == COLUMN_PAGE  # what is on screen, no more
    routed = page.locator(".column[data-state=routed]")
    assert routed.locator(".n").inner_text() == "1000+"  # the server's count, to its cap
    newest = page.evaluate("[...document.querySelectorAll('.card')].map(c => c.dataset.id)")
    assert set(newest) == set(seeded.huge[-COLUMN_PAGE:])

    routed.locator(".cards").evaluate("l => l.scrollTop = l.scrollHeight")  # to its end
    wait_until(page, f"prickleBoard.size === {2 * COLUMN_PAGE}")  # the next page, read
    routed.get_by_role("button", name=re.compile(r"^Show \d+ more routed$")).click()
    wait_until(page, f"prickleBoard.size === {3 * COLUMN_PAGE}")

    oldest = seeded.huge[0]  # not loaded: its move still moves the counts and draws its card
    assert page.evaluate(f"prickleBoard.stateOf('{oldest}')") is None
    move(server, "accept_task", oldest, seeded.bob)
    wait_until(page, f"prickleBoard.stateOf('{oldest}') === 'accepted'")
    assert routed.locator(".n").inner_text() == "999+"
    accepted = page.locator(".column[data-state=accepted] .n").inner_text()
    assert accepted == "1", accepted
    assert every_violation(page) == []


# The board's first request held in the page until the test lets it go (the move under test
# is made meanwhile): the page's own fetch, wrapped before any of its scripts run.
HOLD_COLUMNS = """
(() => {
  const send = window.fetch;
  window.fetch = (url, init) => {
    if (!window.columnsHeld && String(init?.body).includes("query BoardColumns")) {
      return new Promise((go) => { window.columnsHeld = () => go(send(url, init)); });
    }
    return send(url, init);
  };
})();
"""


@needs_chromium
def test_a_move_made_while_the_first_screen_is_read_is_counted_once(board, page) -> None:
    server, seeded = board
    # the accepted column's first screen: its newest COLUMN_PAGE tasks, all newer than `early`
    early, crowd = seeded.huge[1], seeded.huge[2 : 2 + COLUMN_PAGE]
    later = seeded.huge[2 + COLUMN_PAGE]
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda t: move(server, "accept_task", t, seeded.bob), crowd))
    page.add_init_script(HOLD_COLUMNS)
    page.goto(f"{server.base_url}/board?project={HUGE}")
    page.fill("#token", seeded.alice)
    page.click("#token-form button[type=submit]")
    wait_until(page, "typeof window.columnsHeld === 'function'")
    # no live event can reach the board until the test says: whatever the board hears of
    # the move below, it hears after its first screen is drawn, as on a slow network
    page.evaluate("prickleBoard.pauseConnection()")
    move(server, "accept_task", early, seeded.bob)  # before the counts are read
    page.evaluate("window.columnsHeld()")
    wait_until(page, "prickleBoard.metrics.firstScreen")
    assert page.evaluate(f"prickleBoard.stateOf('{early}')") is None  # counted, not loaded

    page.evaluate("prickleBoard.resumeConnection()")
    move(server, "accept_task", later, seeded.bob)  # after: its event follows any of the first
    wait_until(page, f"prickleBoard.stateOf('{later}') === 'accepted'")

    query = "query ($p: String) { tasks(project: $p, state: accepted, first: 0) { total_count } }"
    accepted = server.data(query, {"p": HUGE}, seeded.alice)["tasks"]["total_count"]
    shown = page.locator(".column[data-state=accepted] .n").inner_text()
    assert shown == str(accepted), f"the board counts {shown} accepted; there are {accepted}"


def test_the_columns_fit_1440_pixels_and_a_phone_opens_on_a_column_with_tasks(
    board, browser
) -> None:
    server, seeded = board
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    try:
        tab = context.new_page()
        open_board(tab, server, seeded.alice)
        overflow = tab.evaluate(
            "(b => b.scrollWidth - b.clientWidth)(document.getElementById('board'))"
        )
        assert overflow <= 0, f"the board scrolls sideways by {overflow} px at 1440 px"
        widths = tab.evaluate(
            "Object.fromEntries([...document.querySelectorAll('.column')]"
            ".map(c => [c.dataset.state, c.getBoundingClientRect().width]))"
        )
        held = tab.evaluate(
            "[...document.querySelectorAll('.column')].filter(c => c.querySelector('.card'))"
            ".map(c => c.dataset.state)"
        )
        assert all(widths[s] < 50 for s in widths if s not in held), widths  # empty: strips
        assert min(widths[s] for s in held) >= 180, widths  # the columns with tasks get the width
        tab.locator(".column[data-state=routed] .cards").evaluate("l => l.scrollTop = 2000")
        header = tab.locator(".column[data-state=routed] > h2").bounding_box()
        column = tab.locator(".column[data-state=routed]").bounding_box()
        assert abs(header["y"] - column["y"]) < 1  # the header stays while the cards scroll

        card = tab.locator(".card", has_text=LONG)
        title = card.locator(".t")
        card.scroll_into_view_if_needed()
        card.get_by_role("button", name="more of the title").wait_for()
        assert title.evaluate("t => t.scrollHeight > t.clientHeight")  # clamped to 3 lines
        assert title.evaluate("t => t.getClientRects()[0].height") <= 3 * 20 + 1
        fits = tab.locator(".card", has_text=FITS)
        fits.scroll_into_view_if_needed()
        assert fits.locator(".t").evaluate("t => t.scrollHeight <= t.clientHeight + 1")
        assert fits.locator(".expand").count() == 0  # no "more" where the whole title shows
        meta = fits.locator(".m").inner_text()
        assert "code" in meta and "bob/coder" in meta and "waiting " in meta, meta
        card.get_by_role("button", name="more of the title").click()
        assert title.evaluate("t => t.scrollHeight <= t.clientHeight")
        assert tab.locator("#detail").is_hidden()  # "more" is not a click on the card
        tab.screenshot(path=str(ARTIFACTS / "board-1440.png"))
        assert every_violation(tab) == []

        tab.set_viewport_size({"width": 390, "height": 844})
        tab.reload()
        wait_until(tab, f"prickleBoard.size >= {TASKS} && prickleBoard.status === 'live'")
        first = tab.evaluate(
            "(() => { const b = document.getElementById('board').getBoundingClientRect();"
            " const c = [...document.querySelectorAll('.column')].find(c =>"
            " c.getBoundingClientRect().right > b.left + 40"
            " && c.getBoundingClientRect().left < b.right);"
            " return c.dataset.state; })()"
        )
        assert first == "routed", first  # not the empty `requested`
        tab.screenshot(path=str(ARTIFACTS / "board-390.png"))
        assert every_violation(tab) == []
        tab.get_by_role("button", name=re.compile("^Inbox")).click()
        items = tab.locator("#inbox-list [data-group=answer] [data-id]")
        assert items.count() == 20 and tab.evaluate("prickleBoard.inboxTotal") > 100
        # paged by the server: the board holds the page it shows, not the whole inbox
        assert len(tab.evaluate("prickleBoard.inbox")) == 20
        tab.get_by_role("button", name="Show 20 more").click()
        wait_until(tab, "document.querySelectorAll('#inbox-list [data-id]').length === 40")
        assert len(tab.evaluate("prickleBoard.inbox")) == 40
        assert every_violation(tab, "#inbox") == []
    finally:
        context.close()
