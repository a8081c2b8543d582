"""A real server on a private PostgreSQL cluster (tests/support/pg_cluster.py) that is restarted
fast, restarted as after a crash, has its backends killed and is stopped for a while, all
under load (writers handing off and accepting tasks, a subscriber over WebSockets and one
over Server-Sent Events):

- every acknowledged move is in the log (0 lost), and each subscriber got every event of
  the project once, in order;
- every refusal is `unavailable` (HTTP 503 with Retry-After when nothing else answered);
- `/readyz` answers 503 while the database is stopped and 200 once it is back; `/healthz`
  answers 200 throughout, saying the database's state;
- the log has a WARNING for each outage the probe saw and an INFO for its end, no
  traceback, no error;
- the LISTEN connection is opened again after each restart.

How fast each comes back is measured by tests/bench/outage.py (docs/operations.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any

import asyncpg
import httpx
import pytest
from factory import PACKET
from live import BRIEF, Live, opened
from pg_cluster import Cluster, bindir, private_cluster
from server import Server
from sse import streamed
from websockets.exceptions import ConnectionClosed

pytestmark = [
    pytest.mark.once,  # it brings its own PostgreSQL: the backend of the pass does not matter
    pytest.mark.serial,
    pytest.mark.skipif(bindir() is None, reason="no PostgreSQL binaries (initdb, pg_ctl)"),
]

HANDOFF = "mutation($input: HandoffInput!) { handoff(input: $input) { id } }"
ACCEPT = "mutation($id: ID!) { accept_task(task_id: $id) { id version } }"
WRITERS = 4
PROJECT = "outage"
LISTENING = "SELECT backend_start FROM pg_stat_activity WHERE application_name = 'prickle-listen'"


class Load:
    """Writers handing tasks to admin/coder, who accepts each; what was acknowledged and
    what was refused."""

    def __init__(self, server: Server, owner: str, agent: str) -> None:
        self.server = server
        self.owner, self.agent = owner, agent
        self.acknowledged: list[tuple[str, str]] = []  # (task id, verb)
        self.refusals: list[tuple[int, str | None, str | None, dict[str, Any]]] = []
        self.running = True

    async def run(self) -> None:
        async with httpx.AsyncClient(timeout=30) as http:
            await asyncio.gather(*(self._writer(http, n) for n in range(WRITERS)))

    async def _writer(self, http: httpx.AsyncClient, n: int) -> None:
        made = 0
        while self.running:
            made += 1
            packet = {**PACKET, "task": f"writer {n} task {made}"}
            task = {"project": PROJECT, "assignee": "admin/coder", "packet": packet}
            found = await self._send(http, HANDOFF, {"input": task}, self.owner, "handoff")
            if found is not None:
                await self._send(http, ACCEPT, {"id": found["id"]}, self.agent, "accept_task")

    async def _send(
        self, http: httpx.AsyncClient, query: str, variables: dict[str, Any], token: str, verb: str
    ) -> dict[str, Any] | None:
        headers = {"Authorization": f"Bearer {token}"}
        body = {"query": query, "variables": variables}
        response = await http.post(self.server.graphql_url, json=body, headers=headers)
        body = response.json()
        if body.get("errors"):
            error = body["errors"][0]
            retry = response.headers.get("retry-after")
            self.refusals.append((response.status_code, retry, verb, error["extensions"]))
            await asyncio.sleep(0.05)
            return None
        found: dict[str, Any] = body["data"][verb]
        self.acknowledged.append((found["id"], verb))
        return found


class Subscriber:
    """The project's events over graphql-transport-ws, resubscribing after its last cursor
    when its operation ends with an error."""

    def __init__(self, live: Live) -> None:
        self.live = live
        self.seqs: list[int] = []
        self.cursor: str | None = None
        self.errors: list[dict[str, Any]] = []

    async def run(self) -> None:
        await self.live.subscribe({"project": PROJECT}, query=BRIEF)
        while True:
            try:
                message = await self.live.receive(timeout=3600)
            except TimeoutError:
                continue
            payload = message.get("payload") or {}
            if message["type"] == "next" and not payload.get("errors"):
                event = payload["data"]["task_events"]
                self.seqs.append(event["seq"])
                self.cursor = event["cursor"]
            elif message["type"] in ("error", "next", "complete"):
                self.errors += payload if isinstance(payload, list) else payload.get("errors", [])
                await asyncio.sleep(0.2)
                after = {"after": self.cursor} if self.cursor else {}
                await self.live.subscribe({"project": PROJECT, **after}, query=BRIEF)


class EventStream:
    """The project's events over Server-Sent Events, reconnecting with Last-Event-ID after
    the stream ends or is refused."""

    def __init__(self, server: Server, token: str) -> None:
        self.server, self.token = server, token
        self.seqs: list[int] = []
        self.last_id: str | None = None
        self.errors: list[dict[str, Any]] = []

    async def run(self) -> None:
        while True:
            with contextlib.suppress(AssertionError, httpx.HTTPError):  # refused (503), cut
                await self._follow()
            await asyncio.sleep(0.2)

    async def _follow(self) -> None:
        variables = {"project": PROJECT}
        async with streamed(self.server, self.token, variables, last_event_id=self.last_id) as s:
            while (message := await s.message(timeout=3600)) is not None:
                if message.event != "next":
                    return
                if message.data.get("errors"):
                    self.errors += message.data["errors"]
                    return
                self.seqs.append(message.data["data"]["task_events"]["seq"])
                self.last_id = message.id


async def _until(check: Any, timeout: float = 20) -> None:
    """Wait until `check()` holds (a hang guard, not a timing)."""
    deadline = time.monotonic() + timeout
    while not await check():
        assert time.monotonic() < deadline, f"it did not happen: {check}"
        await asyncio.sleep(0.05)


async def _listening_since(cluster: Cluster, since: float) -> bool:
    """Whether a LISTEN connection opened after `since` (wall clock) is there."""
    try:
        conn = await asyncpg.connect(cluster.dsn, timeout=2)
    except (OSError, asyncpg.PostgresError):
        return False
    try:
        rows = await conn.fetch(LISTENING)
    finally:
        await conn.close()
    return any(r["backend_start"].timestamp() >= since for r in rows)


async def test_a_server_rides_out_restarts_and_a_stopped_database(start_server: Any) -> None:
    with private_cluster() as cluster:
        server = start_server(url=cluster.url)
        owner = server.owner_token
        agent = server.register(owner, "coder")
        http = httpx.AsyncClient(base_url=server.base_url, timeout=10)
        ready: list[int] = []

        async def probe_ready() -> None:
            while True:
                ready.append((await http.get("/readyz")).status_code)
                await asyncio.sleep(0.1)

        async with opened(server, owner) as live:
            subscriber = Subscriber(live)
            stream = EventStream(server, owner)
            load = Load(server, owner, agent)
            tasks = [
                asyncio.create_task(load.run()),
                asyncio.create_task(subscriber.run()),
                asyncio.create_task(stream.run()),
                asyncio.create_task(probe_ready()),
            ]
            fresh = server.token(owner="ops")  # never used: its check needs the database
            try:
                await _outages(cluster, http, load, tasks[0], lambda: _refused_anew(server, fresh))
                load.running = False
                await tasks[0]
                await _until(lambda: _delivered(cluster, subscriber.seqs))
                await _until(lambda: _delivered(cluster, stream.seqs))
            finally:
                load.running = False
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                await http.aclose()

        await _assert_nothing_lost(cluster, load, subscriber, stream)
        server.stop()  # before its database: all it logged is in
    assert 503 in ready and ready[-1] == 200
    _assert_logged_once(server)


async def _outages(
    cluster: Cluster,
    http: httpx.AsyncClient,
    load: Load,
    loading: asyncio.Task[None],
    while_stopped: Any,
) -> None:
    async def moving() -> None:  # wait for the load to make moves again
        before = len(load.acknowledged)
        try:
            await _until(lambda: _more(load, before))
        except AssertionError:
            if loading.done():
                loading.result()  # its error
            raise AssertionError(f"no moves: {load.refusals[-3:]}") from None

    await moving()
    for mode in ("fast", "immediate"):  # a restart, and one as after a crash
        cluster.stop(mode)
        started = time.time()
        cluster.start()
        await moving()
        await _until(lambda started=started: _listening_since(cluster, started))
    await _kill_backends(cluster)
    await moving()
    cluster.stop("fast")  # stopped for a while
    await _until(lambda: _state(http, 503, "down"))
    await while_stopped()
    await asyncio.sleep(1)
    started = time.time()
    cluster.start()
    await _until(lambda: _state(http, 200, "up"))
    await moving()
    await _until(lambda: _listening_since(cluster, started))


async def _refused_anew(server: Server, token: str) -> None:
    """While the database is down, a new WebSocket is closed with 1013 (try again later)
    and a new event stream answers 503 `unavailable`: neither is told its token is bad."""
    with pytest.raises(ConnectionClosed) as closed:
        async with opened(server, token):
            pass
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1013
    headers = {"Authorization": f"Bearer {token}", "Accept": "text/event-stream"}
    body = {"query": BRIEF, "variables": {"project": PROJECT}}
    async with httpx.AsyncClient(timeout=10) as http:
        stream = await http.post(server.graphql_url, json=body, headers=headers)
    assert stream.status_code == 503 and stream.headers["retry-after"] == "1"
    assert stream.json()["errors"][0]["extensions"]["code"] == "unavailable"
    # a page of tasks (on the fast paths, one compiled statement) likewise
    owner = {"Authorization": f"Bearer {server.owner_token}"}
    page = {"query": "{ tasks(first: 5) { total_count edges { node { id state } } } }"}
    async with httpx.AsyncClient(timeout=10) as http:
        read = await http.post(server.graphql_url, json=page, headers=owner)
        figures = await http.get(f"{server.base_url}/metrics")
    assert read.status_code == 503, read.text
    assert {e["extensions"]["code"] for e in read.json()["errors"]} == {"unavailable"}
    assert figures.status_code == 200 and "prickle_database_up 0.0" in figures.text


async def _more(load: Load, before: int) -> bool:
    return len(load.acknowledged) > before + 10


async def _state(http: httpx.AsyncClient, ready: int, database: str) -> bool:
    health = await http.get("/healthz")
    assert health.status_code == 200
    return (await http.get("/readyz")).status_code == ready and health.json()[
        "database"
    ] == database


async def _kill_backends(cluster: Cluster) -> None:
    conn = await asyncpg.connect(cluster.dsn)
    try:
        await conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = $1 AND pid <> pg_backend_pid()",
            "prickle",
        )
    finally:
        await conn.close()


async def _project_seqs(cluster: Cluster) -> list[int]:
    conn = await asyncpg.connect(cluster.dsn)
    try:
        rows = await conn.fetch("SELECT seq FROM events WHERE project = $1 ORDER BY seq", PROJECT)
    finally:
        await conn.close()
    return [r["seq"] for r in rows]


async def _delivered(cluster: Cluster, seqs: list[int]) -> bool:
    return seqs[-1:] == (await _project_seqs(cluster))[-1:]


async def _assert_nothing_lost(
    cluster: Cluster, load: Load, subscriber: Subscriber, stream: EventStream
) -> None:
    conn = await asyncpg.connect(cluster.dsn)
    try:
        rows = await conn.fetch("SELECT task_id, verb FROM events WHERE project = $1", PROJECT)
    finally:
        await conn.close()
    logged = {(r["task_id"], r["verb"]) for r in rows}
    lost = [move for move in load.acknowledged if move not in logged]
    assert len(load.acknowledged) > 40 and lost == []
    logged_seqs = await _project_seqs(cluster)
    assert subscriber.seqs == logged_seqs  # every event once, in order
    assert stream.seqs == logged_seqs
    codes = {extensions["code"] for _, _, _, extensions in load.refusals}
    codes |= {e.get("extensions", {}).get("code") for e in subscriber.errors + stream.errors}
    assert codes <= {"unavailable"}, load.refusals[:5]
    for status, retry_after, _, extensions in load.refusals:
        assert extensions["outcome"] in ("none", "unknown")
        assert status == 503 and retry_after == "1"


def _assert_logged_once(server: Server) -> None:
    text = (server.logs / "stderr").read_text()
    lines = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    assert "Traceback" not in text
    assert [x for x in lines if x["level"] == "error"] == []
    down = [x for x in lines if "the database is unreachable" in x["message"]]
    back = [x for x in lines if "the database is back" in x["message"]]
    assert 1 <= len(down) == len(back), (down, back)
    assert [x for x in lines if x["level"] == "warning"] == down  # one WARNING an outage
    assert all(x["level"] == "info" for x in back)
