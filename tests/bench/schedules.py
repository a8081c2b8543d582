"""`python -m tests.bench.schedules [--schedules 1000] [--servers 2]`

1,000 owner schedules due in the same second, run by two `prickle serve` processes on one
PostgreSQL database (a scratch database on PRICKLE_TEST_PG, dropped after): the time from
the due second until every task exists, and the due times with more than one task (0).

The schedules are made through the service in this process (every_seconds: 3600 from a
`starts_at` a whole second ahead), so both servers learn of them from the database, as
they would of schedules made through another server.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from app.domain.clock import rfc3339
from app.domain.principals import person
from app.service.admin import register_agent
from app.service.schedules import ScheduleInput, create_schedule
from app.storage.migrate import upgrade
from app.storage.store import Store
from tests.bench.run import pg_admin
from tests.support.server import PG_ADMIN, Server, start

PACKET = {"task": "tick", "deliverable_type": "doc", "acceptance_criteria": ["ticked"]}
LEAD_SECONDS = 10  # the due second lies this far ahead, plus the time to make them
MAKE_SECONDS = 0.01  # generous: a schedule is made in about 2 ms
RECHECK = "2"  # PRICKLE_SCHEDULER_RECHECK of the servers: they see new schedules this soon


async def make_schedules(url: str, count: int, starts_at: datetime) -> None:
    store = Store(url)
    try:
        await upgrade(store.engine)
        admin = person("admin")
        await register_agent(store, admin, "ticker")
        made = ScheduleInput(
            project="ticks",
            packet=PACKET,
            assignee="admin/ticker",
            every_seconds=3600,
            starts_at=rfc3339(starts_at),
        )
        for _ in range(count):
            await create_schedule(store, admin, made)
    finally:
        await store.close()


async def counts(conn: Any, due: datetime) -> tuple[int, int, int]:
    """(runs of the due time, tasks made by schedules, the most tasks of one due time)."""
    runs = await conn.fetchval("SELECT count(*) FROM schedule_runs WHERE due_at = $1", rfc3339(due))
    tasks = await conn.fetchval("SELECT count(*) FROM tasks WHERE schedule_id IS NOT NULL")
    most = await conn.fetchval(
        "SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM tasks"
        " WHERE schedule_id IS NOT NULL GROUP BY idempotency_key) AS per_due_time"
    )
    return runs, tasks, most


async def measure(url: str, logs: Path, schedules: int, servers: int) -> dict[str, float]:
    import asyncpg

    env = {"PRICKLE_SCHEDULER_RECHECK": RECHECK}
    running: list[Server] = [start(url, logs / f"server-{i}", env=env) for i in range(servers)]
    conn = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://", 1))
    try:
        lead = LEAD_SECONDS + schedules * MAKE_SECONDS
        due = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=round(lead))
        began = time.monotonic()
        await make_schedules(url, schedules, due)
        cpu_before = [cpu_seconds(server) for server in running]
        print(f"{schedules} schedules made in {time.monotonic() - began:.1f}s; due at {due}")
        assert datetime.now(UTC) < due, "the schedules were made after their due time"
        while (await counts(conn, due))[1] < schedules:
            await asyncio.sleep(0.05)
        done = datetime.now(UTC)
        cpu = sum(cpu_seconds(r) - b for r, b in zip(running, cpu_before, strict=True))
        await asyncio.sleep(1)  # anything more would be a duplicate
        runs, tasks, most = await counts(conn, due)
    finally:
        await conn.close()
        for server in running:
            server.stop()
    return {
        "seconds": (done - due).total_seconds(),
        "runs": runs,
        "tasks": tasks,
        "duplicates": max(most - 1, 0),
        "server_cpu_ms_per_run": cpu * 1000 / max(runs, 1),
    }


def cpu_seconds(server: Server) -> float:
    """User and system CPU the server process has used (Linux /proc)."""
    fields = Path(f"/proc/{server.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def main(schedules: int, servers: int) -> None:
    name = f"prickle_bench_{uuid.uuid4().hex[:10]}"
    await pg_admin(f'CREATE DATABASE "{name}"')
    try:
        base = PG_ADMIN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+asyncpg://", 1)
        with tempfile.TemporaryDirectory(prefix="prickle-bench-") as tmp:
            found = await measure(f"{base}/{name}", Path(tmp), schedules, servers)
    finally:
        await pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    print(
        f"{servers} servers, {schedules} schedules due in one second: every task within "
        f"{found['seconds']:.2f}s of the due second; {found['runs']:.0f} runs, "
        f"{found['tasks']:.0f} tasks, {found['duplicates']:.0f} duplicates; server CPU "
        f"{found['server_cpu_ms_per_run']:.1f} ms per run; load average {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m tests.bench.schedules")
    parser.add_argument("--schedules", type=int, default=1000)
    parser.add_argument("--servers", type=int, default=2)
    args = parser.parse_args()
    asyncio.run(main(args.schedules, args.servers))
