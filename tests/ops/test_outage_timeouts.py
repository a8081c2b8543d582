"""Nothing hangs: a statement past PRICKLE_DB_STATEMENT_TIMEOUT, or a request that waited
PRICKLE_DB_POOL_TIMEOUT for a pooled connection, answers `unavailable` (PostgreSQL); the
next request, once the database is free again, answers as usual."""

from __future__ import annotations

from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
import httpx
from server import Server, postgres_only

pytestmark = postgres_only

COUNT = "{ tasks(first: 1) { total_count } }"


@asynccontextmanager
async def tasks_locked(server: Server) -> AsyncIterator[None]:
    """The tasks table locked by another session: every statement reading it waits."""
    url = server.database_url.replace("postgresql+asyncpg://", "postgresql://", 1)
    conn = await asyncpg.connect(url)
    try:
        async with conn.transaction():
            await conn.execute("LOCK TABLE tasks IN ACCESS EXCLUSIVE MODE")
            yield
    finally:
        await conn.close()


def count(server: Server) -> httpx.Response:
    body = {"query": COUNT}
    return httpx.post(server.graphql_url, json=body, headers=server.headers(), timeout=30)


def assert_timed_out(response: httpx.Response) -> None:
    assert response.status_code == 503, response.text
    (error,) = response.json()["errors"]
    assert error["extensions"]["code"] == "unavailable"
    assert "timed out" in error["message"]


async def test_a_statement_past_the_statement_timeout_answers_unavailable(
    start_server: Any,
) -> None:
    server = start_server(env={"PRICKLE_DB_STATEMENT_TIMEOUT": "0.5"})
    assert count(server).status_code == 200
    async with tasks_locked(server):
        assert_timed_out(count(server))
    assert count(server).json()["data"]["tasks"]["total_count"] == 0
    assert "Traceback" not in server.output()
    assert "canceling statement due to statement timeout" in server.output()


async def test_a_request_that_waits_too_long_for_a_connection_answers_unavailable(
    start_server: Any,
) -> None:
    env = {
        "PRICKLE_DB_POOL_SIZE": "1",
        "PRICKLE_DB_POOL_TIMEOUT": "0.3",
        "PRICKLE_DB_STATEMENT_TIMEOUT": "2",
    }
    server = start_server(env=env)
    assert count(server).status_code == 200
    async with tasks_locked(server):
        with ThreadPoolExecutor(4) as pool:  # the pool's one and its one overflow wait
            answers = list(pool.map(lambda _: count(server), range(4)))
            refused = [a for a in answers if a.status_code != 200]
            assert refused, [a.text for a in answers]
            for answer in refused:
                assert_timed_out(answer)
    assert count(server).status_code == 200
    assert "Traceback" not in server.output()
    assert "QueuePool limit" in server.output()  # the first timed out waiting for the pool
