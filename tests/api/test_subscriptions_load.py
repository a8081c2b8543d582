"""Subscriptions under load against a real `prickle serve`: 500 subscriptions opened and
dropped leave nothing behind, and a subscriber that stops reading is let go with the
cursor to resume from, memory bounded meanwhile."""

from __future__ import annotations

import asyncio
import json
import secrets
import socket
import time
from typing import Any

import pytest
from live import (
    ALICE_AND_AGENTS,
    BRIEF,
    DEBUG_ENV,
    LEGACY,
    TRANSPORT,
    Cast,
    Live,
    debug,
    last_cursor,
    opened,
    settle,
    settled,
)
from server import Server

pytestmark = pytest.mark.serial  # a load of their own on a server: run alone, after the others

CONNECTIONS = 50
PER_CONNECTION = 10
QUEUE = 5  # PRICKLE_SUBSCRIBER_QUEUE for the slow subscriber's server


def report(name: str, figures: dict[str, Any]) -> None:
    print(f"\n{name}: {json.dumps(figures)}")


async def test_500_subscriptions_opened_and_dropped_release_everything(start_server: Any) -> None:
    server = start_server(env=DEBUG_ENV)
    cast = Cast(server).add(*ALICE_AND_AGENTS)
    task = cast.handoff("alice/coder", "alice/writer", "crowd")
    async with opened(server, cast.token("alice")) as warmup:  # pools and caches, once
        await warmup.subscribe({"task_id": task["id"]}, query=BRIEF)
        await warmup.event()
    baseline = settle(server, lambda f: f["subscribers"] == 0)
    began = time.monotonic()

    async def connection(n: int, opened_all: asyncio.Event, drop: asyncio.Event) -> int:
        protocol = TRANSPORT if n % 2 else LEGACY
        async with opened(server, cast.token("alice"), protocol) as live:
            for i in range(PER_CONNECTION):
                variables = {"task_id": task["id"]} if i % 2 else {"project": task["project"]}
                await live.subscribe(variables, id=str(i), query=BRIEF)
            snapshots = [await live.receive(timeout=30) for _ in range(PER_CONNECTION // 2)]
            await opened_all.wait()
            got = [await live.receive(timeout=30) for _ in range(PER_CONNECTION)]
            await drop.wait()
            if n % 3 == 0:
                for i in range(PER_CONNECTION):
                    await live.complete(str(i))
            elif n % 3 == 1:
                live.ws.transport.abort()  # no closing handshake at all
                return len(snapshots) + len(got)
        return len(snapshots) + len(got)

    opened_all, drop = asyncio.Event(), asyncio.Event()
    running = [asyncio.create_task(connection(n, opened_all, drop)) for n in range(CONNECTIONS)]
    await settled(server, lambda f: f["subscribers"] == CONNECTIONS * PER_CONNECTION)
    opened_in = time.monotonic() - began
    peak = debug(server)
    opened_all.set()
    fanned = time.monotonic()
    await asyncio.to_thread(cast.move, "alice/writer", "accept_task", task["id"])
    drop.set()  # each connection drops once it has its event on every subscription
    counts = await asyncio.gather(*running)
    fan_out = time.monotonic() - fanned
    after = await settled(
        server, lambda f: f["subscribers"] == 0 and f["tasks"] <= baseline["tasks"]
    )
    report(
        "500 subscriptions",
        {
            "opened_and_registered_s": round(opened_in, 2),
            "one_event_to_all_and_dropped_s": round(fan_out, 2),
            "total_s": round(time.monotonic() - began, 2),
            "baseline": baseline,
            "peak": peak,
            "after": after,
        },
    )
    assert counts == [PER_CONNECTION // 2 + PER_CONNECTION] * CONNECTIONS
    assert peak["subscribers"] == CONNECTIONS * PER_CONNECTION
    assert (after["subscribers"], after["queued"]) == (0, 0)
    assert after["tasks"] == baseline["tasks"], (baseline, after)


def slow_socket(server: Server) -> socket.socket:
    """A connected socket with a tiny receive buffer: once its owner stops reading, the
    server can send little before its writes wait."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    host, port = server.base_url.removeprefix("http://").split(":")
    sock.connect((host, int(port)))
    sock.setblocking(False)
    return sock


# every field of the packet at its largest (and incompressible), selected 20 times over, so
# that each event is about 600 kB on the wire: a reader that stops reading soon fills the
# socket buffers (the kernel's included) and the server's writes wait
BIG_PACKET = {
    "task": secrets.token_hex(250),
    "acceptance_criteria": [secrets.token_hex(250) for _ in range(20)],
    "context": secrets.token_hex(2000),
    "files": [secrets.token_hex(150) for _ in range(50)],
}
PACKET_FIELDS = "task { packet { task acceptance_criteria context files } }"
HEAVY = f"""subscription($project: String, $after: String) {{
  task_events(project: $project, after: $after) {{
    cursor seq task_id from_state to_state
    {" ".join(f"p{n}: {PACKET_FIELDS}" for n in range(20))}
  }}
}}"""
CYCLE = [
    ("alice/writer", "accept_task"),
    ("alice/writer", "start_task"),
    *[("alice", "stop_run"), ("alice", "resume_run")] * 3,
    ("alice/coder", "cancel_task"),
]


async def test_a_subscriber_that_stops_reading_is_let_go_and_resumes_from_its_cursor(
    start_server: Any,
) -> None:
    server = start_server(env={**DEBUG_ENV, "PRICKLE_SUBSCRIBER_QUEUE": str(QUEUE)})
    cast = Cast(server).add(*ALICE_AND_AGENTS)
    tasks = [cast.handoff("alice/coder", "alice/writer", "slow", **BIG_PACKET) for _ in range(6)]
    project = tasks[0]["project"]
    start = int(last_cursor(server, cast.token("alice"), project))
    baseline = debug(server)
    options = {"sock": slow_socket(server), "max_queue": 1, "max_size": None, "compression": None}
    async with opened(server, cast.token("alice"), TRANSPORT, **options) as slow:
        await slow.subscribe({"project": project, "after": str(start)}, query=HEAVY)
        await settled(server, lambda f: f["subscribers"] == 1)
        for task in tasks:  # the slow subscriber reads nothing meanwhile
            for by, verb in CYCLE:
                await asyncio.to_thread(cast.move, by, verb, task["id"])
        held = debug(server)  # let go of by the hub: nothing grows for it
        received, error = await read_until_error(slow)
    last = start + len(tasks) * len(CYCLE)
    resume_after = error["extensions"]["after"]
    assert error["extensions"]["code"] == "rate_limited"
    assert f'resume with after: "{resume_after}"' in error["message"]
    assert resume_after == received[-1]["cursor"]
    async with opened(server, cast.token("alice")) as again:
        await again.subscribe({"project": project, "after": resume_after}, query=HEAVY)
        rest = await again.events(last - int(resume_after), timeout=30)
        assert await again.quiet(0.3) == []
    seqs = [e["seq"] for e in received + rest]
    assert seqs == list(range(start + 1, last + 1))
    after = await settled(
        server, lambda f: f["subscribers"] == 0 and f["tasks"] <= baseline["tasks"]
    )
    report(
        "slow subscriber",
        {
            "events": len(seqs),
            "before_error": len(received),
            "baseline": baseline,
            "while_stalled": held,
            "after": after,
        },
    )
    assert (held["subscribers"], held["queued"]) == (0, 0)  # let go of while still connected
    assert len(received) < len(seqs)
    assert (after["subscribers"], after["tasks"]) == (0, baseline["tasks"]), (baseline, after)


async def read_until_error(live: Live) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    received = []
    while True:
        message = await live.receive(timeout=30)
        assert message["type"] == "next", message
        if message["payload"].get("errors"):
            [error] = message["payload"]["errors"]
            assert (await live.receive())["type"] == "complete"
            return received, error
        received.append(message["payload"]["data"]["task_events"])
