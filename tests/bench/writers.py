"""Events committed per second by 1, 2, 4 and 8 concurrent writers on PostgreSQL, database
only (no HTTP), with the database's CPU per event beside each rate.

Each writer is a connection of its own making one move after another on a task of its own,
in the server's own transaction shape: lock the task row, update it, append one event
(`tx.events.append`), commit. The server's code is imported from wherever `app` resolves,
so the same file measures another checkout:

    python tests/bench/writers.py                       # this checkout
    PYTHONPATH=/path/to/other/checkout python tests/bench/writers.py --label before

Two modes: `durable` (the database's own settings: each commit waits for its WAL flush) and
`async_commit` (synchronous_commit off for the bench's database: what limits the writers is
then the lock and the CPU, not the disk). Database CPU is the user+system time of the
writers' PostgreSQL backends (/proc), per event committed; the bench process's own CPU
share is reported too (on a 2-core machine the writers' Python can saturate first).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import sys
import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

WRITERS = (1, 2, 4, 8)
SECONDS = 2.0
RUNS = 5
PG_ADMIN = os.environ.get("PRICKLE_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
TICKS = os.sysconf("SC_CLK_TCK")


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


async def _admin(statement: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(PG_ADMIN, timeout=10)
    try:
        await conn.execute(statement)
    finally:
        await conn.close()


async def _tasks(url: str, count: int) -> list[str]:
    from app.domain.principals import agent, person
    from app.service import admin, creation, verbs
    from app.service.inputs import HandoffInput
    from app.storage.migrate import upgrade
    from app.storage.store import Store

    store = Store(url)
    try:
        await upgrade(store.engine)
        alice = person("alice")
        await admin.provision_token(store, alice)
        await admin.register_agent(store, alice, "writer")
        packet = {"task": "bench", "deliverable_type": "code", "acceptance_criteria": ["it runs"]}
        ids = []
        for _ in range(count):
            inp = HandoffInput(project="bench", assignee="alice/writer", packet=packet)
            task = await creation.handoff(store, alice, inp)
            await verbs.accept_task(store, agent("alice/writer"), task.id)
            ids.append(task.id)
        return ids
    finally:
        await store.close()


class Writer:
    """One connection moving one task: each transaction one event."""

    def __init__(self, url: str, task_id: str) -> None:
        from app.storage.store import Store

        self.store = Store(url)
        self.task_id = task_id
        self.committed = 0
        self.pid = 0

    async def open(self) -> None:
        from sqlalchemy import text

        async with self.store.read() as tx:
            self.pid = (await tx.conn.execute(text("SELECT pg_backend_pid()"))).scalar_one()

    async def move(self) -> None:
        async with self.store.write() as tx:
            task = await tx.tasks.get(self.task_id, for_update=True)
            assert task is not None
            old = task.version
            task.version += 1
            await tx.tasks.update(task, old)
            moved = replace(task.snapshot(0), kind="moved", verb="bench", actor="alice")
            await tx.events.append([moved])
        self.committed += 1

    async def run(self, until: float) -> None:
        while time.monotonic() < until:
            await self.move()


async def _round(writers: list[Writer], seconds: float) -> dict[str, float]:
    before = [w.committed for w in writers]
    db0 = sum(_cpu_seconds(w.pid) for w in writers)
    me0 = resource.getrusage(resource.RUSAGE_SELF)
    began = time.monotonic()
    await asyncio.gather(*(w.run(began + seconds) for w in writers))
    took = time.monotonic() - began
    me1 = resource.getrusage(resource.RUSAGE_SELF)
    db = sum(_cpu_seconds(w.pid) for w in writers) - db0
    events = sum(w.committed for w in writers) - sum(before)
    client = (me1.ru_utime - me0.ru_utime) + (me1.ru_stime - me0.ru_stime)
    return {
        "events_per_s": events / took,
        "db_cpu_us_per_event": db / events * 1e6,
        "db_cores": db / took,
        "client_cores": client / took,
    }


async def measure(
    seconds: float = SECONDS, runs: int = RUNS, durable: bool = True
) -> dict[str, Any]:
    """Per number of writers: medians of `runs` rounds. `durable=False` turns off
    synchronous commit for the database, so a commit does not wait for its WAL flush and
    what limits the writers is the lock and the CPU, not the disk."""
    name = f"prickle_bench_w_{uuid.uuid4().hex[:8]}"
    await _admin(f'CREATE DATABASE "{name}"')
    if not durable:
        await _admin(f'ALTER DATABASE "{name}" SET synchronous_commit = off')
    url = PG_ADMIN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+asyncpg://", 1)
    url = f"{url}/{name}"
    try:
        ids = await _tasks(url, max(WRITERS))
        writers = [Writer(url, i) for i in ids]
        for w in writers:
            await w.open()
        await _round(writers[:1], 0.5)  # warm-up
        figures: dict[str, Any] = {}
        for n in WRITERS:
            rounds = [await _round(writers[:n], seconds) for _ in range(runs)]
            rates = [r["events_per_s"] for r in rounds]
            figures[str(n)] = {
                "events_per_s": statistics.median(rates),
                "range": [min(rates), max(rates)],
                **{
                    k: statistics.median(r[k] for r in rounds)
                    for k in ("db_cpu_us_per_event", "db_cores", "client_cores")
                },
            }
            print(n, json.dumps(figures[str(n)]), file=sys.stderr, flush=True)
        for w in writers:
            await w.store.close()
        return figures
    finally:
        await _admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tests/bench/writers.py")
    parser.add_argument("--label", default="after")
    parser.add_argument("--seconds", type=float, default=SECONDS)
    parser.add_argument("--runs", type=int, default=RUNS)
    args = parser.parse_args(argv)
    import app

    print(f"{args.label}: app from {Path(app.__file__).parent}", file=sys.stderr)
    figures = {
        mode: asyncio.run(measure(args.seconds, args.runs, durable=mode == "durable"))
        for mode in ("durable", "async_commit")
    }
    print(json.dumps({args.label: figures}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
