"""No window after a revocation: from the moment `prickle token revoke`, `prickle erase`,
`revoke_token`, `erase_agent` or `erase_person` returns, or a token's expiry passes, the
token is refused by every server process on the database, at the very next request.

Each test runs many trials, each on a fresh token already used (so known to every server),
and counts the uses that got through right after the revocation returned: there must be
none. The commands run as processes of their own (tests/support/forked_cli.py: `app.cli.main` in a
forked child, without the interpreter's start), against one running `prickle serve`, and on
PostgreSQL a second one on the same database. Open streams (WebSocket, SSE, A2A) of a
token revoked from the command line are closed within 2 s on each server.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

import httpx
import pytest
from a2a_inbound import NOW, VERSION, message, rpc
from forked_cli import Commands
from live import Cast, opened
from server import BACKEND, Server, provisioned, start
from sse import streamed
from websockets.exceptions import ConnectionClosed

from app.domain.principals import person

TRIALS = 50
ME = "{ me { id } }"
NOBODY = "0" * 26  # a token id that exists nowhere


@pytest.fixture(scope="module")
def servers(api_server: Server, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Server]]:
    """The module's server; on PostgreSQL a second process on the same database beside it."""
    if BACKEND != "postgres":
        yield [api_server]
        return
    second = start(api_server.database_url, tmp_path_factory.mktemp("second") / "logs")
    try:
        yield [api_server, second]
    finally:
        second.stop()


@pytest.fixture(scope="module")
def commands(api_server: Server) -> Iterator[Commands]:
    url = api_server.database_url
    with Commands(warm=["token", "revoke", NOBODY, "--database-url", url]) as running:
        yield running


def accepted(server: Server, token: str) -> bool:
    """Whether the server answers `me` for the token (else it must say unauthenticated)."""
    body = server.post(ME, token=token)
    if not body.get("errors"):
        return True
    assert body["errors"][0]["extensions"]["code"] == "unauthenticated", body
    return False


def through(servers: list[Server], tokens: list[str], revoke: Callable[[int], None]) -> str:
    """Trial i: token i used on every server, `revoke(i)`, then used on each at once. The
    trials in which a use got through, told per server ('' when none did)."""
    got: list[str] = []
    for i, token in enumerate(tokens):
        for server in servers:
            assert accepted(server, token), f"trial {i}: the fresh token is refused"
        revoke(i)
        got += [f"trial {i} on server {n}" for n, s in enumerate(servers) if accepted(s, token)]
    return f"{len(got)} uses of {len(tokens)} revoked tokens got through: {got}" if got else ""


def fresh_people(server: Server, count: int) -> tuple[list[str], list[str]]:
    """Handles of new persons and a token for each."""
    handles = [f"w{uuid.uuid4().hex[:10]}" for _ in range(count)]
    return handles, provisioned(server.database_url, *(person(h) for h in handles))


def made_tokens_of(server: Server, token: str) -> dict[str, Any]:
    """A new token of the principal whose token this is, as `create_token` answers it."""
    made: dict[str, Any] = server.run_data("mutations/create_token", {}, token)["create_token"]
    return made


def made_tokens(server: Server, count: int) -> list[dict[str, Any]]:
    """New tokens of the owner (admin), each as `create_token` answers it."""
    return [
        server.run_data("mutations/create_token", {}, server.owner_token)["create_token"]
        for _ in range(count)
    ]


def test_prickle_token_revoke_leaves_no_window(servers: list[Server], commands: Commands) -> None:
    first = servers[0]
    made = made_tokens(first, TRIALS)

    def revoke(i: int) -> None:
        token_id = made[i]["token_info"]["id"]
        done = commands.run("token", "revoke", token_id, "--database-url", first.database_url)
        assert done.code == 0 and token_id in done.out, done

    assert not through(servers, [m["token"] for m in made], revoke)


def test_prickle_erase_leaves_no_window(servers: list[Server], commands: Commands) -> None:
    first = servers[0]
    handles, tokens = fresh_people(first, TRIALS)

    def erase(i: int) -> None:
        done = commands.run("erase", "--person", handles[i], "--database-url", first.database_url)
        assert done.code == 0 and "1 tokens revoked" in done.out, done

    assert not through(servers, tokens, erase)


def test_revoke_token_leaves_no_window_on_any_server(servers: list[Server]) -> None:
    last = servers[-1]  # on PostgreSQL: revoked through the second, used on both
    made = made_tokens(servers[0], TRIALS)

    def revoke(i: int) -> None:
        variables = {"id": made[i]["token_info"]["id"]}
        last.run_data("mutations/revoke_token", variables, servers[0].owner_token)

    assert not through(servers, [m["token"] for m in made], revoke)


def test_erase_person_and_erase_agent_leave_no_window(servers: list[Server]) -> None:
    first = servers[-1]
    handles, tokens = fresh_people(first, TRIALS // 2)
    agents = [first.register(token, "bot") for token in tokens]

    def erase_agent(i: int) -> None:
        done = first.run_data(
            "mutations/erase_agent", {"agent_id": f"{handles[i]}/bot"}, tokens[i]
        )["erase_agent"]
        assert done["tokens_revoked"] == 1, done

    def erase_person(i: int) -> None:
        done = first.run_data("mutations/erase_person", {"handle": handles[i]}, tokens[i])
        assert done["erase_person"]["tokens_revoked"] == 1, done

    assert not through(servers, agents, erase_agent)
    assert not through(servers, tokens, erase_person)


def test_an_expired_token_is_refused_from_its_expiry_on(servers: list[Server]) -> None:
    first = servers[0]
    made = [
        first.run_data("mutations/create_token", {"expires_in_seconds": 1}, first.owner_token)[
            "create_token"
        ]
        for _ in range(5)
    ]
    for m in made:
        assert all(accepted(s, m["token"]) for s in servers)
    last = max(datetime.fromisoformat(m["token_info"]["expires_at"]) for m in made)
    time.sleep(max(0.0, last.timestamp() - time.time()))  # until the last expiry has passed
    got = [
        (i, n) for i, m in enumerate(made) for n, s in enumerate(servers) if accepted(s, m["token"])
    ]
    assert not got, f"expired tokens accepted: {got}"


async def test_prickle_token_revoke_closes_the_tokens_streams_on_every_server_within_2s(
    servers: list[Server], commands: Commands
) -> None:
    """Open WebSocket subscriptions (one per server) and one over SSE; from the moment the
    command returns, an operation sent on an open connection is not run (its connection is
    closed, 4403), and every stream ends within 2 s."""
    made = made_tokens(servers[0], 1)[0]
    token, token_id = made["token"], made["token_info"]["id"]
    url = servers[0].database_url
    heard: list[dict[str, Any]] = []
    ended: list[Any] = []

    async def closed(live: Any) -> int | None:
        try:
            while True:
                heard.append(await live.receive(timeout=5))
        except ConnectionClosed:
            return live.ws.close_code  # type: ignore[no-any-return]

    async def sse_ended(stream: Any) -> None:
        while (message := await stream.message(timeout=5)) is not None:
            ended.append(message)

    async with (
        opened(servers[0], token) as first,
        opened(servers[-1], token) as second,
        streamed(servers[-1], token, {"project": "anywhere"}) as sse,
    ):
        for live in (first, second):
            await live.subscribe({"project": "anywhere"})
        assert await first.quiet(0.2) == []  # subscribed, nothing to hear
        done = await asyncio.to_thread(
            commands.run, "token", "revoke", token_id, "--database-url", url
        )
        assert done.code == 0, done
        with contextlib.suppress(ConnectionClosed):  # (closed already: told by a NOTIFY)
            await first.send({"id": "2", "type": "subscribe", "payload": {"query": ME}})
        async with asyncio.timeout(2.0):
            codes = await asyncio.gather(closed(first), closed(second), sse_ended(sse))
    assert codes[:2] == [4403, 4403], codes
    assert not [m for m in heard if m.get("id") == "2"], heard  # `me` was not answered
    assert [m.event for m in ended] == ["next", "complete"], ended
    assert ended[0].data["errors"][0]["extensions"]["code"] == "unauthenticated", ended


def test_prickle_token_revoke_ends_the_tokens_a2a_streams_within_2s(
    servers: list[Server], commands: Commands
) -> None:
    cast = Cast(servers[0]).add("alice", "alice/coder")
    made = made_tokens_of(servers[0], cast.token("alice"))
    said = {"message": message("rev", uuid.uuid4().hex), "configuration": NOW}  # at once
    sent = rpc(cast, "alice", "alice/coder", "SendMessage", said)
    task_id = sent.json()["result"]["task"]["id"]
    body = {"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task_id}}
    opened = {**VERSION, "Authorization": f"Bearer {made['token']}"}
    url = f"{servers[-1].base_url}/a2a/{cast.id('alice/coder')}"  # on the other, on PostgreSQL
    with httpx.stream("POST", url, json=body, headers=opened, timeout=5) as stream:
        lines = stream.iter_lines()
        assert next(line for line in lines if line.startswith("data:"))  # the task
        token_id = made["token_info"]["id"]
        done = commands.run("token", "revoke", token_id, "--database-url", servers[0].database_url)
        assert done.code == 0, done
        returned = time.monotonic()
        rest = list(lines)  # until the server ends the stream
        took = time.monotonic() - returned
    assert not [line for line in rest if line.startswith("data:")] and took < 2.0, (rest, took)
