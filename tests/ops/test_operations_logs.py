"""Structured logs of a running `prickle serve --access-log`: one JSON line per event with
the request id (the client's X-Request-ID, echoed back), the principal, the operation, the
duration and the code; never a token; and clients that go away mid-stream are no fault."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from live import ALICE_AND_AGENTS, BRIEF, LEGACY, TRANSPORT, Cast, opened
from server import Server

# the log lines are written above storage: the backend does not change them
pytestmark = pytest.mark.once

CREATE_TOKEN = 'mutation { create_token(label: "ci") { token token_info { id } } }'
REVOKE_TOKEN = "mutation($id: ID!) { revoke_token(id: $id) { id } }"


def log_lines(server: Server) -> list[dict[str, Any]]:
    """Every line the server wrote to stderr, each parsed as JSON (any other fails)."""
    text = (server.logs / "stderr").read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def requests_of(server: Server) -> list[dict[str, Any]]:
    return [line for line in log_lines(server) if line["logger"] == "app.requests"]


def test_lines_are_json_with_the_given_request_id(start_server: Any) -> None:
    server = start_server("--access-log")
    response = server.client.post(
        server.graphql_url,
        json={"query": "query Me { me { id } }"},
        headers={**server.headers(), "X-Request-ID": "trace-me-42"},
    )
    assert response.headers["x-request-id"] == "trace-me-42"
    refused = server.client.post(
        server.graphql_url,
        json={"query": "{ no_such_field }"},
        headers={**server.headers(), "X-Request-ID": "refused-1"},
    )
    made = server.client.get(f"{server.base_url}/healthz").headers["x-request-id"]
    server.stop()
    lines = {line.get("request_id"): line for line in requests_of(server)}
    me = lines["trace-me-42"]
    assert me["message"] == "request" and me["level"] == "info"
    assert (me["method"], me["path"], me["status"]) == ("POST", "/graphql", 200)
    assert (me["principal"], me["operation"], me["code"]) == ("admin", "Me", "ok")
    assert isinstance(me["duration_ms"], float)
    assert lines["refused-1"]["code"] == refused.json()["errors"][0]["extensions"]["code"]
    assert len(made) == 32 and lines[made]["path"] == "/healthz"


def test_a_malformed_request_id_is_replaced(start_server: Any) -> None:
    server = start_server()
    given = 'bad id {"injected": 1}' + "x" * 200
    response = server.client.get(f"{server.base_url}/healthz", headers={"X-Request-ID": given})
    assert response.headers["x-request-id"] != given
    assert len(response.headers["x-request-id"]) == 32


def test_text_format_on_request(start_server: Any) -> None:
    server = start_server("--log-format", "text", "--access-log")
    server.client.get(f"{server.base_url}/healthz", headers={"X-Request-ID": "text-1"})
    server.stop()
    stderr = (server.logs / "stderr").read_text()
    assert "request_id=text-1" in stderr
    assert not stderr.lstrip().startswith("{")


async def test_no_token_in_the_log_after_a_whole_lifecycle(start_server: Any) -> None:
    server = start_server("--access-log")
    cast = Cast(server).add(*ALICE_AND_AGENTS)
    task = cast.handoff("alice/coder", "alice/writer", "logs")
    async with opened(server, cast.token("alice")) as live:
        await live.subscribe({"task_id": task["id"]}, query=BRIEF)
        await live.event()
        cast.move("alice/writer", "accept_task", task["id"])
        cast.move("alice/writer", "start_task", task["id"])
        await live.events(2)
    made = server.data(CREATE_TOKEN, token=cast.token("alice"))["create_token"]
    assert server.data("{ me { id } }", token=made["token"])["me"]["id"] == cast.id("alice")
    server.data(REVOKE_TOKEN, {"id": made["token_info"]["id"]}, cast.token("alice"))
    assert server.post("{ me { id } }", token=made["token"])["errors"]
    assert server.post("{ me { id } }", token="prk_not-a-real-token")["errors"]
    server.stop()
    stderr = (server.logs / "stderr").read_text()
    stdout = (server.logs / "stdout").read_text()
    used = [*cast.tokens.values(), made["token"], "prk_not-a-real-token", server.owner_token]
    for token in used:
        assert token not in stderr
    for token in used[:-1]:  # the owner's is printed once, on stdout, by design
        assert token not in stdout
    principals = {line.get("principal") for line in requests_of(server)}
    assert {cast.id("alice"), cast.id("alice/writer"), cast.id("alice/coder")} <= principals


async def test_100_subscribers_dropping_mid_stream_log_no_error(start_server: Any) -> None:
    server = start_server("--access-log", "--rate-limit", "0")
    cast = Cast(server).add(*ALICE_AND_AGENTS)
    task = cast.handoff("alice/coder", "alice/writer", "drops")
    streaming = asyncio.Event()
    done = asyncio.Event()

    async def subscriber(n: int) -> None:
        protocol = LEGACY if n % 2 else TRANSPORT
        async with opened(server, cast.token("alice"), protocol) as live:
            await live.subscribe({"project": task["project"]}, query=BRIEF)
            await live.event(timeout=30)
            streaming.set()
            await asyncio.sleep(0.01 * (n % 10))
            live.ws.transport.abort()  # gone, without a closing handshake

    def mover() -> None:
        while not done.is_set():
            cast.handoff("alice/coder", "alice/writer", "drops")

    moving = asyncio.create_task(asyncio.to_thread(mover))
    await asyncio.gather(*(subscriber(n) for n in range(100)))
    await asyncio.sleep(0.5)
    done.set()
    await moving
    server.stop()
    stderr = (server.logs / "stderr").read_text()
    assert "Traceback" not in stderr
    lines = log_lines(server)
    assert not [line for line in lines if line["level"] in ("error", "critical")]
    closed = [line for line in lines if line["message"] == "websocket closed"]
    assert len(closed) == 100  # one info line per connection, nothing more
