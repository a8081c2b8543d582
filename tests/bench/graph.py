"""`python -m tests.bench.graph [--backend sqlite|postgres|both] [--others 2000]`

`task_graph` over HTTP against a real `prickle serve`: requests/s and server CPU per request
for a graph of 3 tasks and one of 57 (a 3-level tree, 7 wide, with dependencies between
siblings), beside `task(id)` on the same task as the floor, in a database holding `--others`
more visible tasks. Rounds alternate the three loads (16 requests in flight, 2 s each);
medians of 5 rounds. The load client is tests/bench/rawhttp.py.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import uuid
from pathlib import Path
from typing import Any

from app.domain.task import Task
from app.service import admin
from app.storage.migrate import upgrade
from app.storage.store import Store
from tests.bench.rawhttp import body_of, run_load
from tests.bench.run import pg_admin
from tests.support.factory import BOB, CODER, HELPER, call, give, packet, setup
from tests.support.server import PG_ADMIN, Server, start

GRAPH = """query($id: ID!) {
  task_graph(task_id: $id) { tasks { id state } edges { kind from_id to_id } } }"""
TASK = "query($id: ID!) { task(id: $id) { id state } }"
ROUNDS = 5


async def _working(store: Store, who: Any, task: Task) -> Task:
    for verb in ("accept_task", "start_task"):
        task = await call(store, verb, who, task.id)
    return task


async def _tree(store: Store, levels: int, fan: int) -> str:
    root = await _working(store, CODER, await give(store))
    level, agents = [root], [(CODER, "bob/helper", HELPER), (HELPER, "bob/coder", CODER)]
    for depth in range(levels - 1):
        by, assignee, worker = agents[depth % 2]
        below = []
        for parent in level:
            previous: Task | None = None
            for _ in range(fan):
                deps = [previous.id] if previous else []
                child = await give(
                    store,
                    by=by,
                    assignee=assignee,
                    parent_task_id=parent.id,
                    packet=packet(depends_on=deps),
                )
                previous = await _working(store, worker, child)
                below.append(previous)
        level = below
    return root.id


async def seed(url: str, others: int) -> tuple[str, str, str]:
    """bob's token, the 3-task graph's root, the 57-task graph's root."""
    store = Store(url)
    try:
        await upgrade(store.engine)
        await setup(store)
        small = await _tree(store, 2, 2)
        large = await _tree(store, 3, 7)
        previous: str | None = None
        for i in range(others):  # in pairs, the second depending on the first
            deps = [previous] if previous and i % 2 else []
            previous = (await give(store, packet=packet(depends_on=deps))).id
        return (await admin.provision_token(store, BOB)).token, small, large
    finally:
        await store.close()


def cpu_seconds(server: Server) -> float:
    fields = Path(f"/proc/{server.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def measure(url: str, logs: Path, others: int) -> dict[str, dict[str, float]]:
    token, small, large = await seed(url, others)
    server = start(url, logs)
    loads = {
        "task(id) floor": body_of(TASK, {"id": large}),
        "task_graph, 3 tasks": body_of(GRAPH, {"id": small}),
        "task_graph, 57 tasks": body_of(GRAPH, {"id": large}),
    }
    rates: dict[str, list[float]] = {name: [] for name in loads}
    cpu: dict[str, list[float]] = {name: [] for name in loads}
    try:
        for _ in range(ROUNDS):
            for name, body in loads.items():
                before = cpu_seconds(server)
                load = await run_load(server.base_url, token, body, concurrency=16, seconds=2)
                assert load.failed == 0, load.errors
                rates[name].append(load.rate)
                cpu[name].append((cpu_seconds(server) - before) * 1000 / max(load.done, 1))
    finally:
        server.stop()
    return {
        n: {"rate": statistics.median(rates[n]), "cpu_ms": statistics.median(cpu[n])} for n in loads
    }


async def main(backend: str, others: int) -> None:
    for name in ("sqlite", "postgres") if backend == "both" else (backend,):
        with tempfile.TemporaryDirectory(prefix="prickle-bench-") as tmp:
            if name == "sqlite":
                found = await measure(f"sqlite+aiosqlite:///{tmp}/bench.db", Path(tmp), others)
            else:
                db = f"prickle_bench_{uuid.uuid4().hex[:10]}"
                await pg_admin(f'CREATE DATABASE "{db}"')
                try:
                    base = PG_ADMIN.rsplit("/", 1)[0].replace(
                        "postgresql://", "postgresql+asyncpg://", 1
                    )
                    found = await measure(f"{base}/{db}", Path(tmp), others)
                finally:
                    await pg_admin(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
        floor = found["task(id) floor"]["rate"]
        print(f"== {name}, {others} other visible tasks (medians of {ROUNDS})")
        for load, figures in found.items():
            print(
                f"{load}: {figures['rate']:.0f} requests/s ({figures['rate'] / floor:.2f} of the "
                f"floor), server CPU {figures['cpu_ms']:.2f} ms per request"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m tests.bench.graph")
    parser.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument("--others", type=int, default=2000)
    args = parser.parse_args()
    asyncio.run(main(args.backend, args.others))
