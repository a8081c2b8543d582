"""`python -m tests.bench.plans --database-url URL`

The hot statements' plans on a database seeded by tests/bench/scale.py: every statement the
store sends while the reads of docs/performance.md ("At scale") and a lifecycle's moves run
is caught as sent (its text and parameters) and explained with those parameters; printed,
one line a statement, with the nodes that read `tasks` and `events` and how.
tests/postgres/test_postgres_plans.py holds them to index scans on a small seed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

import asyncpg
from sqlalchemy import event, text

from app.domain.principals import agent, person
from app.domain.reads import EventFilters, Paging, TaskFilters
from app.service import graph, reads
from app.service.reads import Want
from app.storage.event_reads import event_pages
from app.storage.store import Store
from tests.bench import scale

BIG = "project000"
EVERYTHING = Want(
    parent=Want(),
    children=Want(),
    dependencies=Want(),
    lists=frozenset({"results", "checkpoints", "events"}),
)


def scans(plan: dict[str, Any]) -> list[str]:
    """The tables a plan reads sequentially."""
    found = [plan["Relation Name"]] if plan["Node Type"] == "Seq Scan" else []
    for below in plan.get("Plans", []):
        found += scans(below)
    return found


async def operations(store: Store) -> None:
    owner, asked = person("owner00"), person("owner07")
    async with store.engine.connect() as conn:

        async def one(sql: str) -> Any:
            return (await conn.execute(text(sql))).scalar_one()

        leaf = await one(
            f"SELECT id FROM tasks WHERE project = '{BIG}' AND parent_task_id IS NOT NULL"
            " ORDER BY id DESC LIMIT 1"
        )
        last = await one(
            f"SELECT id FROM tasks WHERE project = '{BIG}' ORDER BY id DESC LIMIT 1 OFFSET 50"
        )
        old = await one(
            f"SELECT seq FROM events WHERE project = '{BIG}' ORDER BY seq LIMIT 1 OFFSET 100"
        )
        head = await one("SELECT max(seq) FROM events")
    for filters, after in [
        (TaskFilters(project=BIG, state="working"), None),
        (TaskFilters(project=BIG), last),
        (TaskFilters(assignee="owner07/agent03"), None),
        (TaskFilters(requester="owner00/agent03"), None),
        (TaskFilters(state="approval"), None),
        (TaskFilters(parent_task_id=leaf), None),
    ]:
        await reads.task_graph_page(store, owner, filters, Paging(50, after), EVERYTHING)
        await reads.count_tasks(store, owner, filters, 1001)
    for who in (owner, asked, agent("owner00/agent00")):
        await reads.inbox_page(store, who, Paging(50), EVERYTHING)
        await reads.count_inbox(store, who, 1001)
    await reads.task_graph(store, owner, leaf, EVERYTHING)
    await graph.task_graph(store, owner, leaf, 4)
    for filters, cursor in [(EventFilters(task_id=leaf), None), (EventFilters(project=BIG), old)]:
        await reads.event_page(store, owner, filters, Paging(50, cursor))
        await reads.count_task_events(store, owner, filters, 1001)
    async with store.read() as tx:  # a subscription resuming, and catching up live
        await event_pages(owner, 1000)(tx, old, head)
        await event_pages(owner, 1000, project=BIG)(tx, head - 50, head)
    placed = scale.Placed(BIG, "owner00/agent00", "owner07/agent00", None, (last, leaf))
    await scale.drive(store, scale.SHAPES["completed"], placed)


async def sent_by(url: str) -> list[tuple[str, Any]]:
    """The statements (text, parameters) naming tasks or events that the operations send."""
    store = Store(url, fast=False)
    sent: list[tuple[str, Any]] = []

    def caught(conn: Any, cursor: Any, statement: str, parameters: Any, *rest: Any) -> None:
        words = ("SELECT", "WITH", "UPDATE", "INSERT", "DELETE")
        if (
            "tasks" in statement or "events" in statement
        ) and statement.lstrip().upper().startswith(words):
            sent.append((statement, parameters))

    event.listen(store.engine.sync_engine, "before_cursor_execute", caught)
    try:
        await operations(store)
    finally:
        await store.close()
    return sent


def reading(plan: dict[str, Any]) -> list[str]:
    """How a plan reads tasks and events: 'Index Scan ix_… on tasks', 'Seq Scan on events'."""
    found = []
    if plan.get("Relation Name") in ("tasks", "events"):
        index = f" {plan['Index Name']}" if "Index Name" in plan else ""
        found.append(f"{plan['Node Type']}{index} on {plan['Relation Name']}")
    for below in plan.get("Plans", []):
        found += reading(below)
    return found


async def explain(conn: asyncpg.Connection, statement: str, parameters: Any) -> dict[str, Any]:
    rows = await conn.fetch(f"EXPLAIN (FORMAT JSON) {statement}", *(parameters or ()))
    plan: dict[str, Any] = json.loads(rows[0][0])[0]["Plan"]
    return plan


async def _main(url: str) -> None:
    sent = await sent_by(url)
    conn = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://", 1))
    try:
        await conn.execute("SET jit = off")
        seen = set()
        for statement, parameters in sent:
            head = " ".join(statement.split())[:90]
            plan = await explain(conn, statement, parameters)
            line = f"{head} … -> {'; '.join(reading(plan))}"
            if line not in seen:
                seen.add(line)
                print(line)
    finally:
        await conn.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m tests.bench.plans")
    parser.add_argument("--database-url", required=True)
    asyncio.run(_main(parser.parse_args().database_url))
