"""`python -m tests.bench.inbox [--tasks 1000000] [--backend sqlite|postgres]`

The inbox's page and count (app/storage/repositories/inbox.py) in a database of `--tasks`
tasks, written straight into the table (copies of one real task, spread over 997
requester owners and 499 assignee owners, a tenth of them in `approval`, a tenth `waiting`
on `human`, `owner_approval` or `stopped`, the rest elsewhere). For a person with many
tasks (`p7`: about 1,000 as requester's owner and 2,000 as assignee's owner) and one with
none, the milliseconds of `inbox(first: 50)` and of its count: medians of 30, each in a
read transaction of its own. (tests/storage/test_store_inbox.py checks the plans.)
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.dialects import postgresql, sqlite

from app.domain.principals import person
from app.storage.migrate import upgrade
from app.storage.repositories.inbox import Shape, page_statement
from app.storage.repositories.tasks import tasks
from app.storage.store import Store
from tests.bench.run import pg_admin
from tests.support.factory import give, setup
from tests.support.server import PG_ADMIN

RUNS = 30
STATE = (
    "CASE n % 10 WHEN 0 THEN 'approval' WHEN 1 THEN 'waiting' WHEN 2 THEN 'working'"
    " WHEN 3 THEN 'accepted' WHEN 4 THEN 'routed' WHEN 5 THEN 'returned'"
    " WHEN 6 THEN 'rejected' WHEN 7 THEN 'cancelled' ELSE 'completed' END"
)
WAITING_ON = (
    "CASE WHEN n % 10 = 1 THEN (CASE n % 3 WHEN 0 THEN 'human' WHEN 1 THEN 'owner_approval'"
    " ELSE 'stopped' END) END"
)
DERIVED = {
    "id": "{id}",
    "state": STATE,
    "waiting_on": WAITING_ON,
    "requester_owner": "'p' || (n % 997)",
    "assignee_owner": "'p' || (n % 499)",
    "idempotency_key": "NULL",
}


def _fill(sqlite: bool, count: int, template: str) -> str:
    ident = "printf('B%025d', n)" if sqlite else "'B' || lpad(n::text, 25, '0')"
    names = [c.name for c in tasks.c]
    values = [DERIVED.get(n, f"t.{n}").format(id=ident) for n in names]
    source = (
        f"WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < {count})"
        if sqlite
        else f"WITH c(n) AS (SELECT generate_series(1, {count}))"
    )
    return (
        f"INSERT INTO tasks ({', '.join(names)}) {source} SELECT {', '.join(values)}"
        f" FROM c, tasks AS t WHERE t.id = '{template}'"
    )


async def _median_ms(store: Store, who: str, count: bool) -> float:
    principal = person(who)
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        async with store.read() as tx:
            if count:
                await tx.inbox.count(principal)
            else:
                await tx.inbox.page(principal, 50, None)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


async def _plan(store: Store, who: str) -> None:
    stmt = page_statement(Shape(True), None).params(who=who, limit=51)
    async with store.read() as tx:
        dialect = (sqlite if tx.sqlite else postgresql).dialect()
        sql = stmt.compile(dialect=dialect, compile_kwargs={"literal_binds": True})
        explain = "EXPLAIN QUERY PLAN" if tx.sqlite else "EXPLAIN (ANALYZE, BUFFERS)"
        for row in await tx.rows(text(f"{explain} {sql}")):
            print(row[-1])


async def bench(url: str, count: int) -> None:
    store = Store(url)
    try:
        await upgrade(store.engine)
        await setup(store)
        template = (await give(store)).id
        started = time.perf_counter()
        async with store.engine.begin() as conn:
            await conn.execute(text(_fill(url.startswith("sqlite"), count, template)))
            await conn.execute(text("ANALYZE"))
        print(f"{count} tasks written in {time.perf_counter() - started:.1f} s")
        for who in ("p7", "nobody"):
            async with store.read() as tx:
                total = await tx.inbox.count(person(who))
            page = await _median_ms(store, who, count=False)
            counted = await _median_ms(store, who, count=True)
            print(f"{who}: {total} waiting; page of 50 {page:.2f} ms, count {counted:.2f} ms")
        if "--plan" in sys.argv:
            await _plan(store, "p7")
    finally:
        await store.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=1_000_000)
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--plan", action="store_true", help="print p7's page plan")
    args = parser.parse_args()
    if args.backend == "sqlite":
        with tempfile.TemporaryDirectory() as directory:
            asyncio.run(bench(f"sqlite+aiosqlite:///{Path(directory) / 'inbox.db'}", args.tasks))
        return
    asyncio.run(_on_postgres(args.tasks))


async def _on_postgres(count: int) -> None:
    name = f"bench_inbox_{uuid.uuid4().hex[:8]}"
    await pg_admin(f'CREATE DATABASE "{name}"')
    try:
        base = PG_ADMIN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+asyncpg://", 1)
        await bench(f"{base}/{name}", count)
    finally:
        await pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


if __name__ == "__main__":
    main()
