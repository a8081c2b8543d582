"""task_events over Server-Sent Events (GraphQL over SSE, distinct connections mode) against
a real `prickle serve`, with httpx streaming (tests/sse.py): each event's `id:` is its
cursor, a reconnect with `Last-Event-ID` gets exactly what it missed, the filters and
visibility hold, a bad token is refused, the per-principal cap, keep-alive comments, and a
client that goes away leaves no subscriber behind."""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from typing import Any

import httpx
from live import BRIEF, DEBUG_ENV, Cast, settled, subscribers_reach
from sse import headers, streamed

CAST = ("alice", "bob", "alice/coder", "alice/writer", "bob/builder")  # conftest's `cast`

# Moves from routed, and who makes each: the assignee, then its owner, then the requester.
MOVES = [
    ("alice/writer", "accept_task"),
    ("alice/writer", "start_task"),
    ("alice", "stop_run"),
    ("alice", "resume_run"),
    ("alice/coder", "cancel_task"),
]


async def test_live_events_carry_their_cursor_as_the_event_id(cast: Cast) -> None:
    task = cast.handoff("alice/coder", "alice/writer", "ids")
    async with streamed(cast.server, cast.token("alice"), {"task_id": task["id"]}) as stream:
        snapshot_id, snapshot = await stream.event()
        assert snapshot["kind"] == "snapshot" and snapshot_id == snapshot["cursor"]
        for by, verb in MOVES[:3]:
            cast.move(by, verb, task["id"])
        events = await stream.events(3)
        assert await stream.quiet() == []
    assert [e["verb"] for _, e in events] == [verb for _, verb in MOVES[:3]]
    assert [event_id for event_id, _ in events] == [e["cursor"] for _, e in events]
    seqs = [snapshot["seq"]] + [e["seq"] for _, e in events]
    assert seqs == sorted(set(seqs))


async def test_a_reconnect_with_last_event_id_gets_exactly_what_it_missed(cast: Cast) -> None:
    task = cast.handoff("alice/coder", "alice/writer", "resume")
    variables = {"project": task["project"], "after": "0"}
    async with streamed(cast.server, cast.token("alice"), variables) as stream:
        seen = await stream.events(2)  # created, then moved to routed by the gate
        cast.move(*MOVES[0], task["id"])
        seen.append(await stream.event())
    last_id = seen[-1][0]
    assert last_id is not None
    for by, verb in MOVES[1:4]:  # made while no stream is open
        cast.move(by, verb, task["id"])
    # the reconnect sends the same request (after: "0") with Last-Event-ID: the header wins
    token = cast.token("alice")
    async with streamed(cast.server, token, variables, last_event_id=last_id) as again:
        missed = await again.events(3)
        cast.move(*MOVES[4], task["id"])
        latest = await again.event()
        assert await again.quiet() == []
    assert [e["verb"] for _, e in missed] == [verb for _, verb in MOVES[1:4]]
    assert latest[1]["verb"] == "cancel_task"
    everything = seen + missed + [latest]
    seqs = [e["seq"] for _, e in everything]
    assert seqs == sorted(set(seqs)), "a gap or a duplicate across the reconnect"
    assert [event_id for event_id, _ in everything] == [e["cursor"] for _, e in everything]
    assert [e["version"] for _, e in everything] == list(range(1, 8))


async def test_a_malformed_last_event_id_is_invalid_input(cast: Cast) -> None:
    async with streamed(cast.server, cast.token("alice"), {}, last_event_id="x9") as stream:
        message = await stream.message()
        assert message is not None and message.event == "next" and message.id is None
        assert [e["extensions"]["code"] for e in message.data["errors"]] == ["invalid_input"]
        done = await stream.message()
        assert done is not None and done.event == "complete"


async def test_filters_and_visibility_hold_over_sse(cast: Cast) -> None:
    async with AsyncExitStack() as streams:
        bob = await streams.enter_async_context(streamed(cast.server, cast.token("bob")))
        alice_other = await streams.enter_async_context(
            streamed(cast.server, cast.token("alice"), {"project": cast.project("elsewhere")})
        )
        await subscribers_reach(cast.server, 2)
        own = cast.handoff("alice/coder", "alice/writer", "private")  # bob may not see it
        cast.move("alice/writer", "accept_task", own["id"])
        shared = cast.handoff("alice/coder", "bob/builder", "private")  # bob's gate holds it
        cast.move("bob", "approve_handoff", shared["id"])
        got = await bob.events(3)
        assert await bob.quiet() == []
        assert await alice_other.quiet() == []
    assert {e["task_id"] for _, e in got} == {shared["id"]}
    assert [e["verb"] for _, e in got] == ["handoff", "handoff", "approve_handoff"]


async def test_a_missing_or_bad_token_is_refused_before_any_stream(cast: Cast) -> None:
    body = {"query": BRIEF, "variables": {}}
    async with httpx.AsyncClient(timeout=10) as client:
        for token in (None, "not-a-token"):
            response = await client.post(cast.server.graphql_url, json=body, headers=headers(token))
            assert response.status_code == 401, response.text
            assert response.headers["content-type"] == "application/json"
            errors = response.json()["errors"]
            assert [e["extensions"]["code"] for e in errors] == ["unauthenticated"]


async def test_a_query_over_sse_is_one_next_message_then_complete(cast: Cast) -> None:
    query = "{ me { id } }"
    async with streamed(cast.server, cast.token("bob"), query=query) as stream:
        message = await stream.message()
        assert message is not None and message.event == "next"
        assert message.data == {"data": {"me": {"id": cast.id("bob")}}} and message.id is None
        done = await stream.message()
        assert done is not None and done.event == "complete"
        assert await stream.message() is None


async def test_a_client_that_goes_away_leaves_no_subscriber(start_server: Any) -> None:
    server = start_server(env={**DEBUG_ENV, "PRICKLE_PING_SECONDS": "0.3"})
    cast = Cast(server).add("alice", "alice/coder", "alice/writer")
    baseline = await settled(server, lambda f: f["subscribers"] == 0)
    async with AsyncExitStack() as streams:
        opened = [
            await streams.enter_async_context(streamed(server, cast.token("alice")))
            for _ in range(5)
        ]
        await subscribers_reach(server, 5)
        await asyncio.sleep(1)
        assert all(stream.comments >= 2 for stream in opened), "no keep-alive on idle streams"
    after = await settled(
        server, lambda f: f["subscribers"] == 0 and f["tasks"] <= baseline["tasks"]
    )
    assert after["subscribers"] == 0 and after["tasks"] <= baseline["tasks"], (baseline, after)


async def test_a_principal_holds_a_limited_number_of_streams(start_server: Any) -> None:
    server = start_server(env={**DEBUG_ENV, "PRICKLE_STREAMS_PER_PRINCIPAL": "2"})
    cast = Cast(server).add("alice", "bob")
    async with AsyncExitStack() as streams:
        for _ in range(2):
            await streams.enter_async_context(streamed(server, cast.token("alice")))
        await subscribers_reach(server, 2)
        async with streamed(server, cast.token("alice")) as third:
            refusal = await third.message()
            assert refusal is not None and refusal.event == "next"
            assert [e["extensions"]["code"] for e in refusal.data["errors"]] == ["rate_limited"]
            done = await third.message()
            assert done is not None and done.event == "complete"
        async with streamed(server, cast.token("bob")) as other:  # another principal's own
            await subscribers_reach(server, 3)
            assert await other.quiet(0.2) == []
    await subscribers_reach(server, 0)
    async with streamed(server, cast.token("alice")):  # the places are free again
        await subscribers_reach(server, 1)
