"""The WebSocket connection itself: authentication at connection_init on both subprotocols,
the cap on subscriptions per connection, pings on idle connections, and an independent
client (gql's WebsocketsTransport) against a real `prickle serve`."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from gql import Client, gql
from gql.transport.exceptions import TransportError
from gql.transport.websockets import WebsocketsTransport
from live import BRIEF, LEGACY, PROTOCOLS, TRANSPORT, Cast, opened
from server import Server
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

REFUSED_PAYLOADS = [
    {},
    {"Authorization": "Bearer prk_not-a-token"},
    {"Authorization": "Basic YWRtaW46YWRtaW4="},
    {"Authorization": "Bearer "},
    {"authorization": 42},
]


@pytest.fixture(scope="module")
def task(cast: Cast) -> dict[str, Any]:
    return cast.handoff("alice/coder", "alice/writer", "conn")


async def everything_until_closed(ws: Any) -> list[dict[str, Any]]:
    messages = []
    with pytest.raises(ConnectionClosed):
        async with asyncio.timeout(10):
            while True:
                messages.append(json.loads(await ws.recv()))
    return messages


# authentication


@pytest.mark.parametrize("payload", REFUSED_PAYLOADS)
async def test_transport_ws_closes_4403_without_a_valid_token_and_sends_nothing(
    live_server: Server, task: dict[str, Any], payload: dict[str, Any]
) -> None:
    async with connect(live_server.ws_url, subprotocols=[TRANSPORT]) as ws:  # type: ignore[list-item]
        await ws.send(json.dumps({"type": "connection_init", "payload": payload}))
        subscribe = {"query": BRIEF, "variables": {"task_id": task["id"], "after": "0"}}
        await ws.send(json.dumps({"id": "1", "type": "subscribe", "payload": subscribe}))
        assert await everything_until_closed(ws) == []
    assert (ws.close_code, ws.close_reason) == (4403, "Forbidden")


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_subscribing_before_connection_init_closes_4401(
    live_server: Server, task: dict[str, Any], protocol: str
) -> None:
    async with connect(live_server.ws_url, subprotocols=[protocol]) as ws:  # type: ignore[list-item]
        kind = "subscribe" if protocol == TRANSPORT else "start"
        payload = {"query": BRIEF, "variables": {"task_id": task["id"], "after": "0"}}
        await ws.send(json.dumps({"id": "1", "type": kind, "payload": payload}))
        assert await everything_until_closed(ws) == []
    assert (ws.close_code, ws.close_reason) == (4401, "Unauthorized")


@pytest.mark.parametrize("payload", REFUSED_PAYLOADS)
async def test_legacy_graphql_ws_answers_connection_error_then_closes(
    live_server: Server, task: dict[str, Any], payload: dict[str, Any]
) -> None:
    async with connect(live_server.ws_url, subprotocols=[LEGACY]) as ws:  # type: ignore[list-item]
        await ws.send(json.dumps({"type": "connection_init", "payload": payload}))
        start = {"query": BRIEF, "variables": {"task_id": task["id"], "after": "0"}}
        await ws.send(json.dumps({"id": "1", "type": "start", "payload": start}))
        messages = await everything_until_closed(ws)
    assert [m["type"] for m in messages] == ["connection_error"]
    assert messages[0]["payload"]["extensions"] == {"code": "unauthenticated"}
    assert ws.close_code is not None and ws.close_code != 1000


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_valid_token_in_connection_init_is_acknowledged(
    cast: Cast, task: dict[str, Any], protocol: str
) -> None:
    async with opened(cast.server, cast.token("alice/writer"), protocol) as live:
        await live.subscribe({"task_id": task["id"]}, query=BRIEF)
        assert (await live.event())["kind"] == "snapshot"


# the cap on subscriptions per connection


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_the_subscription_cap_answers_clearly_and_keeps_the_connection_usable(
    cast: Cast, protocol: str
) -> None:
    task = cast.handoff("alice/coder", "alice/writer", "cap")
    variables = {"task_id": task["id"]}
    async with opened(cast.server, cast.token("alice"), protocol) as live:
        for n in range(1, 21):
            await live.subscribe(variables, id=str(n), query=BRIEF)
        snapshots = [await live.receive() for _ in range(20)]
        assert sorted(int(m["id"]) for m in snapshots) == list(range(1, 21))
        await live.subscribe(variables, id="21", query=BRIEF)
        [error] = await live.errors(id="21")
        assert error["extensions"] == {"code": "rate_limited"}
        assert "at most 20 subscriptions per connection" in error["message"]
        await live.complete("1")
        await live.subscribe(variables, id="21", query=BRIEF)
        message = await live.receive()
        if message["type"] == "complete":  # graphql-ws confirms the stop
            assert message["id"] == "1"
            message = await live.receive()
        assert message["id"] == "21"
        assert message["payload"]["data"]["task_events"]["kind"] == "snapshot"
        await asyncio.to_thread(cast.move, "alice/writer", "accept_task", task["id"])
        moved = [await live.receive() for _ in range(20)]
        assert await live.quiet(0.3) == []
    assert sorted(int(m["id"]) for m in moved) == list(range(2, 22))
    assert {m["payload"]["data"]["task_events"]["verb"] for m in moved} == {"accept_task"}


# pings


async def test_idle_connections_are_pinged(start_server: Any) -> None:
    server = start_server(env={"PRICKLE_PING_SECONDS": "0.3"})
    async with opened(server, server.owner_token, TRANSPORT) as live:
        raw = [json.loads(await asyncio.wait_for(live.ws.recv(), 5)) for _ in range(2)]
        assert [m["type"] for m in raw] == ["ping", "ping"]
        await live.send({"type": "pong"})
        await live.send({"type": "ping"})
        assert json.loads(await asyncio.wait_for(live.ws.recv(), 5)) == {"type": "pong"}
    async with opened(server, server.owner_token, LEGACY) as live:
        raw = [json.loads(await asyncio.wait_for(live.ws.recv(), 5)) for _ in range(2)]
        assert [m["type"] for m in raw] == ["ka", "ka"]


# an independent client


@pytest.mark.parametrize(
    "subprotocol",
    [WebsocketsTransport.GRAPHQLWS_SUBPROTOCOL, WebsocketsTransport.APOLLO_SUBPROTOCOL],
)
async def test_gql_websockets_transport_subscribes_and_follows_moves(
    cast: Cast, subprotocol: str
) -> None:
    task = cast.handoff("alice/coder", "alice/writer", "gql")
    transport = WebsocketsTransport(
        url=cast.server.ws_url,
        init_payload={"Authorization": f"Bearer {cast.token('alice')}"},
        subprotocols=[subprotocol],
    )
    request = gql(BRIEF)
    request.variable_values = {"task_id": task["id"]}
    async with Client(transport=transport) as session:
        stream = session.subscribe(request)
        snapshot = (await anext(stream))["task_events"]
        await asyncio.to_thread(cast.move, "alice/writer", "accept_task", task["id"])
        await asyncio.to_thread(cast.move, "alice/writer", "start_task", task["id"])
        events = [(await anext(stream))["task_events"] for _ in range(2)]
        await stream.aclose()
    assert (snapshot["kind"], snapshot["to_state"]) == ("snapshot", "routed")
    assert [(e["from_state"], e["to_state"]) for e in events] == [
        ("routed", "accepted"),
        ("accepted", "working"),
    ]
    assert snapshot["seq"] < events[0]["seq"] < events[1]["seq"]


async def test_gql_websockets_transport_is_refused_without_a_valid_token(cast: Cast) -> None:
    transport = WebsocketsTransport(
        url=cast.server.ws_url, init_payload={"Authorization": "Bearer prk_not-a-token"}
    )
    with pytest.raises((TransportError, ConnectionClosed)):
        async with Client(transport=transport) as session:
            async for _ in session.subscribe(gql(BRIEF)):
                pytest.fail("an unauthenticated subscription received data")
