"""A restart that loses nobody: SIGTERM while subscribers listen and moves stream in. Every
subscriber is closed with 1001, resumes from its cursor on a second server on the same
PostgreSQL database, and has every event exactly once; no request in flight fails; the
drained server exits 0. `/readyz` answers 503 while draining, `/healthz` stays 200."""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from typing import Any

import httpx
from factory import PACKET
from live import BRIEF, DEBUG_ENV, Cast, last_cursor, opened, subscribers_reach
from server import Server, postgres_only
from websockets.exceptions import ConnectionClosed

SUBSCRIBERS = 200
CAST = ("alice", "alice/coder", "alice/writer")


class Mover(threading.Thread):
    """Hands off tasks one after another, each request on a new connection, to the first
    server until it stops accepting, then to the second until `after_switch` more are made
    there; a request the first server accepted must succeed. `made_on_first` is set once
    `before_signal` handoffs are made on the first server."""

    def __init__(
        self, cast: Cast, servers: list[Server], before_signal: int = 5, after_switch: int = 3
    ) -> None:
        super().__init__(daemon=True)
        self.cast, self.servers = cast, servers
        self.before_signal, self.after_switch = before_signal, after_switch
        self.made_on_first = threading.Event()
        self.made: list[str] = []
        self.made_on_second = 0
        self.failures: list[str] = []
        self.refused = 0

    def run(self) -> None:
        target = 0
        task = {"project": self.cast.project("drain"), "assignee": self.cast.id("alice/writer")}
        body = {"query": HANDOFF, "variables": {"input": {**task, "packet": PACKET}}}
        headers = {"Authorization": f"Bearer {self.cast.token('alice/coder')}"}
        deadline = time.monotonic() + 120
        while self.made_on_second < self.after_switch and time.monotonic() < deadline:
            server = self.servers[target]
            try:
                with httpx.Client(timeout=30) as client:
                    answer = client.post(server.graphql_url, json=body, headers=headers)
            except (httpx.ConnectError, httpx.ReadError):
                # not accepted (refused, or reset from the listen backlog as it closed): the
                # client goes elsewhere; that none of these was executed is checked below,
                # where every event of the project is one of the handoffs answered
                self.refused += 1
                target = 1
                continue
            except httpx.HTTPError as error:
                self.failures.append(repr(error))
                continue
            if answer.status_code != 200 or answer.json().get("errors"):
                self.failures.append(answer.text)
                continue
            self.made.append(answer.json()["data"]["handoff"]["id"])
            if target == 1:
                self.made_on_second += 1
            elif len(self.made) >= self.before_signal:
                self.made_on_first.set()


HANDOFF = "mutation($input: HandoffInput!) { handoff(input: $input) { id } }"


async def follow(
    first: Server, second: Server, token: str, project: str, after: str, last: asyncio.Future[int]
) -> dict:
    """Events of `project` after `after` on the first server until it closes the
    connection, then on the second from the last cursor, until the seq `last` (known once
    the moves have stopped) has arrived and nothing more comes within a second."""
    seqs: list[int] = []
    cursor = after
    codes: list[int] = []
    for server in (first, second):
        # all of them connect at once, to one server, twice: on a busy machine an answer
        # may take longer than a lone client would wait
        async with opened(server, token, open_timeout=60, ack_timeout=60) as live:
            await live.subscribe({"project": project, "after": cursor}, query=BRIEF)
            heard_at = time.monotonic()
            try:
                while not (last.done() and seqs and seqs[-1] >= last.result()):
                    try:
                        event = await live.event(timeout=0.5)
                    except TimeoutError:
                        assert time.monotonic() - heard_at < 60, f"nothing after {seqs[-1:]}"
                        continue
                    heard_at = time.monotonic()
                    seqs.append(event["seq"])
                    cursor = event["cursor"]
            except ConnectionClosed as closed:
                codes.append(closed.rcvd.code if closed.rcvd else -1)
                continue
            extra = await live.quiet(1.0)  # a duplicate after the last event would show here
            assert not extra, extra
        break
    return {"seqs": seqs, "codes": codes}


@postgres_only
async def test_sigterm_drains_every_subscriber_to_another_server(
    start_server: Any, pg_database_url: str
) -> None:
    first = start_server("--rate-limit", "0", url=pg_database_url, env=DEBUG_ENV)
    second = start_server("--rate-limit", "0", url=pg_database_url)
    cast = Cast(first).add(*CAST)
    cast.handoff("alice/coder", "alice/writer", "drain")
    after = last_cursor(first, cast.token("alice"), cast.project("drain"))
    last: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    followers = [
        asyncio.create_task(
            follow(first, second, cast.token("alice"), cast.project("drain"), after, last)
        )
        for _ in range(SUBSCRIBERS)
    ]
    await subscribers_reach(first, SUBSCRIBERS, timeout=60)
    mover = Mover(cast, [first, second])
    mover.start()
    assert await asyncio.to_thread(mover.made_on_first.wait, 60), mover.failures
    first.process.send_signal(signal.SIGTERM)
    exit_code = await asyncio.to_thread(first.process.wait, 60)
    await asyncio.to_thread(mover.join, 150)
    assert exit_code == 0, first.output()
    assert not mover.failures, mover.failures
    assert mover.refused >= 1 and mover.made_on_second == mover.after_switch, mover.made

    query = (
        "query($p: String, $a: String) { task_events(project: $p, after: $a, first: 500) "
        "{ edges { node { seq task_id } } } }"
    )
    page = second.data(query, {"p": cast.project("drain"), "a": after}, cast.token("alice"))
    expected = [edge["node"]["seq"] for edge in page["task_events"]["edges"]]
    assert {edge["node"]["task_id"] for edge in page["task_events"]["edges"]} == set(mover.made)
    last.set_result(expected[-1])
    heard = await asyncio.wait_for(asyncio.gather(*followers), 120)
    for one in heard:
        assert one["codes"] == [1001], one["codes"]
        assert one["seqs"] == expected
    lines = first.output()
    assert "Traceback" not in lines and '"level":"error"' not in lines


async def test_readyz_answers_503_while_draining(database_url: str) -> None:
    from server import in_process

    from app.observability.drain import draining

    async with in_process(database_url) as (_app, http):
        assert (await http.get("/readyz")).status_code == 200
        draining.since = time.monotonic()
        try:
            assert (await http.get("/readyz")).json() == {"status": "draining"}
            assert (await http.get("/readyz")).status_code == 503
            assert (await http.get("/healthz")).status_code == 200
        finally:
            draining.since = None


def test_sigterm_exits_0(start_server: Any) -> None:
    server = start_server()
    assert server.client.get(f"{server.base_url}/readyz").status_code == 200
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(timeout=30) == 0


async def test_sigterm_ends_server_sent_event_streams(start_server: Any) -> None:
    """An SSE stream is a request that never finishes by itself: draining ends it (with
    `complete`, no error; the client resumes elsewhere with Last-Event-ID), so the process
    exits 0 long before a generous --graceful-timeout."""
    from sse import streamed

    server = start_server("--graceful-timeout", "60")
    cast = Cast(server).add(*CAST)
    task = cast.handoff("alice/coder", "alice/writer", "sse-drain")
    async with streamed(server, cast.token("alice"), {"task_id": task["id"]}) as stream:
        event_id, snapshot = await stream.event()
        assert snapshot["task_id"] == task["id"] and event_id
        began = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        ending = [await stream.message(timeout=20), await stream.message(timeout=20)]
        assert [m.event if m else None for m in ending] == ["complete", None], ending
        assert await asyncio.to_thread(server.process.wait, 20) == 0
    assert time.monotonic() - began < 20
    assert "Traceback" not in server.output()
