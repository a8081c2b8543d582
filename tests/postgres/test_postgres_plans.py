"""The hot statements read `tasks` and `events` through indexes: no sequential scan of either
in any statement the reads and a lifecycle's moves make, as PostgreSQL plans them on a
seeded database (tests/bench/scale.py: a year of work in small, analyzed).

Every statement the store sends while the operations run is caught as sent (its text and
parameters) and explained with those parameters (tests/bench/plans.py, which prints the same
plans at any size). A statement whose filter no index serves plans a sequential scan even
here, so an index dropped or a filter rewritten past its index fails this test, not a year
into production.
"""

from __future__ import annotations

from server import connect, postgres_only

from tests.bench import plans, scale

pytestmark = postgres_only

TASKS = 4000


async def test_the_hot_statements_read_tasks_and_events_through_indexes(
    pg_database_url: str,
) -> None:
    await scale.seed(pg_database_url, TASKS, log=lambda _: None)
    sent = await plans.sent_by(pg_database_url)
    scanning = []
    conn = await connect(pg_database_url)
    try:
        # A small seed would rather hash or merge a join over all of a small table; a year's
        # tables join a page's rows through an index. Without those two joins, a sequential
        # scan left in a plan is one that no index could serve.
        await conn.execute("SET enable_hashjoin = off; SET enable_mergejoin = off")
        for statement, parameters in sent:
            plan = await plans.explain(conn, statement, parameters)
            tables = {t for t in plans.scans(plan) if t in ("tasks", "events")}
            if tables:
                scanning.append((sorted(tables), statement))
    finally:
        await conn.close()
    assert len(sent) > 30
    assert scanning == []
