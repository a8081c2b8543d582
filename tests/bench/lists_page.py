"""`python -m tests.bench.lists_page [--tasks 200] [--rounds 3] [--seconds 2] [--postgraphile]`

A `tasks` page that selects each task's dependencies, results, checkpoints and events, over
HTTP against a real `prickle serve` on PostgreSQL (fast paths on): compiled to one statement
(app/storage/fast/compiled.py) beside the same page executed by graphql-core over the lists
read ahead (`@include(if: true)` on `tasks` leaves it to the general execution), at first:
5, 50 and 200. The tasks: a chain, each depending on the one before, each worked on,
checkpointed and completed with a result. Both answers are checked equal first; then rounds
alternate the loads (4 requests in flight); medians. The load client is
tests/bench/rawhttp.py. With `--postgraphile`: the compiled page beside PostGraphile 4 on
the same tables and tasks (below), answers checked equal first.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import uuid
from pathlib import Path
from typing import Any

import asyncpg
import httpx

from app.service import admin
from app.storage.migrate import upgrade
from app.storage.store import Store
from tests.bench.graph import cpu_seconds
from tests.bench.rawhttp import body_of, run_load
from tests.bench.run import pg_admin
from tests.support.factory import ALICE, CODER, call, give, packet, setup
from tests.support.server import PG_ADMIN, start

PAGE = """query($first: Int!) { tasks(first: $first)%s {
  pageInfo { hasNextPage endCursor }
  edges { node {
    id state display_title
    dependencies { id state }
    results { revision status summary evidence { kind summary criteria } }
    checkpoints { id agent checkpoint { progress } }
    events { cursor kind verb to_state at }
  } } } }"""
SIZES = (5, 50, 200)
CONCURRENCY = 4


async def seed(url: str, count: int) -> str:
    """alice's token (she sees every task), after `count` tasks worked to their result."""
    store = Store(url)
    try:
        await upgrade(store.engine)
        await setup(store)
        previous: str | None = None
        for _ in range(count):
            task = await give(store, packet=packet(depends_on=[previous] if previous else []))
            for verb in ("accept_task", "start_task", "save_checkpoint", "return_result"):
                task = await call(store, verb, CODER, task.id)
            previous = task.id
        return (await admin.provision_token(store, ALICE)).token
    finally:
        await store.close()


async def measure(url: str, logs: Path, count: int, rounds: int, seconds: float) -> str:
    token = await seed(url, count)
    server = start(url, logs)
    loads = {
        f"{how}, first: {first}": body_of(
            PAGE % ("" if how == "compiled" else " @include(if: true)"), {"first": first}
        )
        for first in SIZES
        for how in ("compiled", "general")
    }
    rates: dict[str, list[float]] = {name: [] for name in loads}
    cpu: dict[str, list[float]] = {name: [] for name in loads}
    try:
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        async with httpx.AsyncClient() as http:
            for first in SIZES:
                answers = [
                    (
                        await http.post(
                            server.graphql_url,
                            content=loads[f"{how}, first: {first}"],
                            headers=headers,
                        )
                    ).json()
                    for how in ("compiled", "general")
                ]
                assert answers[0] == answers[1] and "errors" not in answers[0], first
        for _ in range(rounds):
            for name, body in loads.items():
                before = cpu_seconds(server)
                load = await run_load(
                    server.base_url, token, body, concurrency=CONCURRENCY, seconds=seconds
                )
                assert load.failed == 0, load.errors
                rates[name].append(load.rate)
                cpu[name].append((cpu_seconds(server) - before) * 1000 / max(load.done, 1))
    finally:
        server.stop()
    lines = ["| page | requests/s | server CPU ms/request |", "|---|---|---|"]
    for name in loads:
        lines.append(
            f"| {name} | {statistics.median(rates[name]):.0f} "
            f"({min(rates[name]):.0f}-{max(rates[name]):.0f}) "
            f"| {statistics.median(cpu[name]):.2f} |"
        )
    return "\n".join(lines)


# Beside PostGraphile 4 (tests/bench/postgraphile.py installs and starts it): the same
# tables, `dependencies` a computed column over packet.depends_on, the lists its relations
# by their foreign keys, in their loaders' order.

DEPENDENCIES = """CREATE FUNCTION tasks_dependencies(t tasks) RETURNS SETOF tasks AS $$
  SELECT d.* FROM jsonb_array_elements_text(CASE WHEN jsonb_typeof(t.packet -> 'depends_on')
    = 'array' THEN t.packet -> 'depends_on' ELSE '[]'::jsonb END) WITH ORDINALITY AS n(id, i)
  JOIN tasks d ON d.id = n.id ORDER BY n.i
$$ LANGUAGE sql STABLE"""
THEIRS = """query($first: Int!) { allTasks(first: $first, orderBy: ID_ASC) { edges { node {
  id state displayTitle
  dependenciesList { id state }
  resultsByTaskIdList(orderBy: REVISION_ASC) { revision status body }
  checkpointsByTaskIdList(orderBy: ID_ASC) { id agent body }
  eventsByTaskIdList(orderBy: SEQ_ASC) { seq kind verb toState at }
} } } }"""


def _brief(answer: dict[str, Any]) -> list[Any]:
    """A page from either server, as what both say of each task: ids, revisions, seqs."""
    connection = answer["data"].get("tasks") or answer["data"]["allTasks"]
    out = []
    for node in (edge["node"] for edge in connection["edges"]):
        ours = "results" in node
        results = node["results" if ours else "resultsByTaskIdList"]
        checkpoints = node["checkpoints" if ours else "checkpointsByTaskIdList"]
        events = node["events" if ours else "eventsByTaskIdList"]
        dependencies = node["dependencies" if ours else "dependenciesList"]
        out.append(
            (
                node["id"],
                [d["id"] for d in dependencies],
                [(r["revision"], r["status"].lower()) for r in results],
                [c["id"] for c in checkpoints],
                [int(e["cursor"] if ours else e["seq"]) for e in events],
            )
        )
    return out


async def beside_postgraphile(
    dsn: str, url: str, logs: Path, count: int, rounds: int, seconds: float
) -> str:
    from tests.bench import postgraphile as pgl

    cli = pgl.postgraphile_cli()
    if cli is None:
        return "PostGraphile: skipped (no node or npm)"
    token = await seed(url, count)
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(DEPENDENCIES)
    finally:
        await conn.close()
    server = start(url, logs / "ours")
    process, pgl_url = pgl.start_postgraphile(cli, dsn, logs)
    pgl.CONCURRENCY = CONCURRENCY
    try:
        ours = pgl.Target(
            "prickle",
            server.base_url,
            token,
            PAGE % "",
            server.process.pid,
            await pgl.backends_by_name(dsn, postgraphile=False),
        )
        theirs = pgl.Target(
            "postgraphile",
            pgl_url,
            None,
            THEIRS,
            process.pid,
            await pgl.backends_by_name(dsn, postgraphile=True),
        )
        async with httpx.AsyncClient() as http:
            for first in SIZES:
                answers = [
                    (
                        await http.post(
                            f"{target.url}/graphql",
                            content=target.body(str(first)),
                            headers={"Content-Type": "application/json"}
                            | ({"Authorization": f"Bearer {token}"} if target.token else {}),
                        )
                    ).json()
                    for target in (ours, theirs)
                ]
                assert _brief(answers[0]) == _brief(answers[1]), first
        for number in range(rounds):
            for first in SIZES:
                for target in (ours, theirs) if number % 2 == 0 else (theirs, ours):
                    await target.run(str(first), seconds)
        lines = [
            "| page | PostGraphile req/s | ours req/s | ratio | CPU ms/req PostGraphile:"
            " node + PG | ours: server + PG |",
            "|---|---|---|---|---|---|",
        ]
        us, them = pgl.summary(ours), pgl.summary(theirs)
        for first in SIZES:
            a, b = us[str(first)], them[str(first)]
            lines.append(
                f"| first: {first} | {pgl.rate(b)} | {pgl.rate(a)} | {a['rps'] / b['rps']:.2f}"
                f" | {b['server_ms']:.2f} + {b['database_ms']:.2f}"
                f" | {a['server_ms']:.2f} + {a['database_ms']:.2f} |"
            )
        return "\n".join(lines)
    finally:
        process.terminate()
        process.wait(10)
        server.stop()


async def main(count: int, rounds: int, seconds: float, postgraphile: bool) -> None:
    db = f"prickle_bench_{uuid.uuid4().hex[:10]}"
    await pg_admin(f'CREATE DATABASE "{db}"')
    try:
        base = PG_ADMIN.rsplit("/", 1)[0]
        url = f"{base}/{db}".replace("postgresql://", "postgresql+asyncpg://", 1)
        with tempfile.TemporaryDirectory(prefix="prickle-bench-") as tmp:
            if postgraphile:
                found = await beside_postgraphile(
                    f"{base}/{db}", url, Path(tmp), count, rounds, seconds
                )
            else:
                found = await measure(url, Path(tmp), count, rounds, seconds)
            print(found)
    finally:
        await pg_admin(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m tests.bench.lists_page")
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--postgraphile", action="store_true", help="beside PostGraphile 4")
    args = parser.parse_args()
    asyncio.run(main(args.tasks, args.rounds, args.seconds, args.postgraphile))
