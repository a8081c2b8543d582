"""Owner schedules on several `prickle serve` processes sharing one PostgreSQL database.

Two servers run every_seconds: 1 schedules; one is killed with SIGKILL at a due time and
started again. Every due time that ran has exactly one run row and exactly one task, and
no task lacks its run. PostgreSQL pass only (PRICKLE_TEST_BACKEND=postgres).
"""

from __future__ import annotations

import asyncio
import itertools
import os
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from factory import PACKET
from server import Server, connect

pytestmark = pytest.mark.skipif(
    os.environ.get("PRICKLE_TEST_BACKEND", "sqlite") != "postgres",
    reason="PostgreSQL-only; runs in the PostgreSQL pass (PRICKLE_TEST_BACKEND=postgres)",
)

SCHEDULES = 10  # enough that a process is mid-transaction at most due instants
# Each server looks for schedules made by the other at least this often (seconds).
ENV = {"PRICKLE_SCHEDULER_RECHECK": "0.5"}


async def _rows(url: str, query: str) -> list[dict[str, Any]]:
    conn = await connect(url)
    try:
        return [dict(r) for r in await conn.fetch(query)]
    finally:
        await conn.close()


async def _earliest_due(url: str) -> datetime:
    [row] = await _rows(url, "SELECT min(next_run_at) AS due FROM schedules")
    return datetime.fromisoformat(row["due"])


async def _runs(url: str) -> list[dict[str, Any]]:
    return await _rows(url, "SELECT schedule_id, due_at, task_id, error FROM schedule_runs")


def _make_schedules(server: Server, owner: str) -> list[str]:
    server.register(owner, "ticker")
    every = {"project": "ticks", "assignee": "admin/ticker", "packet": PACKET, "every_seconds": 1}
    return [
        server.run_data("mutations/create_schedule", {"input": every}, owner)["create_schedule"][
            "id"
        ]
        for _ in range(SCHEDULES)
    ]


async def test_two_servers_and_a_kill_mid_run_make_exactly_one_task_per_due_time(
    start_server, pg_database_url: str
) -> None:  # type: ignore[no-untyped-def]
    first = start_server(url=pg_database_url, env=ENV)
    second = start_server(url=pg_database_url, env=ENV)
    owner = first.owner_token
    ids = _make_schedules(first, owner)
    await asyncio.sleep(4)
    due = await _earliest_due(pg_database_url)
    await asyncio.sleep(max(0.0, (due - datetime.now(UTC)).total_seconds()) + 0.003)
    first.process.kill()  # SIGKILL at a due time: its transaction, if any, is cut
    first.process.wait(5)
    killed_at = datetime.now(UTC)
    await asyncio.sleep(4)
    restarted = await asyncio.to_thread(start_server, url=pg_database_url, env=ENV)
    await asyncio.sleep(4)
    for server in (second, restarted):
        for schedule_id in ids:
            server.run_data("mutations/pause_schedule", {"id": schedule_id}, owner)
    runs = await _runs(pg_database_url)
    tasks = await _rows(
        pg_database_url,
        "SELECT id, schedule_id, idempotency_key, requester, requested_by_id, state FROM tasks",
    )
    # exactly one task per due time, and none without its run
    assert [r for r in runs if r["task_id"] is None or r["error"]] == []
    assert Counter((r["schedule_id"], r["due_at"]) for r in runs).most_common(1)[0][1] == 1
    assert sorted(r["task_id"] for r in runs) == sorted(t["id"] for t in tasks)
    keys = Counter(t["idempotency_key"] for t in tasks)
    assert keys.most_common(1)[0][1] == 1
    assert keys.keys() == {f"schedule:{r['schedule_id']}:{r['due_at']}" for r in runs}
    assert {(t["requester"], t["requested_by_id"], t["state"]) for t in tasks} == {
        (None, "admin", "routed")
    }
    assert len(runs) >= 30
    # Each schedule's due times are one second apart: count those that got no run.
    missed = 0
    for schedule_id in ids:
        dues = sorted(
            datetime.fromisoformat(r["due_at"]) for r in runs if r["schedule_id"] == schedule_id
        )
        missed += sum(
            round((b - a) / timedelta(seconds=1)) - 1 for a, b in itertools.pairwise(dues)
        )
    print(
        f"\n{len(runs)} due times run by 2 servers, one killed at {killed_at:%H:%M:%S.%f}:"
        f" {len(tasks)} tasks, 0 duplicates, {missed} due times without a run"
    )
    assert missed <= len(runs) // 10
