"""task_events over real WebSockets: order and content, resume from a cursor, and one
gapless sequence under concurrent writers (the replay racing their commits)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from live import BRIEF, PROTOCOLS, TRANSPORT, Cast, last_cursor, opened
from server import document

# Five moves from routed, and who makes each: the assignee, then its owner, then the requester.
FIVE_MOVES = [
    ("alice/writer", "accept_task", "accepted"),
    ("alice/writer", "start_task", "working"),
    ("alice", "stop_run", "waiting"),
    ("alice", "resume_run", "working"),
    ("alice/coder", "cancel_task", "cancelled"),
]


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_five_moves_arrive_as_five_ordered_events(cast: Cast, protocol: str) -> None:
    task = cast.handoff("alice/coder", "alice/writer", "order")
    async with opened(cast.server, cast.token("alice"), protocol) as live:
        await live.subscribe({"task_id": task["id"]})
        snapshot = await live.event()
        assert (snapshot["kind"], snapshot["to_state"]) == ("snapshot", "routed")
        for by, verb, _ in FIVE_MOVES:
            cast.move(by, verb, task["id"])
        events = await live.events(5)
        assert await live.quiet() == []
    assert [(e["kind"], e["verb"], e["to_state"]) for e in events] == [
        ("moved", verb, to) for _, verb, to in FIVE_MOVES
    ]
    states = [snapshot["to_state"]] + [e["to_state"] for e in events]
    assert [e["from_state"] for e in events] == states[:-1]
    assert all(e["task"]["state"] == e["to_state"] for e in events)
    seqs = [snapshot["seq"]] + [e["seq"] for e in events]
    assert seqs == sorted(set(seqs))
    assert [e["version"] for e in events] == [snapshot["version"] + i for i in range(1, 6)]
    assert [e["cursor"] for e in events] == [str(e["seq"]) for e in events]


async def test_a_resumed_subscription_gets_exactly_what_it_missed_then_live(cast: Cast) -> None:
    task = cast.handoff("alice/coder", "alice/writer", "resume")
    project = task["project"]
    async with opened(cast.server, cast.token("alice")) as live:
        await live.subscribe({"project": project, "after": "0"}, query=BRIEF)
        seen = await live.events(2)  # created, moved to routed
        cast.move("alice/writer", "accept_task", task["id"])
        seen.append(await live.event())
    missed = [cast.move(by, verb, task["id"]) for by, verb, _ in FIVE_MOVES[1:4]]
    async with opened(cast.server, cast.token("alice")) as live:
        await live.subscribe({"project": project, "after": seen[-1]["cursor"]}, query=BRIEF)
        replayed = await live.events(3)
        cast.move("alice/coder", "cancel_task", task["id"])
        latest = await live.event()
        assert await live.quiet() == []
    assert [e["verb"] for e in replayed] == ["start_task", "stop_run", "resume_run"]
    assert [e["to_state"] for e in replayed] == [m["state"] for m in missed]
    assert (latest["verb"], latest["to_state"]) == ("cancel_task", "cancelled")
    seqs = [e["seq"] for e in seen + replayed + [latest]]
    assert seqs == list(range(seqs[0], seqs[0] + 7))


async def test_ten_concurrent_writers_give_every_subscriber_one_gapless_sequence(
    cast: Cast,
) -> None:
    tasks = [cast.handoff("alice/coder", "alice/writer", "busy") for _ in range(10)]
    project = tasks[0]["project"]
    start = last_cursor(cast.server, cast.token("alice"), project)
    expected = 10 * len(FIVE_MOVES)

    async def write(http: httpx.AsyncClient, task_id: str) -> None:
        for by, verb, _ in FIVE_MOVES:
            body = {"query": document(f"mutations/{verb}"), "variables": {"task_id": task_id}}
            headers = {"Authorization": f"Bearer {cast.token(by)}"}
            response = await http.post(cast.server.graphql_url, json=body, headers=headers)
            assert not response.json().get("errors"), response.json()

    async def subscriber(after: str | None, delay: float) -> list[dict]:
        await asyncio.sleep(delay)
        async with opened(cast.server, cast.token("alice")) as live:
            await live.subscribe({"project": project, "after": after}, query=BRIEF)
            return await live.events(expected, timeout=30)

    async with httpx.AsyncClient(timeout=30) as http:
        # one subscriber from before the writes, one whose replay races their commits
        early = asyncio.create_task(subscriber(start, 0))
        late = asyncio.create_task(subscriber(start, 0.3))
        await asyncio.sleep(0.2)
        await asyncio.gather(*(write(http, t["id"]) for t in tasks))
        got = await asyncio.gather(early, late)
    first = int(start) + 1
    for events in got:
        assert [e["seq"] for e in events] == list(range(first, first + expected))
        for task in tasks:
            mine = [e for e in events if e["task_id"] == task["id"]]
            assert [(e["from_state"], e["to_state"]) for e in mine] == [
                ("routed", "accepted"),
                ("accepted", "working"),
                ("working", "waiting"),
                ("waiting", "working"),
                ("working", "cancelled"),
            ]
    assert got[0] == got[1]


async def test_a_snapshot_is_never_followed_by_an_event_it_already_contains(cast: Cast) -> None:
    """Moves racing the snapshot: each later event is newer than the snapshot's version."""
    task = cast.handoff("alice/coder", "alice/writer", "race")

    def moves() -> list[Any]:
        return [cast.move(by, verb, task["id"]) for by, verb, _ in FIVE_MOVES[:4]]

    mover = asyncio.get_running_loop().run_in_executor(None, moves)
    async with opened(cast.server, cast.token("alice"), TRANSPORT) as live:
        await live.subscribe({"task_id": task["id"]}, query=BRIEF)
        snapshot = await live.event()
        await mover
        last = 2 + 4  # created, routed, then four moves
        events = await live.events(last - snapshot["version"])
        assert await live.quiet() == []
    assert [e["version"] for e in events] == list(range(snapshot["version"] + 1, last + 1))


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_an_id_reused_after_complete_carries_only_the_new_subscriptions_events(
    cast: Cast, protocol: str
) -> None:
    """Completing stops an operation's events at once, and its id is free for another."""
    old = cast.handoff("alice/coder", "alice/writer", f"reuse-old-{protocol}")
    new = cast.handoff("alice/coder", "alice/writer", f"reuse-new-{protocol}")
    async with opened(cast.server, cast.token("alice"), protocol) as live:
        await live.subscribe({"project": old["project"], "after": "0"}, query=BRIEF)
        assert [e["task_id"] for e in await live.events(2, id="1")] == [old["id"]] * 2
        await live.complete()
        if protocol != TRANSPORT:  # graphql-ws confirms the stop
            assert await live.receive() == {"id": "1", "type": "complete"}
        await live.subscribe({"project": new["project"], "after": "0"}, query=BRIEF)
        replayed = await live.events(2, id="1")
        for task in (old, new):
            await asyncio.to_thread(cast.move, "alice/writer", "accept_task", task["id"])
        latest = await live.event(id="1")
        assert await live.quiet() == []
    assert [e["task_id"] for e in [*replayed, latest]] == [new["id"]] * 3
    assert latest["verb"] == "accept_task"
