"""Revocation across processes on PostgreSQL: two `prickle serve` on one database; a token
revoked through one is refused by the other at once, and its WebSocket there is closed.

Run in the PostgreSQL pass only (PRICKLE_TEST_BACKEND=postgres).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable

import pytest
from live import opened
from server import Server
from websockets.exceptions import ConnectionClosed

pytestmark = pytest.mark.skipif(
    os.environ.get("PRICKLE_TEST_BACKEND", "sqlite") != "postgres",
    reason="PostgreSQL-only; runs in the PostgreSQL pass (PRICKLE_TEST_BACKEND=postgres)",
)


def _refused_after(server: Server, token: str, most: float) -> float:
    started = time.monotonic()
    while not server.post("{ me { id } }", token=token).get("errors"):
        assert time.monotonic() - started < most, "the other process still accepts the token"
        time.sleep(0.01)
    return time.monotonic() - started


async def test_a_token_revoked_through_one_process_is_refused_by_another_at_once(
    pg_database_url: str, start_server: Callable[..., Server]
) -> None:
    first = start_server(url=pg_database_url)
    second = start_server(url=pg_database_url)
    owner = first.owner_token
    made = first.run_data("mutations/create_token", {"label": "shared"}, owner)["create_token"]
    token, token_id = made["token"], made["token_info"]["id"]
    assert second.data("{ me { id } }", token=token)["me"]["id"] == "admin"  # cached there
    async with opened(second, token) as live:
        await live.subscribe({"project": "anything"})
        await asyncio.sleep(0.2)
        await asyncio.to_thread(first.run_data, "mutations/revoke_token", {"id": token_id}, owner)
        revoked_at = time.monotonic()
        took = await asyncio.to_thread(_refused_after, second, token, 2.0)
        with pytest.raises(ConnectionClosed):
            while True:
                await live.receive(timeout=2.0)
        closed_after = time.monotonic() - revoked_at
    assert took < 0.5, took
    assert live.ws.close_code == 4403 and closed_after < 2.0


async def test_prickle_token_revoke_is_heard_by_a_running_server_at_once(
    pg_database_url: str, start_server: Callable[..., Server]
) -> None:
    from server import prickle

    server = start_server(url=pg_database_url)
    made = server.run_data("mutations/create_token", {}, server.owner_token)["create_token"]
    assert server.data("{ me { id } }", token=made["token"])["me"]["id"] == "admin"
    done = prickle("token", "revoke", made["token_info"]["id"], "--database-url", pg_database_url)
    assert done.returncode == 0, done.stderr
    assert _refused_after(server, made["token"], 2.0) < 0.5
