"""Reads from a streaming replica (`--database-read-url`), on a private PostgreSQL cluster
and a hot standby of it (tests/support/pg_cluster.py: initdb, `pg_basebackup -R`, pg_ctl), one of
each for the module, and one server on them.

- A client's read after its own write sees it (GraphQL's `task` and `task_events`, A2A's
  GetTask), the standby paused or not (its read goes to the primary once the standby has
  not replayed the write within PRICKLE_DB_READ_WAIT); another client's reads are served
  by the paused standby, never past the log it holds; the `Prickle-Position` a response
  answers, sent back by another client, makes its read as fresh.
- Under a mixed load: no client ever reads a task older than its own last write or read
  of it, the standby serves a share of the reads, and neither pool outgrows its share of
  `--database-connections`.
- The standby restarted under load: reads go to the primary meanwhile, every write is
  made, and the standby serves again by itself, said once each way.
- The start-up refusals: a read URL that is not a standby, another cluster, another
  database; a connection budget too small for the replica's pool.

The PostgreSQL passes only, and only once (the routing is the store's on either path: the
fast-paths-off pass leaves it out).
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from factory import PACKET
from pg_cluster import Cluster, bindir, private_cluster, private_standby
from server import (
    PG_ADMIN,
    Server,
    connect,
    document,
    free_port,
    pg_url,
    postgres_only,
    prickle,
    start,
)
from sqlalchemy.engine import make_url

from app import settings
from app.storage.engine import startup_settings
from app.storage.pooling import DatabaseSettingError, budget
from app.storage.replica import check

pytestmark = [
    postgres_only,
    pytest.mark.postgres,
    pytest.mark.skipif(
        os.environ.get("PRICKLE_FAST_PATHS", "").lower() in ("off", "0", "false", "no"),
        reason="where a read goes is the same on either path: the fast-paths-on pass runs it",
    ),
]

WAIT = 0.3  # PRICKLE_DB_READ_WAIT: how long a read waits for the standby to catch up
CONNECTIONS = 8  # --database-connections: LISTEN, the probe, 3 for the primary, 3 replica
NEXT = {"accepted": "stop_run", "waiting": "resume_run"}
TASK = "query($id: ID!) { task(id: $id) { version } }"
POSITION = "prickle-position"


@pytest.fixture(scope="module")
def clusters() -> Iterator[tuple[Cluster, Cluster]]:
    if bindir() is None:
        pytest.skip("no PostgreSQL binaries (initdb, pg_ctl, pg_basebackup) on this machine")
    with private_cluster() as primary, private_standby(primary) as standby:
        yield primary, standby


@pytest.fixture(scope="module")
def served(
    clusters: tuple[Cluster, Cluster], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    primary, standby = clusters
    server = start(
        primary.url,
        tmp_path_factory.mktemp("replica"),
        "--database-read-url",
        standby.url,
        "--database-connections",
        str(CONNECTIONS),
        env={"PRICKLE_DB_READ_WAIT": str(WAIT)},
    )
    try:
        yield server
    finally:
        server.stop()


def _routed(server: Server) -> dict[str, float]:
    """The server's routed reads so far: `replica`, `lagging`, `unavailable` (the primary's,
    by why)."""
    text = server.client.get(f"{server.base_url}/metrics").text
    counts = {"replica": 0.0, "lagging": 0.0, "unavailable": 0.0}
    line = re.compile(r'^prickle_routed_reads_total\{served="(\w+)",why="(\w*)"\} (\S+)$')
    for found in map(line.match, text.splitlines()):
        if found:
            counts[found[2] or found[1]] += float(found[3])
    return counts


def _task(server: Server, owner: str, worker: str) -> str:
    variables = {"input": {"project": "replica", "assignee": "admin/worker", "packet": PACKET}}
    task_id: str = server.run_data("mutations/handoff", variables, owner)["handoff"]["id"]
    server.run_data("mutations/accept_task", {"task_id": task_id}, worker)
    return task_id


def _move(server: Server, token: str, task_id: str, state: str) -> tuple[dict[str, Any], str]:
    """The next move of the task (stop_run or resume_run): the task after it, and the
    position the response answered."""
    verb = NEXT[state]
    body = {"query": document(f"mutations/{verb}"), "variables": {"task_id": task_id}}
    response = server.client.post(server.graphql_url, json=body, headers=server.headers(token))
    answer = response.json()
    assert not answer.get("errors"), answer
    return answer["data"][verb], response.headers[POSITION]


def _version(server: Server, token: str, task_id: str, sent: str | None = None) -> int:
    headers = server.headers(token) | ({POSITION: sent} if sent else {})
    body = {"query": TASK, "variables": {"id": task_id}}
    answer = server.client.post(server.graphql_url, json=body, headers=headers).json()
    assert not answer.get("errors"), answer
    return int(answer["data"]["task"]["version"])


def _events(server: Server, token: str, task_id: str) -> int:
    """How many of the task's events `task_events` answers."""
    query = "query($id: ID!) { task_events(task_id: $id, first: 100) { edges { cursor } } }"
    edges = server.data(query, {"id": task_id}, token)["task_events"]["edges"]
    return len(edges)


def _a2a_state(server: Server, token: str, agent: str, task_id: str) -> str:
    """The task's state as A2A's GetTask answers it, at its assignee `agent`."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": task_id}}
    headers = {"A2A-Version": "1.0", **server.headers(token)}
    answer = server.client.post(f"{server.base_url}/a2a/{agent}", json=body, headers=headers)
    return str(answer.json()["result"]["status"]["state"])


def _wait_for_replay(standby: Cluster, state: str) -> None:
    """pg_wal_replay_pause() is asked for, then takes effect: wait until it has."""
    while standby.psql("SELECT pg_get_wal_replay_pause_state()") != state:
        time.sleep(0.01)


def _workers(server: Server) -> tuple[str, str]:
    """The owner's token and its agent admin/worker's, registered once."""
    owner = server.owner_token
    assert owner is not None
    if not hasattr(server, "worker"):
        server.worker = server.register(owner, "worker")  # type: ignore[attr-defined]
    return owner, server.worker  # type: ignore[attr-defined]


def test_own_writes_are_read_fresh_while_the_standby_lags_and_others_read_it(
    clusters: tuple[Cluster, Cluster], served: Server
) -> None:
    primary, standby = clusters
    owner, worker = _workers(served)
    task_id = _task(served, owner, worker)
    version = _version(served, worker, task_id)  # the worker has read it: its floor
    logged = _events(served, worker, task_id)  # its own accept's event among them
    assert logged == int(primary.psql(f"SELECT count(*) FROM events WHERE task_id = '{task_id}'"))
    standby.psql("SELECT pg_wal_replay_pause()")
    _wait_for_replay(standby, "paused")
    try:
        before = _routed(served)
        moved, position = _move(served, owner, task_id, "accepted")
        assert moved["version"] == version + 1
        began = time.monotonic()
        assert _version(served, owner, task_id) == version + 1  # the primary's, after the wait
        assert time.monotonic() - began >= WAIT
        after = _routed(served)
        assert after["lagging"] == before["lagging"] + 1
        # another client is served by the paused standby, as it stood
        assert _version(served, worker, task_id) == version
        assert _routed(served)["replica"] == after["replica"] + 1
        # the log too: the move's event for its writer, the standby's log for the other
        # (never past what the standby holds: no gap for a cursor read there)
        assert _events(served, owner, task_id) == logged + 1
        assert _events(served, worker, task_id) == logged
        # and A2A's GetTask: the writer's fresh (the primary's), the other's the standby's
        agent = served.data("{ me { id } }", token=worker)["me"]["id"]
        routed = _routed(served)
        fresh = _a2a_state(served, owner, agent, task_id)
        stale = _a2a_state(served, worker, agent, task_id)
        assert fresh != stale
        assert _routed(served)["lagging"] == routed["lagging"] + 1
        assert _routed(served)["replica"] == routed["replica"] + 1
        # ... unless it carries the position the owner's write answered (another process's)
        assert _version(served, worker, task_id, sent=position) == version + 1
        # a read never goes backwards: the worker has seen the move now
        assert _version(served, worker, task_id) == version + 1
        assert _version(served, owner, task_id) == version + 1
        # a position is the server's answer sent back: anything else is refused
        headers = served.headers(worker) | {POSITION: "yesterday"}
        body = {"query": TASK, "variables": {"id": task_id}}
        refused = served.client.post(served.graphql_url, json=body, headers=headers)
        assert refused.status_code == 400
        assert refused.json()["errors"][0]["extensions"]["code"] == "invalid_input"
    finally:
        standby.psql("SELECT pg_wal_replay_resume()")
    _wait_for_replay(standby, "not paused")
    # the standby serves the owner again once it has replayed the move
    before = _routed(served)["replica"]
    deadline = time.monotonic() + 10
    while _routed(served)["replica"] == before:
        assert _version(served, owner, task_id) == version + 1
        assert time.monotonic() < deadline, "the standby never served the owner again"


def test_under_a_mixed_load_no_read_is_stale_and_the_standby_serves_reads(
    clusters: tuple[Cluster, Cluster], served: Server
) -> None:
    primary, standby = clusters
    owner, worker = _workers(served)
    tasks = [_task(served, owner, worker) for _ in range(4)]
    stale: list[tuple[str, int, int]] = []
    answered = [0]
    seen: dict[str, list[int]] = {"primary": [], "standby": []}
    stopping = threading.Event()

    def writer(task_id: str) -> None:
        """Moves its task and reads it back twice, 8 times: never older than the move."""
        client = Server(served.base_url, served.database_url, served.process, served.logs)
        state, version = "accepted", _version(client, owner, task_id)
        try:
            for _ in range(8):
                moved, _ = _move(client, owner, task_id, state)
                state, version = moved["state"], moved["version"]
                for _ in range(2):
                    got = _version(client, owner, task_id)
                    answered[0] += 1
                    if got < version:
                        stale.append((task_id, got, version))
        finally:
            client.client.close()

    def reading() -> None:
        """Another client (the assignee) reads the tasks all along: never older than it
        read before."""
        client = Server(served.base_url, served.database_url, served.process, served.logs)
        last = dict.fromkeys(tasks, 0)
        try:
            while not stopping.is_set():
                for task_id in tasks:
                    got = _version(client, worker, task_id)
                    answered[0] += 1
                    if got < last[task_id]:
                        stale.append((task_id, got, last[task_id]))
                    last[task_id] = got
        finally:
            client.client.close()

    async def sample(cluster: Cluster, into: list[int]) -> None:
        conn = await connect(cluster.url)
        try:
            while not stopping.is_set():
                into.append(
                    await conn.fetchval(
                        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                        " AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
                    )
                )
                await asyncio.sleep(0.02)
        finally:
            await conn.close()

    async def load() -> None:
        samplers = [
            asyncio.create_task(sample(primary, seen["primary"])),
            asyncio.create_task(sample(standby, seen["standby"])),
        ]
        try:
            with ThreadPoolExecutor(6) as pool:
                readers = [pool.submit(reading) for _ in range(2)]
                writers = [pool.submit(writer, t) for t in tasks]
                await asyncio.to_thread(lambda: [w.result() for w in writers])
                stopping.set()
                for r in readers:
                    r.result()
        finally:
            stopping.set()
            await asyncio.gather(*samplers)

    before = _routed(served)
    began = time.monotonic()
    asyncio.run(load())
    took = time.monotonic() - began
    after = _routed(served)
    replica = after["replica"] - before["replica"]
    routed = sum(after.values()) - sum(before.values())
    print(
        f"\n{answered[0]} reads in {took:.1f}s, {routed:.0f} routed: {replica:.0f} by the "
        f"standby ({replica / routed:.0%}), {after['lagging'] - before['lagging']:.0f} by the "
        f"primary after waiting; {len(stale)} stale"
    )
    assert stale == []
    assert replica > 0
    # the budget: LISTEN, the probe and the pool of 3 on the primary, 3 on the standby
    assert max(seen["primary"]) <= CONNECTIONS - 3, max(seen["primary"])
    assert max(seen["standby"]) <= 3, max(seen["standby"])


def test_the_standby_restarted_under_load_reads_go_to_the_primary_and_it_is_back(
    clusters: tuple[Cluster, Cluster], served: Server
) -> None:
    _, standby = clusters
    owner, worker = _workers(served)
    task_id = _task(served, owner, worker)
    codes: list[str] = []
    stopping = threading.Event()

    def reads() -> None:
        client = httpx.Client(timeout=30)
        body = {"query": "{ tasks(first: 5) { edges { node { id version } } } }"}
        try:
            while not stopping.is_set():
                answer = client.post(
                    served.graphql_url, json=body, headers=served.headers(owner)
                ).json()
                codes.append(
                    answer["errors"][0]["extensions"]["code"] if "errors" in answer else "ok"
                )
        finally:
            client.close()

    thread = threading.Thread(target=reads, daemon=True)
    thread.start()
    state, moves, first = "accepted", 0, _version(served, owner, task_id)
    try:
        while len(codes) < 20:
            time.sleep(0.01)
        standby.stop("fast")
        down = _routed(served)["unavailable"]
        for _ in range(5):  # writes made, and read back fresh, while it is down
            moved, _ = _move(served, owner, task_id, state)
            state, moves = moved["state"], moves + 1
            assert _version(served, owner, task_id) == moved["version"]
        assert _routed(served)["unavailable"] > down  # reads went to the primary
        standby.start()
        back = _routed(served)["replica"]
        deadline = time.monotonic() + 20
        while _routed(served)["replica"] == back:  # back by itself
            assert time.monotonic() < deadline, "the standby never served again"
            time.sleep(0.05)
    finally:
        stopping.set()
        thread.join(timeout=30)
    assert set(codes) <= {"ok", "unavailable"}, set(codes)
    assert codes.count("unavailable") <= 3, codes.count("unavailable")  # in flight at its stop
    assert _version(served, owner, task_id) == first + moves
    output = served.output()
    assert output.count("the read replica") >= 2, output[-2000:]
    assert "is unavailable" in output and "answers again" in output
    assert "Traceback" not in output


def _refused(result: Any) -> str:
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return str(lines[0])


async def test_a_read_url_that_is_no_standby_of_the_database_is_refused_in_one_line(
    clusters: tuple[Cluster, Cluster], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`prickle serve` exits with 2 and one line; the other refusals are the same checks'
    (app/storage/replica.py's `check`, app/storage/pooling.py's `budget`), asked here
    without a process each."""
    primary, standby = clusters
    args = ("--database-url", primary.url, "--database-read-url", primary.url)
    result = await asyncio.to_thread(prickle, "serve", "--port", str(free_port()), *args)
    assert "is not a standby (pg_is_in_recovery() is false)" in _refused(result)
    other_database = make_url(standby.url).set(database="postgres").render_as_string(False)
    other_cluster = pg_url(make_url(PG_ADMIN).database or "test")
    refusals = {
        other_database: "is database 'postgres', not the database URL's 'prickle'",
        other_cluster: "is another cluster than the database URL's",
    }
    for read_url, said in refusals.items():
        with pytest.raises(DatabaseSettingError, match=re.escape(said)):
            await check(primary.url, read_url, False, startup_settings())
    await check(primary.url, standby.url, False, startup_settings())  # a standby
    monkeypatch.setattr(settings, "_current", settings.read({"database_connections": "4"}))
    with pytest.raises(DatabaseSettingError, match="read replica 1; give at least 5"):
        budget(20, listening=True, reading=True)
