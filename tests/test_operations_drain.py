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
from live import BRIEF, Cast, last_cursor, opened
from server import Server, postgres_only
from websockets.exceptions import ConnectionClosed

SUBSCRIBERS = 200
CAST = ("alice", "alice/coder", "alice/writer")


class Mover(threading.Thread):
    """Hands off tasks one after another, each request on a new connection, to the first
    server until it stops accepting, then to the second; a request the first server
    accepted must succeed."""

    def __init__(self, cast: Cast, servers: list[Server]) -> None:
        super().__init__(daemon=True)
        self.cast, self.servers = cast, servers
        self.done = threading.Event()
        self.made: list[str] = []
        self.failures: list[str] = []
        self.refused = 0

    def run(self) -> None:
        target = 0
        task = {"project": self.cast.project("drain"), "assignee": self.cast.id("alice/writer")}
        body = {"query": HANDOFF, "variables": {"input": {**task, "packet": PACKET}}}
        headers = {"Authorization": f"Bearer {self.cast.token('alice/coder')}"}
        while not self.done.is_set():
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
            else:
                self.made.append(answer.json()["data"]["handoff"]["id"])


HANDOFF = "mutation($input: HandoffInput!) { handoff(input: $input) { id } }"


async def follow(first: Server, second: Server, token: str, project: str, after: str) -> dict:
    """Events of `project` after `after` on the first server until it closes the
    connection, then on the second from the last cursor; until told to stop."""
    seqs: list[int] = []
    cursor = after
    codes: list[int] = []
    for server, quiet in ((first, 60), (second, 5)):
        async with opened(server, token) as live:
            await live.subscribe({"project": project, "after": cursor}, query=BRIEF)
            try:
                while True:
                    event = await live.event(timeout=quiet)
                    seqs.append(event["seq"])
                    cursor = event["cursor"]
            except ConnectionClosed as closed:
                codes.append(closed.rcvd.code if closed.rcvd else -1)
            except TimeoutError:
                pass
    return {"seqs": seqs, "codes": codes}


@postgres_only
async def test_sigterm_drains_every_subscriber_to_another_server(
    start_server: Any, pg_database_url: str
) -> None:
    first = start_server("--rate-limit", "0", url=pg_database_url)
    second = start_server("--rate-limit", "0", url=pg_database_url)
    cast = Cast(first).add(*CAST)
    cast.handoff("alice/coder", "alice/writer", "drain")
    after = last_cursor(first, cast.token("alice"), cast.project("drain"))
    followers = [
        asyncio.create_task(
            follow(first, second, cast.token("alice"), cast.project("drain"), after)
        )
        for _ in range(SUBSCRIBERS)
    ]
    await asyncio.sleep(3)  # every subscriber is listening
    mover = Mover(cast, [first, second])
    mover.start()
    await asyncio.sleep(1.5)
    first.process.send_signal(signal.SIGTERM)
    exit_code = await asyncio.to_thread(first.process.wait, 60)
    await asyncio.sleep(1.5)
    mover.done.set()
    await asyncio.to_thread(mover.join, 30)
    assert exit_code == 0, first.output()
    assert not mover.failures, mover.failures
    assert mover.refused >= 1 and len(mover.made) >= 5

    query = (
        "query($p: String, $a: String) { task_events(project: $p, after: $a, first: 500) "
        "{ edges { node { seq task_id } } } }"
    )
    page = second.data(query, {"p": cast.project("drain"), "a": after}, cast.token("alice"))
    expected = [edge["node"]["seq"] for edge in page["task_events"]["edges"]]
    assert {edge["node"]["task_id"] for edge in page["task_events"]["edges"]} == set(mover.made)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not all(f.done() for f in followers):
        await asyncio.sleep(0.2)  # each follower stops once the second server goes quiet
    heard = await asyncio.gather(*followers)
    for one in heard:
        assert one["codes"][:1] == [1001], one["codes"]
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
