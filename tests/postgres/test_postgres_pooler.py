"""Servers behind PgBouncer in transaction mode (`--database-pooled`): two `prickle serve`
through a private PgBouncer (tests/support/pgbouncer.py) in front of PRICKLE_TEST_PG, with and
without `--database-direct-url`. Every subscriber of every server receives every event once,
in order; no write is refused; without the direct URL the servers say once that LISTEN is
unavailable and follow each other by polling. The start-up refusals: a pooler not said to be
one, a pooler in session mode, a direct URL on another database, prepared statements said of
a pooler that passes their names on.

Two PgBouncers: Debian's 1.18 (statements unnamed), and 1.24.1 built from source
(tests/pgbouncer.py) with `max_prepared_statements` and the servers told so
(`--database-pooled-prepared`: statements named and cached). The cases that differ between
them (the servers' statements) run behind both; each PgBouncer is started once per module.

Run in the PostgreSQL passes only; PgBouncer from Debian (`.ci/run` installs it, and what
building 1.24.1 needs; without them these tests skip, except under CI: `CI=true` or
`PRICKLE_REQUIRE_PGBOUNCER=1`).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from factory import PACKET, evidence
from pgbouncer import BUILT, DEBIAN, Bouncer, available, built, private_pgbouncer
from processes import Subscription, event_log, seqs
from receiver import Receiver
from server import PG_ADMIN, Server, connect, document, postgres_only, prickle, start
from sqlalchemy.engine import make_url

pytestmark = [postgres_only, pytest.mark.postgres]

RESULT = {
    "summary": "GET /health answers 200 and the README says so",
    "provenance": "agent_generated",
    "evidence": [evidence([0, 1])],
}
NEXT = {"accepted": "stop_run", "waiting": "resume_run"}
LISTEN_UNAVAILABLE = "LISTEN is unavailable"


PREPARED = "--database-pooled-prepared"
POOLERS = [
    pytest.param(DEBIAN, id="pgbouncer-1.18-unnamed"),
    pytest.param(BUILT, id="pgbouncer-1.24-prepared"),
]


def _missing(reason: str) -> None:
    if os.environ.get("CI") == "true" or os.environ.get("PRICKLE_REQUIRE_PGBOUNCER") == "1":
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def bouncer() -> Iterator[Bouncer]:
    """Debian's PgBouncer 1.18: no prepared statements in transaction mode."""
    if not available():
        _missing("pgbouncer is not installed (.ci/run installs it)")
    port = make_url(PG_ADMIN).port or 5432
    with private_pgbouncer(port, pool_size=10) as running:
        yield running


@pytest.fixture(scope="module")
def bouncer_prepared() -> Iterator[Bouncer]:
    """PgBouncer 1.24.1 with `max_prepared_statements = 100` (built once per clone)."""
    try:
        built()
    except (RuntimeError, OSError, subprocess.SubprocessError) as error:
        _missing(f"PgBouncer 1.24.1 could not be built: {error}")
    port = make_url(PG_ADMIN).port or 5432
    with private_pgbouncer(port, pool_size=10, version=BUILT) as running:
        yield running


@pytest.fixture(params=POOLERS)
def pooler(request: pytest.FixtureRequest) -> tuple[Bouncer, tuple[str, ...]]:
    """A running PgBouncer and what the servers are told of it."""
    if request.param == DEBIAN:
        return request.getfixturevalue("bouncer"), ()
    return request.getfixturevalue("bouncer_prepared"), (PREPARED,)


def _servers(url: str, tmp_path: Path, *args: str) -> list[Server]:
    with ThreadPoolExecutor(2) as pool:
        starting = [
            pool.submit(start, url, tmp_path / f"server-{i}", "--database-pooled", *args)
            for i in (0, 1)
        ]
    servers = [f.result() for f in starting if f.exception() is None]
    if len(servers) < 2:
        for server in servers:
            server.stop()
        raise AssertionError([f.exception() for f in starting])
    return servers


def _subscribe(server: Server, token: str) -> Subscription:
    sub = Subscription(server.ws_url, token, {"after": "0"})
    sub.start()
    assert sub.subscribed.wait(10)
    return sub


async def _every_event_to_every_subscriber(servers: list[Server], url: str) -> None:
    """Moves made through both servers, alternately and at once; two subscribers on each
    receive every logged event once, in seq order."""
    owner = servers[0].owner_token or servers[1].owner_token
    assert owner is not None
    worker = servers[0].register(owner, "worker")
    tasks = []
    for i in range(4):  # handoffs and accepts through both servers
        through = servers[i % 2]
        variables = {"input": {"project": "pooled", "assignee": "admin/worker", "packet": PACKET}}
        task = through.run_data("mutations/handoff", variables, owner)["handoff"]
        through.run_data("mutations/accept_task", {"task_id": task["id"]}, worker)
        tasks.append(task["id"])
    watchers = [_subscribe(s, owner) for s in servers for _ in range(2)]
    try:
        states = dict.fromkeys(tasks, "accepted")

        def moves(through: Server, mine: list[str]) -> None:
            for _ in range(5):
                for task_id in mine:
                    verb = NEXT[states[task_id]]
                    states[task_id] = through.run_data(
                        f"mutations/{verb}", {"task_id": task_id}, owner
                    )[verb]["state"]

        # both servers write at once, each its own tasks: no write refused
        await asyncio.gather(
            asyncio.to_thread(moves, servers[0], tasks[:2]),
            asyncio.to_thread(moves, servers[1], tasks[2:]),
        )
        log = await event_log(url)
        assert len(log) == 4 * 3 + 4 * 5
        for watcher in watchers:
            received = await asyncio.to_thread(watcher.wait_for, len(log))
            assert seqs(received) == [e["seq"] for e in log]
            for got, logged in zip(received, log, strict=True):
                assert (got["task_id"], got["version"]) == (logged["task_id"], logged["version"])
        # a query through each: the tasks as the log left them
        for server in servers:
            query = "query($id: ID!) { task(id: $id) { state version } }"
            for task_id in tasks:
                found = server.data(query, {"id": task_id}, owner)["task"]
                assert found == {"state": states[task_id], "version": 8}
            # its one snapshot, begun through the pooler, holds every logged event
            ends = server.run_data("queries/events_seen_after_head", {}, owner)
            head, seen = int(ends["event_head"]), ends["events_seen_after_head"]
            assert all(e["seq"] <= head or str(e["seq"]) in seen for e in log)
        await asyncio.sleep(0.3)  # nothing more may follow
        assert all(len(w.events) == len(log) for w in watchers)
    finally:
        for watcher in watchers:
            watcher.close()


async def test_two_servers_behind_pgbouncer_without_the_direct_url_poll_for_each_other(
    pooler: tuple[Bouncer, tuple[str, ...]], pg_database_url: str, tmp_path: Path
) -> None:
    bouncer, told = pooler
    pooled = bouncer.url_of(pg_database_url)
    servers = _servers(pooled, tmp_path, *told)
    try:
        await _every_event_to_every_subscriber(servers, pg_database_url)
        for server in servers:  # said once, at start
            assert server.output().count(LISTEN_UNAVAILABLE) == 1, server.output()
        assert "prickle-listen" not in await _applications(pg_database_url)
        # a token revoked through one is refused by the other once its poll has run
        first, second = servers
        owner = first.owner_token or second.owner_token
        made = first.run_data("mutations/create_token", {}, owner)["create_token"]
        assert second.data("{ me { id } }", token=made["token"])["me"]["id"] == "admin"
        first.run_data("mutations/revoke_token", {"id": made["token_info"]["id"]}, owner)
        await asyncio.to_thread(_refused_within, second, made["token"], 5.0)
    finally:
        for server in servers:
            server.stop()


async def test_two_servers_behind_pgbouncer_listen_on_the_direct_url_and_every_verb_works(
    pooler: tuple[Bouncer, tuple[str, ...]], pg_database_url: str, tmp_path: Path
) -> None:
    """Also a task's whole life through each server, its events to a subscriber and a
    webhook, and, behind 1.24 told so, statements prepared once and bound again and again
    (PgBouncer's own counts)."""
    bouncer, told = pooler
    pooled = bouncer.url_of(pg_database_url)
    args = ("--database-direct-url", pg_database_url, "--allow-private-webhooks", *told)
    servers = _servers(pooled, tmp_path, *args)
    try:
        await _every_event_to_every_subscriber(servers, pg_database_url)
        for server in servers:
            assert LISTEN_UNAVAILABLE not in server.output()
        listening = (await _applications(pg_database_url)).count("prickle-listen")
        assert listening == 2  # one LISTEN connection per server, straight to PostgreSQL
        owner = servers[0].owner_token or servers[1].owner_token
        assert owner is not None
        watcher = _subscribe(servers[1], owner)
        with Receiver() as receiver:
            hook = {"url": receiver.url, "project": "lifecycle"}
            servers[0].run_data("mutations/create_webhook", {"input": hook}, owner)
            try:
                lived = [t for i, s in enumerate(servers) for t in _whole_life(s, owner, i)]
                log = await event_log(pg_database_url)
                received = await asyncio.to_thread(watcher.wait_for, len(log))
            finally:
                watcher.close()
            assert seqs(received) == [e["seq"] for e in log]
            theirs = [e["seq"] for e in log if e["task_id"] in lived]
            delivered = await asyncio.to_thread(receiver.wait_for, len(theirs))
            assert [d.data["seq"] for d in delivered] == theirs  # each once, in order
        for server in servers:
            assert "Traceback" not in server.output()
        if PREPARED in told:
            stats = bouncer.stats(make_url(pg_database_url).database or "")
            # named statements, each bound again after its Parse (on average at least twice)
            assert 0 < 2 * stats["total_client_parse_count"] < stats["total_bind_count"], stats
    finally:
        for server in servers:
            server.stop()


def _whole_life(server: Server, owner: str, number: int) -> list[str]:
    """Every verb of a task's life through `server`, a query after, and a task cancelled:
    the two tasks' ids."""
    worker = f"coder{number}"
    token = server.register(owner, worker)
    run = server.run_data
    handed = {"project": "lifecycle", "assignee": f"admin/{worker}", "packet": PACKET}
    task_id = run("mutations/handoff", {"input": handed}, owner)["handoff"]["id"]
    moves: list[tuple[str, str, dict[str, Any]]] = [
        ("accept_task", token, {}),
        ("start_task", token, {}),
        ("save_checkpoint", token, {"checkpoint": {"progress": "half", "next_steps": ["rest"]}}),
        ("wait_on", token, {"on": "human", "question": "Which port?"}),
        ("answer", owner, {"answer": "8000"}),
        ("stop_run", owner, {}),
        ("resume_run", owner, {}),
        ("return_result", token, {"result": RESULT}),
    ]
    for verb, who, variables in moves:
        task = run(f"mutations/{verb}", {"task_id": task_id, **variables}, who)[verb]
    if task["state"] == "approval":
        decided = {"task_id": task_id, "decision": "accept"}
        task = run("mutations/decide_result", decided, owner)["decide_result"]
    assert task["state"] == "completed", task
    query = "query($id: ID!) { task(id: $id) { state version } }"
    found = server.data(query, {"id": task_id}, owner)["task"]
    assert found == {"state": "completed", "version": task["version"]}
    other = run("mutations/handoff", {"input": handed}, owner)["handoff"]["id"]
    cancelled = run("mutations/cancel_task", {"task_id": other}, owner)["cancel_task"]
    assert cancelled["state"] == "cancelled"
    return [task_id, other]


async def test_prepared_statements_said_of_a_pooler_passing_their_names_on_are_refused(
    bouncer: Bouncer, pg_database_url: str
) -> None:
    """PgBouncer 1.18 passes a statement's name on to PostgreSQL (no prepared statements in
    transaction mode): `--database-pooled-prepared` is refused in one line; said without
    `--database-pooled`, too."""
    pooled = bouncer.url_of(pg_database_url)
    args = ("--database-url", pooled, "--database-pooled", PREPARED)
    line = _refused(await asyncio.to_thread(prickle, "migrate", *args))
    assert PREPARED in line and "max_prepared_statements" in line, line
    args = ("--database-url", pg_database_url, PREPARED)
    line = _refused(await asyncio.to_thread(prickle, "migrate", *args))
    assert "add --database-pooled" in line, line


def _refused_within(server: Server, token: str, most: float) -> None:
    deadline = time.monotonic() + most
    while not server.post("{ me { id } }", token=token).get("errors"):
        assert time.monotonic() < deadline, "the other process still accepts the token"
        time.sleep(0.02)


async def _applications(url: str) -> list[str]:
    conn = await connect(url)
    try:
        rows = await conn.fetch(
            "SELECT application_name FROM pg_stat_activity WHERE datname = current_database()"
        )
    finally:
        await conn.close()
    return [r[0] for r in rows]


def _refused(result: Any) -> str:
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return str(lines[0])


async def test_a_pooler_not_said_to_be_one_is_refused_in_one_line(
    bouncer: Bouncer, pg_database_url: str
) -> None:
    pooled = bouncer.url_of(pg_database_url)
    line = _refused(await asyncio.to_thread(prickle, "migrate", "--database-url", pooled))
    assert "refused a startup parameter" in line and "--database-pooled" in line
    done = await asyncio.to_thread(
        prickle, "migrate", "--database-url", pooled, "--database-pooled"
    )
    assert done.returncode == 0, done.stderr


async def test_a_direct_url_on_another_database_is_refused_in_one_line(
    bouncer: Bouncer, pg_database_url: str
) -> None:
    pooled = bouncer.url_of(pg_database_url)
    other = make_url(pg_database_url).set(database="test").render_as_string(hide_password=False)
    args = ("--database-url", pooled, "--database-pooled", "--database-direct-url", other)
    line = _refused(await asyncio.to_thread(prickle, "token", "create", "--owner", "ann", *args))
    assert "--database-direct-url" in line and "not the database URL's" in line


async def test_a_pooler_in_session_mode_or_postgresql_itself_is_refused_in_one_line(
    pg_database_url: str,
) -> None:
    line = _refused(
        await asyncio.to_thread(
            prickle, "migrate", "--database-url", pg_database_url, "--database-pooled"
        )
    )
    assert "session mode" in line
    port = make_url(PG_ADMIN).port or 5432
    with private_pgbouncer(port, pool_mode="session") as session:
        url = session.url_of(pg_database_url)
        result = await asyncio.to_thread(
            prickle, "migrate", "--database-url", url, "--database-pooled"
        )
    assert "session mode" in _refused(result)


async def test_a_process_holds_at_most_its_connection_budget_under_load(
    pg_database_url: str, tmp_path: Path
) -> None:
    """`--database-connections 4`: a pool of 2 (no overflow), LISTEN and the probe; 32
    queries at once all answer, and PostgreSQL never sees more than 4 of the server's."""
    server = start(pg_database_url, tmp_path / "server", "--database-connections", "4")
    seen: list[int] = []
    stop = asyncio.Event()

    async def sample() -> None:
        conn = await connect(pg_database_url)
        try:
            while not stop.is_set():
                seen.append(
                    await conn.fetchval(
                        "SELECT count(*) FROM pg_stat_activity"
                        " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                    )
                )
                await asyncio.sleep(0.01)
        finally:
            await conn.close()

    async def queries() -> list[dict[str, Any]]:
        """96 queries, 32 at once, each connection its own (one client shared by threads
        lost a connection to another thread's close on a loaded machine)."""
        body = {"query": "{ tasks(first: 5) { edges { node { id } } } me { id } }"}
        limits = httpx.Limits(max_connections=32)
        async with httpx.AsyncClient(limits=limits, timeout=60) as client:
            answers = await asyncio.gather(
                *(
                    client.post(server.graphql_url, json=body, headers=server.headers())
                    for _ in range(96)
                )
            )
        assert all(a.status_code == 200 for a in answers), [a.text for a in answers][:1]
        return [a.json() for a in answers]

    try:
        sampler = asyncio.create_task(sample())
        answers = await queries()
        stop.set()
        await sampler
    finally:
        server.stop()
    assert all("errors" not in a for a in answers), [a for a in answers if "errors" in a][:1]
    assert seen and max(seen) <= 4, max(seen)


async def test_pgbouncer_restarted_under_load_answers_unavailable_loses_nothing_and_is_back(
    pg_database_url: str, tmp_path: Path
) -> None:
    """A server behind a private PgBouncer (its LISTEN on the direct URL), moves made all
    along: PgBouncer killed and started again. Each answer is a move or `unavailable`; moves
    succeed again by themselves; a subscriber receives every logged event once, in order."""
    if not available():
        pytest.skip("pgbouncer is not installed")
    port = make_url(PG_ADMIN).port or 5432
    with private_pgbouncer(port, pool_size=5) as bouncer:
        server = start(
            bouncer.url_of(pg_database_url),
            tmp_path / "server",
            "--database-pooled",
            "--database-direct-url",
            pg_database_url,
        )
        try:
            owner = server.owner_token
            assert owner is not None
            worker = server.register(owner, "worker")
            variables = {
                "input": {"project": "pooled", "assignee": "admin/worker", "packet": PACKET}
            }
            task_id = server.run_data("mutations/handoff", variables, owner)["handoff"]["id"]
            server.run_data("mutations/accept_task", {"task_id": task_id}, worker)
            watcher = _subscribe(server, owner)
            codes: list[str] = []
            state = {"now": "accepted"}

            def move() -> None:
                verb = NEXT[state["now"]]
                body = {"query": document(f"mutations/{verb}"), "variables": {"task_id": task_id}}
                answer = server.client.post(
                    server.graphql_url, json=body, headers=server.headers(owner)
                ).json()
                if answer.get("errors"):
                    codes.append(answer["errors"][0]["extensions"]["code"])
                    if codes[-1] == "unavailable" and "unknown" in str(answer):
                        # the move may have been made: read the task before the next one
                        query = "query($id: ID!) { task(id: $id) { state } }"
                        state["now"] = server.data(query, {"id": task_id}, owner)["task"]["state"]
                    return
                codes.append("ok")
                state["now"] = answer["data"][verb]["state"]

            try:
                for _ in range(5):
                    await asyncio.to_thread(move)
                bouncer.stop()
                for _ in range(3):  # while it is down
                    await asyncio.to_thread(move)
                bouncer.start()
                before = codes.count("ok")
                while codes.count("ok") < before + 5:  # back by itself
                    await asyncio.to_thread(move)
                    assert len(codes) < 200, codes[-10:]
                log = await event_log(pg_database_url)
                received = await asyncio.to_thread(watcher.wait_for, len(log))
            finally:
                watcher.close()
            assert set(codes) <= {"ok", "unavailable"}, codes
            assert "unavailable" in codes
            assert seqs(received) == [e["seq"] for e in log]
            assert "Traceback" not in server.output()
        finally:
            server.stop()
