"""Credentials, against a real `prickle serve`: tokens listed without their secrets, made
with labels and expiry, revoked at once (HTTP and WebSocket), by whom, and from the CLI."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from live import PROTOCOLS, Cast, opened
from server import Server, prickle
from websockets.exceptions import ConnectionClosed

from app.domain.tokens import EXPIRES_IN_MAX, LABEL_MAX

ME = "{ me { id } }"


@pytest.fixture(scope="module")
def cast(api_server: Server) -> Cast:
    return Cast(api_server).add("alice", "bob", "carol", "bob/coder", "bob/helper")


def tokens(server: Server, token: str) -> list[dict[str, Any]]:
    return server.run_data("queries/tokens", {}, token)["tokens"]


def create(server: Server, token: str, **variables: Any) -> dict[str, Any]:
    return server.run_data("mutations/create_token", variables, token)["create_token"]


def refused(server: Server, name: str, token: str, **variables: Any) -> str:
    body = server.run(name, variables, token)
    assert body.get("errors") and body.get("data") is None, body
    return str(body["errors"][0]["extensions"]["code"])


def unauthenticated(server: Server, token: str) -> bool:
    body = server.post(ME, token=token)
    if not body.get("errors"):
        return False
    assert body["errors"][0]["extensions"]["code"] == "unauthenticated", body
    return True


def refused_within(server: Server, token: str, seconds: float) -> float:
    """Seconds until the token is refused; fails after `seconds`."""
    started = time.monotonic()
    while not unauthenticated(server, token):
        assert time.monotonic() - started < seconds, "the token is still accepted"
        time.sleep(0.02)
    return time.monotonic() - started


def test_a_token_is_made_with_a_label_and_expiry_and_listed_without_its_secret(
    api_server: Server, cast: Cast
) -> None:
    bob = cast.token("bob")
    made = create(api_server, bob, label="laptop", expires_in_seconds=3600)
    info = made["token_info"]
    assert made["token"].startswith("prk_")
    assert (info["principal"], info["label"], info["revoked_at"]) == (
        cast.id("bob"),
        "laptop",
        None,
    )
    assert info["expires_at"] > info["created_at"]
    assert api_server.data(ME, token=made["token"])["me"]["id"] == cast.id("bob")
    listed = tokens(api_server, bob)
    assert info["id"] in [t["id"] for t in listed]
    assert {t["principal"] for t in listed} == {
        cast.id(n) for n in ("bob", "bob/coder", "bob/helper")
    }
    text = str(listed) + str(tokens(api_server, cast.token("bob/coder")))
    assert all(secret not in text for secret in (made["token"], bob, cast.token("bob/coder")))


def test_an_agent_lists_only_its_own_tokens_and_last_use_is_kept_to_the_minute(
    api_server: Server, cast: Cast
) -> None:
    coder = cast.token("bob/coder")
    listed = tokens(api_server, coder)
    assert {t["principal"] for t in listed} == {cast.id("bob/coder")}
    used = listed[0]["last_used_at"]
    assert used is not None and used.endswith(":00.000000Z")


def test_a_person_makes_tokens_for_its_agents_and_an_agent_for_itself_only(
    api_server: Server, cast: Cast
) -> None:
    made = create(api_server, cast.token("bob"), agent=cast.id("bob/coder"), label="ci")
    assert api_server.data(ME, token=made["token"])["me"]["id"] == cast.id("bob/coder")
    own = create(api_server, cast.token("bob/coder"), agent=cast.id("bob/coder"))
    assert own["token_info"]["principal"] == cast.id("bob/coder")
    other = cast.id("bob/helper")
    assert refused(api_server, "mutations/create_token", cast.token("bob/coder"), agent=other) == (
        "forbidden"
    )
    assert refused(api_server, "mutations/create_token", cast.token("carol"), agent=other) == (
        "forbidden"
    )
    ghost = cast.id("bob/ghost")
    assert refused(api_server, "mutations/create_token", cast.token("bob"), agent=ghost) == (
        "not_found"
    )


@pytest.mark.parametrize(
    "variables",
    [
        {"label": ""},
        {"label": "x" * (LABEL_MAX + 1)},
        {"label": "tab\there"},
        {"expires_in_seconds": 0},
        {"expires_in_seconds": -5},
        {"expires_in_seconds": EXPIRES_IN_MAX + 1},
        {"agent": "Bob/Coder"},
        {"agent": "no-slash"},
    ],
)
def test_bad_input_to_create_token_is_refused_and_changes_nothing(
    api_server: Server, cast: Cast, variables: dict[str, Any]
) -> None:
    before = tokens(api_server, cast.token("bob"))
    assert refused(api_server, "mutations/create_token", cast.token("bob"), **variables) == (
        "invalid_input"
    )
    assert [t["id"] for t in tokens(api_server, cast.token("bob"))] == [t["id"] for t in before]


def test_a_revoked_token_is_refused_at_once(api_server: Server, cast: Cast) -> None:
    made = create(api_server, cast.token("alice"), label="leaked")
    assert not unauthenticated(api_server, made["token"])
    revoked = api_server.run_data(
        "mutations/revoke_token", {"id": made["token_info"]["id"]}, cast.token("alice")
    )["revoke_token"]
    assert revoked["revoked_at"] is not None and revoked["label"] == "leaked"
    assert unauthenticated(api_server, made["token"])  # the very next request
    listed = {t["id"]: t for t in tokens(api_server, cast.token("alice"))}
    assert listed[made["token_info"]["id"]]["revoked_at"] == revoked["revoked_at"]
    again = api_server.run_data(
        "mutations/revoke_token", {"id": made["token_info"]["id"]}, cast.token("alice")
    )["revoke_token"]
    assert again == revoked  # revoking again changes nothing


def test_an_expired_token_is_refused(api_server: Server, cast: Cast) -> None:
    made = create(api_server, cast.token("alice"), expires_in_seconds=1)
    assert not unauthenticated(api_server, made["token"])
    time.sleep(1.1)
    assert unauthenticated(api_server, made["token"])


def test_who_may_revoke_a_token(api_server: Server, cast: Cast) -> None:
    coder = create(api_server, cast.token("bob"), agent=cast.id("bob/coder"))["token_info"]["id"]
    helper = create(api_server, cast.token("bob/helper"))["token_info"]["id"]
    bobs = create(api_server, cast.token("bob"))["token_info"]["id"]
    for who, token_id in [
        ("carol", bobs),
        ("carol", coder),
        ("bob/helper", coder),  # another agent's, even of the same owner
        ("bob/coder", bobs),  # its owner's
    ]:
        assert refused(api_server, "mutations/revoke_token", cast.token(who), id=token_id) == (
            "not_found"
        )
    assert all(t["revoked_at"] is None for t in tokens(api_server, cast.token("bob")))
    done = api_server.run_data("mutations/revoke_token", {"id": coder}, cast.token("bob"))
    assert done["revoke_token"]["principal"] == cast.id("bob/coder")
    mine = api_server.run_data("mutations/revoke_token", {"id": helper}, cast.token("bob/helper"))
    assert mine["revoke_token"]["revoked_at"] is not None
    for bad in ("", "nope", "x" * 300):
        assert refused(api_server, "mutations/revoke_token", cast.token("bob"), id=bad) == (
            "invalid_input"
        )


def test_register_agent_still_returns_a_first_token(api_server: Server, cast: Cast) -> None:
    listed = tokens(api_server, cast.token("bob/helper"))
    assert len(listed) >= 1 and listed[0]["principal"] == cast.id("bob/helper")


def test_prickle_token_revoke_revokes_from_the_command_line(api_server: Server, cast: Cast) -> None:
    made = create(api_server, cast.token("carol"), label="cli")
    token_id = made["token_info"]["id"]
    done = prickle("token", "revoke", token_id, "--database-url", api_server.database_url)
    assert done.returncode == 0, done.stderr
    assert token_id in done.stdout
    refused_within(api_server, made["token"], 2.0)  # another process: heard at once, or polled
    gone = prickle("token", "revoke", "0" * 26, "--database-url", api_server.database_url)
    assert gone.returncode == 2 and "prickle: not_found:" in gone.stderr


def test_prickle_token_create_prints_the_id_and_the_token_alone_on_the_last_line(
    api_server: Server, cast: Cast
) -> None:
    owner = cast.id("dave")
    url = api_server.database_url
    made = prickle("token", "create", "--owner", owner, "--label", "ops", "--database-url", url)
    assert made.returncode == 0, made.stderr
    first, token = made.stdout.rstrip("\n").split("\n")[-2:]
    listed = tokens(api_server, token)
    assert [(t["label"], t["id"] in first) for t in listed] == [("ops", True)]


async def _closed_within(live: Any, seconds: float) -> tuple[int | None, float]:
    started = time.monotonic()
    with pytest.raises(ConnectionClosed):
        while True:
            await live.receive(timeout=seconds)
    return live.ws.close_code, time.monotonic() - started


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_revoked_tokens_subscription_is_closed_with_4403_within_2s(
    api_server: Server, cast: Cast, protocol: str
) -> None:
    made = create(api_server, cast.token("alice"))
    async with opened(api_server, made["token"], protocol) as live:
        await live.subscribe({"project": cast.project("watched")})
        await asyncio.sleep(0.2)
        revoke = {"id": made["token_info"]["id"]}
        await asyncio.to_thread(
            api_server.run_data, "mutations/revoke_token", revoke, cast.token("alice")
        )
        code, took = await _closed_within(live, 2.0)
    assert code == 4403 and took < 2.0


async def test_a_subscription_is_closed_when_its_token_expires(
    api_server: Server, cast: Cast
) -> None:
    made = create(api_server, cast.token("alice"), expires_in_seconds=2)
    async with opened(api_server, made["token"]) as live:
        await live.subscribe({"project": cast.project("brief")})
        code, took = await _closed_within(live, 4.0)
    assert code == 4403 and took < 3.0
