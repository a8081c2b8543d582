"""task_events over Server-Sent Events (GraphQL over SSE, distinct connections mode) against
a real `prickle serve`, with httpx streaming (tests/support/sse.py): each event's `id:` is its
cursor, a reconnect with `Last-Event-ID` gets exactly what it missed, the filters and
visibility hold, a bad token is refused, the per-principal cap, keep-alive comments, a
client that stops reading is cut with the cursor to resume from, and a
client that goes away leaves no subscriber behind."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Iterator
from contextlib import AsyncExitStack, contextmanager
from typing import Any

import h11
import httpx
from live import BRIEF, DEBUG_ENV, Cast, debug, last_cursor, settled, subscribers_reach
from server import Server
from sse import Message, headers, streamed
from test_subscriptions_load import BIG_PACKET, CYCLE, HEAVY, slow_socket

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


async def refusal(cast: Cast, variables: dict[str, Any], last_event_id: str | None) -> str:
    """The one error a stream opened this way answers, then completes."""
    token = cast.token("alice")
    async with streamed(cast.server, token, variables, last_event_id=last_event_id) as stream:
        message = await stream.message()
        assert message is not None and message.event == "next" and message.id is None
        [error] = message.data["errors"]
        assert error["extensions"]["code"] == "invalid_input"
        done = await stream.message()
        assert done is not None and done.event == "complete"
    return str(error["message"])


async def test_a_malformed_last_event_id_is_invalid_input_naming_the_header(cast: Cast) -> None:
    from_header = await refusal(cast, {"after": "0"}, last_event_id="-1")
    assert from_header.startswith("Last-Event-ID header: '-1' is not an event cursor")
    from_argument = await refusal(cast, {"after": "x9"}, last_event_id=None)
    assert from_argument.startswith("after: 'x9' is not an event cursor")


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


async def test_a_stream_ends_unauthenticated_when_its_token_is_revoked(cast: Cast) -> None:
    made = cast.server.run_data("mutations/create_token", {"label": "sse"}, cast.token("bob"))
    token, token_id = made["create_token"]["token"], made["create_token"]["token_info"]["id"]
    async with streamed(cast.server, token) as stream:
        await subscribers_reach(cast.server, 1)
        cast.server.run_data("mutations/revoke_token", {"id": token_id}, cast.token("bob"))
        refusal = await stream.message(timeout=2)
        assert refusal is not None and refusal.event == "next", refusal
        assert [e["extensions"]["code"] for e in refusal.data["errors"]] == ["unauthenticated"]
        done = await stream.message()
        assert done is not None and done.event == "complete"
    await subscribers_reach(cast.server, 0)


async def test_a_query_over_sse_is_one_next_message_then_complete(cast: Cast) -> None:
    query = "{ me { id } }"
    async with streamed(cast.server, cast.token("bob"), query=query) as stream:
        message = await stream.message()
        assert message is not None and message.event == "next"
        assert message.data == {"data": {"me": {"id": cast.id("bob")}}} and message.id is None
        done = await stream.message()
        assert done is not None and done.event == "complete"
        assert await stream.message() is None


async def test_a_get_streams_a_query_and_refuses_a_mutation(cast: Cast) -> None:
    async with httpx.AsyncClient(timeout=10) as client:
        answers = []
        for query in ("{ me { id } }", 'mutation { register_agent(name: "x") { agent_id } }'):
            response = await client.get(
                cast.server.graphql_url, params={"query": query}, headers=headers(cast.token("bob"))
            )
            assert response.status_code == 200, response.text
            answers.append([parse(block) for block in response.text.split("\r\n\r\n") if block])
    [[me, done], [refusal, done_too]] = answers
    assert me.data == {"data": {"me": {"id": cast.id("bob")}}}
    assert [e["extensions"]["code"] for e in refusal.data["errors"]] == ["invalid_input"]
    assert done.event == done_too.event == "complete"
    mine = cast.server.data("{ me { id } }", token=cast.token("bob"))["me"]["id"]
    agents = cast.server.data("{ tokens { principal } }", token=cast.token("bob"))["tokens"]
    assert f"{mine}/x" not in str(agents)


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


async def test_a_stream_that_stops_reading_is_cut_and_resumes_with_last_event_id(
    start_server: Any,
) -> None:
    server = start_server(env={**DEBUG_ENV, "PRICKLE_SUBSCRIBER_QUEUE": "5"})
    cast = Cast(server).add("alice", "alice/coder", "alice/writer")
    tasks = [cast.handoff("alice/coder", "alice/writer", "slow", **BIG_PACKET) for _ in range(6)]
    project = tasks[0]["project"]
    start = int(last_cursor(server, cast.token("alice"), project))
    variables = {"project": project, "after": str(start)}
    with slow_stream(server, cast.token("alice"), HEAVY, variables) as slow:
        await subscribers_reach(server, 1)
        for task in tasks:  # the slow client reads nothing meanwhile
            for by, verb in CYCLE:
                await asyncio.to_thread(cast.move, by, verb, task["id"])
        held = debug(server)
        messages = await asyncio.to_thread(read_to_the_end, slow)
    *received, refusal, done = messages
    assert (refusal.event, done.event) == ("next", "complete")
    [error] = refusal.data["errors"]
    assert error["extensions"]["code"] == "rate_limited" and refusal.id is None
    assert all(m.event == "next" and not m.data.get("errors") for m in received)
    assert error["extensions"]["after"] == received[-1].id
    assert (held["subscribers"], held["queued"]) == (0, 0)  # let go of while still connected
    last = start + len(tasks) * len(CYCLE)
    token = cast.token("alice")
    async with streamed(server, token, variables, HEAVY, last_event_id=received[-1].id) as again:
        rest = [event for _, event in await again.events(last - int(received[-1].id))]
        assert await again.quiet(0.3) == []
    seqs = [m.data["data"]["task_events"]["seq"] for m in received] + [e["seq"] for e in rest]
    assert seqs == list(range(start + 1, last + 1))
    assert len(received) < len(seqs)


@contextmanager
def slow_stream(
    server: Server, token: str, query: str, variables: dict[str, Any]
) -> Iterator[socket.socket]:
    """An SSE request on a socket with a tiny receive buffer, whose response is not read."""
    sock = slow_socket(server)
    sock.setblocking(True)
    body = json.dumps({"query": query, "variables": variables}).encode()
    host = server.base_url.removeprefix("http://")
    head = [
        "POST /graphql HTTP/1.1",
        f"Host: {host}",
        "Accept: text/event-stream",
        "Content-Type: application/json",
        f"Authorization: Bearer {token}",
        f"Content-Length: {len(body)}",
    ]
    sock.sendall("\r\n".join(head).encode() + b"\r\n\r\n" + body)
    try:
        yield sock
    finally:
        sock.close()


def read_to_the_end(sock: socket.socket) -> list[Message]:
    """The response's SSE messages, read until the server ends it."""
    connection = h11.Connection(h11.CLIENT)
    connection.send(h11.Request(method="POST", target="/graphql", headers=[("Host", "x")]))
    connection.send(h11.EndOfMessage())
    body = bytearray()
    sock.settimeout(30)
    while True:
        event = connection.next_event()
        if event is h11.NEED_DATA:
            connection.receive_data(sock.recv(1 << 16))
        elif isinstance(event, h11.Response):
            assert event.status_code == 200, event
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage):
            break
    return [parse(block) for block in body.decode().split("\r\n\r\n") if _is_message(block)]


def _is_message(block: str) -> bool:
    return any(line and not line.startswith(":") for line in block.split("\r\n"))


def parse(block: str) -> Message:
    fields = dict(line.split(": ", 1) for line in block.split("\r\n") if ": " in line)
    data = json.loads(fields["data"]) if fields.get("data") else None
    return Message(fields["event"], data, fields.get("id"))
