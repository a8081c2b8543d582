"""The measures, each beside its floor, against one running `prickle serve`.

Every function takes the bench `Setup` (server, tokens) and returns a dict of figures.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect

from tests.bench.raw_broadcast import message_of
from tests.bench.rawhttp import Load, RawConnection, body_of, run_load
from tests.support.server import ROOT, Server, free_port

WITHOUT_FOLDER = ROOT / "tests" / "bench" / "without"


def without(name: str | None) -> dict[str, str]:
    """The environment of a server with the fast path `name` taken off (none: nothing to add);
    tests/bench/without/sitecustomize.py names them."""
    if name is None:
        return {}
    path = os.pathsep.join(filter(None, [str(WITHOUT_FOLDER), os.environ.get("PYTHONPATH")]))
    return {"PYTHONPATH": path, "PRICKLE_BENCH_WITHOUT": name}


CONCURRENCY = 16  # requests in flight, both sides of the HTTP ratio
WINDOW = 2.0  # seconds per HTTP run
RUNS = 5
SUBSCRIBERS = 1000
RESUME_BACK = 10_000

HANDOFF = """mutation($input: HandoffInput!) { handoff(input: $input) { id state version } }"""
ACCEPT = """mutation($id: ID!) { accept_task(task_id: $id) { id state version } }"""
START = """mutation($id: ID!) { start_task(task_id: $id) { id state version } }"""
RETURN = """mutation($id: ID!, $r: ResultInput!) {
  return_result(task_id: $id, result: $r) { id state version } }"""
RESULT = {
    "summary": "done",
    "provenance": "agent_generated",
    "evidence": [{"kind": "test_output", "summary": "the tests pass", "criteria": [0]}],
}
EVENT_FIELDS = "cursor seq kind task_id project from_state to_state waiting_on verb actor at"
SUBSCRIBE = (
    "subscription($project: String, $after: String) { task_events(project: $project, "
    f"after: $after) {{ {EVENT_FIELDS} }} }}"
)


@dataclass
class Setup:
    server: Server
    owner: str  # the owner's token (admin)
    agent: str  # admin/coder's token
    http: httpx.AsyncClient
    pool: list[httpx.AsyncClient] = field(default_factory=list)  # one per loop in flight

    @property
    def pid(self) -> int:
        return self.server.process.pid

    async def gql(
        self,
        query: str,
        variables: dict | None = None,
        token: str | None = None,
        http: httpx.AsyncClient | None = None,
    ) -> Any:
        response = await (http or self.http).post(
            "/graphql",
            json={"query": query, "variables": variables or {}},
            headers={"Authorization": f"Bearer {token or self.owner}"},
        )
        body = response.json()
        if body.get("errors"):
            raise RuntimeError(body["errors"])
        return body["data"]


def client(base_url: str) -> httpx.AsyncClient:
    """One keep-alive HTTP/1.1 connection; the load uses CONCURRENCY of them, one per loop."""
    # the client lets an idle connection go before the server's keep-alive timeout (5 s)
    # does: otherwise a request sent as the server closes it fails (ReadError)
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1, keepalive_expiry=3)
    return httpx.AsyncClient(base_url=base_url, limits=limits, timeout=60, http2=False)


def handoff_input(project: str, **extra: Any) -> dict[str, Any]:
    packet = {"task": "bench", "deliverable_type": "code", "acceptance_criteria": ["it runs"]}
    packet.update(extra.pop("packet", {}))
    return {"project": project, "assignee": "admin/coder", "packet": packet, **extra}


async def lifecycle(setup: Setup, http: httpx.AsyncClient, project: str = "moves") -> int:
    """handoff, accept_task, start_task, return_result: 4 moves."""
    task = (await setup.gql(HANDOFF, {"input": handoff_input(project)}, http=http))["handoff"]
    await setup.gql(ACCEPT, {"id": task["id"]}, setup.agent, http)
    await setup.gql(START, {"id": task["id"]}, setup.agent, http)
    done = await setup.gql(RETURN, {"id": task["id"], "r": RESULT}, setup.agent, http)
    assert done["return_result"]["state"] == "completed", done
    return 4


async def typename(setup: Setup, http: httpx.AsyncClient) -> int:
    await setup.gql("{ __typename }", http=http)
    return 1


async def throughput(setup: Setup, one, seconds: float = WINDOW) -> float:  # type: ignore[no-untyped-def]
    """Operations per second with CONCURRENCY loops (one connection each) calling
    `one(setup, http)` until the window closes."""
    done, took = await load(setup, one, seconds)
    return done / took


async def load(setup: Setup, one, seconds: float) -> tuple[int, float]:  # type: ignore[no-untyped-def]
    """Operations done, and seconds taken, by CONCURRENCY loops calling `one(setup, http)`
    until the window closes (each loop finishes the operation it is in)."""
    done = 0
    deadline = time.perf_counter() + seconds

    async def loop(http: httpx.AsyncClient) -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            got = await one(setup, http)  # not `done += await ...`: that loses updates
            done += got

    start = time.perf_counter()
    await asyncio.gather(*(loop(http) for http in setup.pool[:CONCURRENCY]))
    return done, time.perf_counter() - start


async def raw_lifecycles(
    setup: Setup, seconds: float = WINDOW, concurrency: int = CONCURRENCY
) -> Load:
    """The lifecycle's 4 moves over tests/bench/rawhttp.py: `concurrency` loops, each with
    two keep-alive connections (the owner's for handoff, the agent's for the rest) and one
    request in flight; `done` counts moves, the client's CPU is measured as run_load does."""
    url = setup.server.base_url
    handoff = body_of(HANDOFF, {"input": handoff_input("moves")})
    later = [body_of(q, {"id": "\0", **extra}) for q, extra in ((ACCEPT, {}), (START, {}))]
    later.append(body_of(RETURN, {"id": "\0", "r": RESULT}))
    hole = json.dumps("\0").encode()[1:-1]  # how the id's placeholder reads in the body
    load = Load()

    async def loop(until: float) -> None:
        owner = await RawConnection(url, setup.owner).open()
        agent = await RawConnection(url, setup.agent).open()
        try:
            while time.monotonic() < until:
                _, raw = await owner.post(handoff)
                task_id = json.loads(raw)["data"]["handoff"]["id"].encode()
                answers = [raw]
                for body in later:
                    answers.append((await agent.post(body.replace(hole, task_id)))[1])
                if b"completed" in answers[-1] and not any(b'"errors"' in a for a in answers):
                    load.done += 4
                else:
                    load.failed += 4
                    load.errors.append(b" ".join(answers)[:300].decode(errors="replace"))
        finally:
            await owner.close()
            await agent.close()

    cpu, started = os.times(), time.monotonic()
    await asyncio.gather(*(loop(started + seconds) for _ in range(concurrency)))
    load.seconds = time.monotonic() - started
    after = os.times()
    load.client_cpu = (after.user - cpu.user) + (after.system - cpu.system)
    return load


async def raw_typenames(setup: Setup, seconds: float = WINDOW) -> Load:
    return await run_load(
        setup.server.graphql_url,
        setup.owner,
        body_of("{ __typename }"),
        concurrency=CONCURRENCY,
        seconds=seconds,
    )


async def http_ratio(setup: Setup) -> dict[str, Any]:
    """Moves beside `{ __typename }`, each run side by side: the raw client first (the
    primary figures: server CPU per operation, the database's backends counted in), then
    httpx (the figures the bench gave before, kept beside)."""
    await raw_typenames(setup, 0.5)  # warm up both paths
    await raw_lifecycles(setup, 0.5)
    raw: dict[str, list[dict[str, float]]] = {"typename": [], "move": []}
    httpx_runs: dict[str, list[dict[str, float]]] = {"typename": [], "move": []}
    async with backends_of(setup.server.database_url) as backends:

        async def measured(name: str, run: Callable[[], Awaitable[Load]]) -> None:
            before = cpu_now(setup, await backends())
            load = await run()
            after = cpu_now(setup, await backends())
            if load.failed or not load.done:
                raise RuntimeError(f"{name}: {load.failed} failed: {load.errors}")
            figures = cpu_per_op(before, after, load.done)
            figures["rate"] = load.rate
            figures["client_share"] = load.client_share
            raw[name].append(figures)

        async def measured_httpx(name: str, one) -> None:  # type: ignore[no-untyped-def]
            before = cpu_now(setup, await backends())
            done, took = await load(setup, one, WINDOW)
            after = cpu_now(setup, await backends())
            figures = cpu_per_op(before, after, done)
            figures["rate"] = done / took
            figures["client_share"] = (after["client"] - before["client"]) / took
            httpx_runs[name].append(figures)

        for _ in range(RUNS):
            await measured("typename", lambda: raw_typenames(setup))
            await measured("move", lambda: raw_lifecycles(setup))
            await measured_httpx("typename", typename)
            await measured_httpx("move", lifecycle)
    return {"raw": summary(raw), "httpx": summary(httpx_runs), "ratio": summary(raw)["cpu_ratio"]}


def summary(runs: dict[str, list[dict[str, float]]]) -> dict[str, Any]:
    """Medians and each run's values of the figures; the ratios run by run (paired): server
    CPU (with the database's) per move ÷ per `{ __typename }`, and moves/s ÷ requests/s."""

    def server_cpu(run: dict[str, float]) -> float:
        return run["server"] + run["database"]

    pairs = list(zip(runs["move"], runs["typename"], strict=True))
    cpu_ratios = [server_cpu(m) / server_cpu(t) for m, t in pairs]
    rate_ratios = [m["rate"] / t["rate"] for m, t in pairs]
    figures: dict[str, Any] = {
        "cpu_ratio": statistics.median(cpu_ratios),
        "cpu_ratios": cpu_ratios,
        "rate_ratio": statistics.median(rate_ratios),
        "rate_ratios": rate_ratios,
    }
    for name, name_runs in runs.items():
        figures[name] = {
            part: statistics.median(run[part] for run in name_runs) for part in name_runs[0]
        }
        figures[name]["server_cpu_runs"] = [server_cpu(run) for run in name_runs]
        figures[name]["server_cpu"] = statistics.median(figures[name]["server_cpu_runs"])
    return figures


def cpu_seconds(pid: int) -> float:
    """User and system CPU a process has used (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@asynccontextmanager
async def backends_of(url: str) -> AsyncIterator[Callable[[], Awaitable[list[int]]]]:
    """A function listing the pids of the database's PostgreSQL backends other than its own
    connection's (none on SQLite, whose work is done in the server)."""
    if url.startswith("sqlite"):

        async def none() -> list[int]:
            return []

        yield none
        return
    import asyncpg

    conn = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://", 1))
    sql = (
        "SELECT pid FROM pg_stat_activity"
        " WHERE datname = current_database() AND pid <> pg_backend_pid()"
    )

    async def listed() -> list[int]:
        return [row[0] for row in await conn.fetch(sql)]

    try:
        yield listed
    finally:
        await conn.close()


def cpu_now(setup: Setup, backends: list[int]) -> dict[str, Any]:
    """CPU seconds so far: the server, the database backends, and this client."""
    return {
        "server": cpu_seconds(setup.pid),
        "database": {pid: cpu_seconds(pid) for pid in backends},
        "client": time.process_time(),
    }


def cpu_per_op(before: dict[str, Any], after: dict[str, Any], ops: float) -> dict[str, float]:
    """Milliseconds of CPU per operation, each part. Backends counted are those alive at the
    end (one that closed during the window is missed); the clock ticks are 10 ms."""
    database = sum(t - before["database"].get(pid, 0.0) for pid, t in after["database"].items())
    return {
        "server": (after["server"] - before["server"]) * 1000 / ops,
        "database": database * 1000 / ops,
        "client": (after["client"] - before["client"]) * 1000 / ops,
    }


# SQL statements per nested page (in this process, counting the app's statements)

NESTED = """
query Nested($first: Int!) {
  tasks(project: "chain", first: $first) {
    total_count
    edges { node {
      id parent { id } children { id } dependencies { id }
      results { revision status } checkpoints { id } events { seq verb } allowed_verbs
    } }
  }
}
"""


async def build_chain(setup: Setup, count: int = 505) -> None:
    """A chain: each task depends on the one before, every other one is its subtask; the
    first few complete with a result."""
    previous: str | None = None
    for i in range(count):
        extra: dict[str, Any] = {"packet": {"depends_on": [previous] if previous else []}}
        if previous is not None and i % 2:
            extra["parent_task_id"] = previous
        task = (await setup.gql(HANDOFF, {"input": handoff_input("chain", **extra)}))["handoff"]
        if i < 6:
            await setup.gql(ACCEPT, {"id": task["id"]}, setup.agent)
            await setup.gql(START, {"id": task["id"]}, setup.agent)
            await setup.gql(RETURN, {"id": task["id"], "r": RESULT}, setup.agent)
        previous = task["id"]


async def sql_statements(setup: Setup) -> dict[str, Any]:
    from sqlalchemy import event

    from tests.support.server import in_process

    await build_chain(setup)
    async with in_process(setup.server.database_url, setup.owner) as (app, http):
        await app.state.hub.stop()  # its polling would be counted too
        seen: list[str] = []

        def count(_conn, _cursor, statement, *_args) -> None:  # type: ignore[no-untyped-def]
            if not statement.startswith("BEGIN"):
                seen.append(statement)

        event.listen(app.state.store.statements_engine, "before_cursor_execute", count)
        await http.post("/graphql", json={"query": "{ me { id } }"})  # the token, once
        figures = {}
        for first in (5, 500):
            seen.clear()
            body = (
                await http.post("/graphql", json={"query": NESTED, "variables": {"first": first}})
            ).json()
            assert "errors" not in body, body
            assert len(body["data"]["tasks"]["edges"]) == first
            figures[f"first_{first}"] = len(seen)
    return figures


# resuming 10,000 events back


async def ensure_events(setup: Setup, at_least: int) -> int:
    """Hand off tasks until the log holds `at_least` events; the last seq."""
    head = await last_seq(setup)
    while head < at_least:
        need = (at_least - head) // 2 + 1
        left = need

        async def loop(http: httpx.AsyncClient) -> None:
            nonlocal left
            while left > 0:
                left -= 1
                await setup.gql(HANDOFF, {"input": handoff_input("filler")}, http=http)

        await asyncio.gather(*(loop(http) for http in setup.pool))
        head = await last_seq(setup)
    return head


async def last_seq(setup: Setup) -> int:
    return await raw_count_head(setup.server.database_url)


async def raw_count_head(url: str) -> int:
    rows = await raw_select(url, "SELECT max(seq) FROM events", ())
    return int(rows[0][0] or 0)


async def raw_select(url: str, sql: str, args: tuple) -> list[Any]:
    if url.startswith("sqlite"):
        path = url.split(":///", 1)[1]
        with sqlite3.connect(path) as db:
            return db.execute(sql, args).fetchall()
    import asyncpg

    conn = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://", 1))
    try:
        pg_sql = sql.replace("?", "$1")
        return await conn.fetch(pg_sql, *args)
    finally:
        await conn.close()


async def raw_rows_time(url: str, after: int) -> float:
    """Seconds for a plain SELECT of the rows a resume replays (connection made outside)."""
    sql = "SELECT * FROM events WHERE seq > ? ORDER BY seq"
    if url.startswith("sqlite"):
        with sqlite3.connect(url.split(":///", 1)[1]) as db:
            start = time.perf_counter()
            rows = db.execute(sql, (after,)).fetchall()
            took = time.perf_counter() - start
    else:
        import asyncpg

        conn = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://", 1))
        try:
            start = time.perf_counter()
            rows = await conn.fetch(sql.replace("?", "$1"), after)
            took = time.perf_counter() - start
        finally:
            await conn.close()
    assert len(rows) == RESUME_BACK, len(rows)
    return took


async def ws_open(setup: Setup) -> ClientConnection:
    ws = await connect(
        setup.server.ws_url,
        subprotocols=["graphql-transport-ws"],
        ping_interval=None,
        max_size=2**24,
        open_timeout=60,
    )
    await ws.send(
        json.dumps(
            {"type": "connection_init", "payload": {"Authorization": f"Bearer {setup.owner}"}}
        )
    )
    while json.loads(await ws.recv())["type"] != "connection_ack":
        pass
    return ws


async def next_event(ws: ClientConnection) -> dict[str, Any]:
    """The next `next` message (pings skipped), parsed."""
    while True:
        message = json.loads(await ws.recv())
        if message["type"] == "next":
            return message
        if message["type"] in ("error", "complete"):
            raise RuntimeError(message)


async def resume(setup: Setup) -> dict[str, Any]:
    head = await ensure_events(setup, RESUME_BACK + 100)
    after = head - RESUME_BACK
    url = setup.server.database_url
    ws = await ws_open(setup)
    raw, ours, sizes = [], [], []
    try:
        for run in range(RUNS + 1):  # the first of each is a warm-up
            raw_took = await raw_rows_time(url, after)
            sub = str(run)
            start = time.perf_counter()
            await ws.send(
                json.dumps(
                    {
                        "id": sub,
                        "type": "subscribe",
                        "payload": {"query": SUBSCRIBE, "variables": {"after": str(after)}},
                    }
                )
            )
            for _ in range(RESUME_BACK):
                message = await next_event(ws)
            took = time.perf_counter() - start
            assert message["payload"]["data"]["task_events"]["seq"] == head, message
            sizes.append(len(json.dumps(message)))
            await ws.send(json.dumps({"id": sub, "type": "complete"}))
            if run:
                raw.append(raw_took)
                ours.append(took)
    finally:
        await ws.close()
    bare = await bare_burst_times(round(statistics.median(sizes)))
    ratios = [r / o for r, o in zip(raw, ours, strict=True)]  # (events/s) / (rows/s)
    return {
        "events_per_s": RESUME_BACK / statistics.median(ours),
        "raw_rows_per_s": RESUME_BACK / statistics.median(raw),
        "ratio": statistics.median(ratios),
        "ratios": ratios,
        "bare_messages_per_s": RESUME_BACK / statistics.median(bare),
        "bare_ratio": statistics.median([r / t for r, t in zip(raw, bare, strict=True)]),
        "execute_us": execution_us(),
    }


BATCH_SIZE = 1000
SUBSCRIBE_BATCHES = (
    "subscription($after: String, $size: Int) { task_event_batches(after: $after, "
    f"batch_size: $size) {{ {EVENT_FIELDS} }} }}"
)


async def resume_batches(setup: Setup) -> dict[str, Any]:
    """The resume of `resume`, through task_event_batches (BATCH_SIZE events a message)."""
    head = await ensure_events(setup, RESUME_BACK + 100)
    after = head - RESUME_BACK
    url = setup.server.database_url
    ws = await ws_open(setup)
    raw, ours = [], []
    variables = {"after": str(after), "size": BATCH_SIZE}
    try:
        for run in range(RUNS + 1):  # the first of each is a warm-up
            raw_took = await raw_rows_time(url, after)
            sub = f"b{run}"
            start = time.perf_counter()
            payload = {"query": SUBSCRIBE_BATCHES, "variables": variables}
            await ws.send(json.dumps({"id": sub, "type": "subscribe", "payload": payload}))
            got: list[dict[str, Any]] = []
            while len(got) < RESUME_BACK:
                got.extend((await next_event(ws))["payload"]["data"]["task_event_batches"])
            took = time.perf_counter() - start
            seqs = [e["seq"] for e in got]
            assert len(seqs) == RESUME_BACK and seqs == sorted(set(seqs)), seqs[-1]
            await ws.send(json.dumps({"id": sub, "type": "complete"}))
            if run:
                raw.append(raw_took)
                ours.append(took)
    finally:
        await ws.close()
    ratios = [r / o for r, o in zip(raw, ours, strict=True)]  # (events/s) / (rows/s)
    return {
        "batch_size": BATCH_SIZE,
        "events_per_s": RESUME_BACK / statistics.median(ours),
        "raw_rows_per_s": RESUME_BACK / statistics.median(raw),
        "ratio": statistics.median(ratios),
        "ratios": ratios,
    }


async def bare_burst_times(size: int) -> list[float]:
    """Seconds for this client to receive and parse RESUME_BACK messages of `size` bytes
    from a bare `websockets` server: what one message per event costs before any server
    work, each run."""
    took = []
    with raw_server() as (port, _):
        ws = await connect(f"ws://127.0.0.1:{port}", ping_interval=None, max_size=2**24)
        try:
            await ws.send("burst")
            for run in range(RUNS + 1):
                start = time.perf_counter()
                await ws.send(f"{RESUME_BACK} {size}")
                for _ in range(RESUME_BACK):
                    await next_event(ws)
                if run:
                    took.append(time.perf_counter() - start)
        finally:
            await ws.close()
    return took


def execution_us(events: int = 2000) -> float:
    """Microseconds graphql-core and Strawberry take, in this process, to execute the resume's
    selection for one event (the median of RUNS passes over `events` events)."""
    from graphql import parse

    from app.api.fast.sharing import SharingExecutor
    from app.api.schema import schema
    from app.api.task_types import TaskEvent
    from app.domain.events import Event

    executor = SharingExecutor.build(
        schema._schema, parse(SUBSCRIBE), context_value=None, raw_variable_values={}
    )
    moved = {
        "kind": "moved",
        "task_id": "bench",
        "project": "bench",
        "from_state": "routed",
        "to_state": "accepted",
        "waiting_on": None,
        "verb": "accept_task",
        "actor": "admin/coder",
        "at": "2026-12-02T00:00:00Z",
        "version": 3,
        "task": {},
    }
    payloads = [TaskEvent.from_domain(Event(**moved, seq=seq)) for seq in range(events)]
    took = []
    for _ in range(RUNS):
        start = time.perf_counter()
        for payload in payloads:
            result = executor.build_per_event_executor(payload).execute_operation(False)
        took.append((time.perf_counter() - start) / events)
        assert result.data["task_events"]["seq"] == events - 1, result
    return statistics.median(took) * 1e6


@contextmanager
def raw_server() -> Iterator[tuple[int, int]]:
    """A bare `websockets` server (tests/bench/raw_broadcast.py): its port and its pid."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.bench.raw_broadcast", str(port)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "ready"
        yield port, process.pid
    finally:
        process.terminate()
        process.wait(timeout=10)


# fan-out to 1,000 subscribers, and their memory


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


async def connect_many(count: int, opener) -> list[ClientConnection]:  # type: ignore[no-untyped-def]
    sem = asyncio.Semaphore(50)

    async def one() -> ClientConnection:
        async with sem:
            return await opener()

    return list(await asyncio.gather(*(one() for _ in range(count))))


async def last_arrival(conns: list[ClientConnection], trigger) -> tuple[float, int]:  # type: ignore[no-untyped-def]
    """Seconds from just before `trigger()` until the last connection has its next message
    (parsed), and that message's size in bytes."""
    sizes: list[int] = []

    async def wait(ws: ClientConnection) -> float:
        while True:
            text = await ws.recv()
            message = json.loads(text)
            if message.get("type") != "ping":
                sizes.append(len(text.encode()) if isinstance(text, str) else len(text))
                return time.perf_counter()

    waiting = [asyncio.create_task(wait(ws)) for ws in conns]
    await asyncio.sleep(0.2)  # every receiver is waiting
    start = time.perf_counter()
    await trigger()
    arrivals = await asyncio.gather(*waiting)
    return max(arrivals) - start, max(sizes)


async def fan_out(setup: Setup) -> dict[str, Any]:
    # each trigger is one accept_task: exactly one event to every subscriber of "fan"
    fan = [
        (await setup.gql(HANDOFF, {"input": handoff_input("fan")}))["handoff"]["id"]
        for _ in range(RUNS + 1)
    ]
    rss_before = rss_kib(setup.pid)

    async def subscriber() -> ClientConnection:
        ws = await ws_open(setup)
        await ws.send(
            json.dumps(
                {
                    "id": "1",
                    "type": "subscribe",
                    "payload": {"query": SUBSCRIBE, "variables": {"project": "fan"}},
                }
            )
        )
        return ws

    ours = await connect_many(SUBSCRIBERS, subscriber)
    await asyncio.sleep(3)  # settle
    rss_after = rss_kib(setup.pid)

    with raw_server() as (port, raw_pid):
        raw_base = rss_kib(raw_pid)

        async def listener() -> ClientConnection:
            ws = await connect(f"ws://127.0.0.1:{port}", ping_interval=None, open_timeout=60)
            await ws.send("listen")
            return ws

        theirs = await connect_many(SUBSCRIBERS, listener)
        control = await connect(f"ws://127.0.0.1:{port}", ping_interval=None)
        await control.send("control")
        await asyncio.sleep(3)
        raw_rss_per_conn = (rss_kib(raw_pid) - raw_base) / SUBSCRIBERS

        def move(task_id: str):  # type: ignore[no-untyped-def]
            return lambda: setup.gql(ACCEPT, {"id": task_id}, setup.agent)

        await last_arrival(ours, move(fan[0]))  # warm-up
        size = 0
        mine, floor = [], []
        for run in range(RUNS):
            took, size = await last_arrival(ours, move(fan[run + 1]))
            mine.append(took)
            payload = message_of(size)
            took_raw, raw_size = await last_arrival(theirs, lambda p=payload: control.send(p))
            floor.append(took_raw)
        for ws in [*ours, *theirs, control]:
            await ws.close()
    ratios = [m / f for m, f in zip(mine, floor, strict=True)]
    return {
        "payload_bytes": size,
        "raw_payload_bytes": raw_size,
        "fanout_s": statistics.median(mine),
        "raw_s": statistics.median(floor),
        "ratio": statistics.median(ratios),
        "ratios": ratios,
        "rss_per_sub_kib": (rss_after - rss_before) / SUBSCRIBERS,
        "raw_rss_per_conn_kib": raw_rss_per_conn,
    }


def environment() -> dict[str, Any]:
    mem_kib = 0
    with open("/proc/meminfo") as meminfo:
        for line in meminfo:
            if line.startswith("MemTotal:"):
                mem_kib = int(line.split()[1])
    return {
        "nproc": os.cpu_count(),
        "memory_gib": round(mem_kib / 2**20, 1),
        "python": sys.version.split()[0],
    }
