"""What the foreign keys cost a write: moves/s and CPU per move, with and without them.

`python -m tests.bench --foreign-keys [--rounds 5] [--seconds 2]` (or
`python -m tests.bench.foreign_keys`). Run by hand, not by pytest.

Per backend, two fresh databases and a `prickle serve` on each, the same code: one at head,
the other migrated to head, taken back below the foreign keys and stamped at head again (so
it runs without them). 16 loops, each with its own keep-alive connections
(tests/bench/rawhttp.py), drive tasks through handoff (half of them subtasks of one task),
accept_task, start_task and return_result: the writes of tasks, events, results and a
parent's row the constraints check. Rounds alternate which server goes first; medians and
ranges of moves/s, server CPU per move and, on PostgreSQL, its backends' CPU per move.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.bench.bench_server import cpu_seconds
from tests.bench.rawhttp import RawConnection, body_of
from tests.support.server import PG_ADMIN, Server, start

BELOW = "0006"  # the revision before the foreign keys
CONCURRENCY = 16

HANDOFF = "mutation($input: HandoffInput!) { handoff(input: $input) { id } }"
ACCEPT = "mutation($id: ID!) { accept_task(task_id: $id) { id } }"
START = "mutation($id: ID!) { start_task(task_id: $id) { id } }"
RETURN = """mutation($id: ID!, $r: ResultInput!) { return_result(task_id: $id, result: $r) {
  state } }"""
RESULT = {
    "summary": "done",
    "provenance": "agent_generated",
    "evidence": [{"kind": "test_output", "summary": "the tests pass", "criteria": [0]}],
}
PACKET = {"task": "bench", "deliverable_type": "code", "acceptance_criteria": ["it runs"]}


async def without_foreign_keys(url: str) -> None:
    """Migrate to head, go back below the foreign keys, stamp head: a server then finds
    nothing to do and runs on tables without them."""
    from alembic import command
    from sqlalchemy import Connection

    from app.storage.migrate import alembic_config, downgrade, upgrade
    from app.storage.store import Store

    store = Store(url)
    try:
        await upgrade(store.engine)
        await downgrade(store.engine, BELOW)

        def stamp(sync_connection: Connection) -> None:
            config = alembic_config()
            config.attributes["connection"] = sync_connection
            command.stamp(config, "head")

        async with store.engine.begin() as conn:
            await conn.run_sync(stamp)
    finally:
        await store.close()


async def foreign_key_count(server: Server) -> int:
    from sqlalchemy import inspect

    from app.storage.store import Store

    store = Store(server.database_url)
    try:
        async with store.engine.connect() as conn:
            return await conn.run_sync(
                lambda c: sum(
                    len(inspect(c).get_foreign_keys(t))
                    for t in (
                        "tasks",
                        "events",
                        "checkpoints",
                        "results",
                        "approvals",
                        "schedule_runs",
                    )
                )
            )
    finally:
        await store.close()


@dataclass
class Side:
    name: str
    server: Server
    agent: str
    root: str
    backends: Callable[[], Awaitable[dict[int, float]]]
    runs: list[dict[str, float]] = field(default_factory=list)

    async def run(self, seconds: float) -> dict[str, float]:
        url, owner = self.server.base_url, self.server.owner_token
        pairs = [
            (await RawConnection(url, owner).open(), await RawConnection(url, self.agent).open())
            for _ in range(CONCURRENCY)
        ]
        moves = 0
        number = 0

        async def ask(conn: RawConnection, query: str, variables: dict[str, Any]) -> Any:
            status, raw = await conn.post(body_of(query, variables))
            answer = json.loads(raw)
            if status != 200 or answer.get("errors"):
                raise RuntimeError(f"{status}: {raw[:300]!r}")
            return answer["data"]

        async def loop(owner_conn: RawConnection, agent_conn: RawConnection, until: float) -> None:
            nonlocal moves, number
            while time.monotonic() < until:
                number += 1
                task: dict[str, Any] = {"project": "fk", "assignee": "admin/coder"}
                task["packet"] = PACKET
                if number % 2:
                    task["parent_task_id"] = self.root
                made = (await ask(owner_conn, HANDOFF, {"input": task}))["handoff"]["id"]
                await ask(agent_conn, ACCEPT, {"id": made})
                await ask(agent_conn, START, {"id": made})
                await ask(agent_conn, RETURN, {"id": made, "r": RESULT})
                moves += 4

        seen = await self.backends()
        before_db = dict(seen)
        before_server = cpu_seconds(self.server.process.pid)
        started = time.monotonic()
        await asyncio.gather(*(loop(o, a, started + seconds) for o, a in pairs))
        took = time.monotonic() - started
        server = cpu_seconds(self.server.process.pid) - before_server
        seen.update(await self.backends())
        database = sum(cpu - before_db.get(pid, 0.0) for pid, cpu in seen.items())
        for o, a in pairs:
            await o.close()
            await a.close()
        figures = {
            "moves_per_s": moves / took,
            "server_ms": server * 1000 / moves,
            "database_ms": database * 1000 / moves,
        }
        self.runs.append(figures)
        return figures


async def side(name: str, server: Server) -> Side:
    owner = await RawConnection(server.base_url, server.owner_token).open()
    try:
        agent = (await owner.graphql('mutation { register_agent(name: "coder") { token } }'))[
            "register_agent"
        ]["token"]
        root = (
            await owner.graphql(
                HANDOFF, {"input": {"project": "fk", "assignee": "admin/coder", "packet": PACKET}}
            )
        )["handoff"]["id"]
    finally:
        await owner.close()
    return Side(name, server, agent, root, await backends_of(server.database_url))


async def backends_of(url: str) -> Callable[[], Awaitable[dict[int, float]]]:
    if url.startswith("sqlite"):

        async def none() -> dict[int, float]:
            return {}

        return none
    import asyncpg

    conn = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://", 1))
    sql = (
        "SELECT pid FROM pg_stat_activity"
        " WHERE datname = current_database() AND pid <> pg_backend_pid()"
    )

    async def listed() -> dict[int, float]:
        return {row[0]: cpu_seconds(row[0]) for row in await conn.fetch(sql)}

    return listed


async def pg_admin(statement: str) -> None:
    import asyncpg

    admin = await asyncpg.connect(PG_ADMIN, timeout=5)
    try:
        await admin.execute(statement)
    finally:
        await admin.close()


async def measure(backend: str, tmp: Path, rounds: int, seconds: float) -> dict[str, Any]:
    urls: dict[str, str] = {}
    made: list[str] = []
    servers: list[Server] = []
    try:
        for name in ("with", "without"):
            if backend == "sqlite":
                urls[name] = f"sqlite+aiosqlite:///{tmp}/{name}.db"
            else:
                database = f"prickle_fk_{uuid.uuid4().hex[:10]}"
                await pg_admin(f'CREATE DATABASE "{database}"')
                made.append(database)
                base = PG_ADMIN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+asyncpg://")
                urls[name] = f"{base}/{database}"
        await without_foreign_keys(urls["without"])
        sides = []
        for name in ("with", "without"):
            server = start(urls[name], tmp / f"{backend}-{name}", "--rate-limit", "1000000")
            servers.append(server)
            sides.append(await side(name, server))
            print(f"{backend} {name}: {await foreign_key_count(server)} foreign keys", flush=True)
        for one in sides:  # warm up
            await one.run(0.5)
            one.runs.clear()
        for number in range(rounds):
            for one in sides if number % 2 == 0 else sides[::-1]:
                got = await one.run(seconds)
                print(
                    f"{backend} round {number + 1} {one.name:>7}:"
                    f" {got['moves_per_s']:6.0f} moves/s,"
                    f" server {got['server_ms']:.2f} ms, database {got['database_ms']:.2f} ms",
                    flush=True,
                )
        return {one.name: summary(one.runs) for one in sides}
    finally:
        for server in servers:
            server.stop()
        for database in made:
            await pg_admin(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')


def summary(runs: list[dict[str, float]]) -> dict[str, Any]:
    rates = [run["moves_per_s"] for run in runs]
    return {
        "moves_per_s": statistics.median(rates),
        "range": [min(rates), max(rates)],
        "server_ms": statistics.median(run["server_ms"] for run in runs),
        "database_ms": statistics.median(run["database_ms"] for run in runs),
    }


def table(results: dict[str, dict[str, Any]]) -> str:
    lines = [
        "| backend | moves/s with / without (ranges) | ratio | server CPU ms/move with / without"
        " | PostgreSQL CPU ms/move with / without |",
        "|---|---|---|---|---|",
    ]
    for backend, got in results.items():
        w, wo = got["with"], got["without"]
        lines.append(
            f"| {backend} | {w['moves_per_s']:.0f} ({w['range'][0]:.0f}-{w['range'][1]:.0f}) / "
            f"{wo['moves_per_s']:.0f} ({wo['range'][0]:.0f}-{wo['range'][1]:.0f}) | "
            f"{w['moves_per_s'] / wo['moves_per_s']:.3f} | "
            f"{w['server_ms']:.2f} / {wo['server_ms']:.2f} | "
            + (
                f"{w['database_ms']:.2f} / {wo['database_ms']:.2f} |"
                if backend == "postgres"
                else "- |"
            )
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.foreign_keys")
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.0, help="per timed run")
    args = parser.parse_args(argv)
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    results = {}
    with tempfile.TemporaryDirectory(prefix="prickle-fk-") as name:
        for backend in backends:
            results[backend] = asyncio.run(measure(backend, Path(name), args.rounds, args.seconds))
    print(f"\n{args.rounds} rounds of {args.seconds} s, {CONCURRENCY} loops; medians\n")
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
