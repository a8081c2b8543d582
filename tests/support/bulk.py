"""Many tasks at once: copies of one task written by a single INSERT ... SELECT through the
storage layer's own table, for a project too big to seed through the API (a test's 2,500
tasks, a benchmark's 100,000). Each copy is the template but for its id (`<prefix>` and its
number, so they sort in order), its title ("<title> <n>") and its state (cycling through
`states`, none waiting). They have no events of their own, as a task imported in bulk would
not: the reads, counts and pages see them like any other."""

from __future__ import annotations

from sqlalchemy import text

from app.storage.repositories.tasks import tasks
from app.storage.store import Store


def copies_sql(
    sqlite: bool, template: str, count: int, prefix: str, title: str, states: tuple[str, ...]
) -> str:
    width = 26 - len(prefix)
    ident = (
        f"printf('{prefix}%0{width}d', n)"
        if sqlite
        else f"'{prefix}' || lpad(n::text, {width}, '0')"
    )
    state = "CASE n % {k} {whens} END".format(
        k=len(states), whens=" ".join(f"WHEN {i} THEN '{s}'" for i, s in enumerate(states))
    )
    derived = {
        "id": ident,
        "state": state,
        "waiting_on": "NULL",
        "idempotency_key": "NULL",
        "display_title": f"'{title} ' || n",
    }
    names = [c.name for c in tasks.c]
    values = [derived.get(n, f"t.{n}") for n in names]
    source = (
        f"WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < {count})"
        if sqlite
        else f"WITH c(n) AS (SELECT generate_series(1, {count}))"
    )
    return (
        f"INSERT INTO tasks ({', '.join(names)}) {source} SELECT {', '.join(values)}"
        f" FROM c, tasks AS t WHERE t.id = '{template}'"
    )


async def copy_tasks(
    store: Store,
    template: str,
    count: int,
    prefix: str,
    title: str = "Task",
    states: tuple[str, ...] = ("routed",),
) -> list[str]:
    """Writes `count` copies of the task `template`; their ids, in order."""
    sql = copies_sql(store.sqlite, template, count, prefix, title, states)
    async with store.engine.begin() as conn:
        await conn.execute(text(sql))
        await conn.execute(text("ANALYZE"))
    width = 26 - len(prefix)
    return [f"{prefix}{n:0{width}d}" for n in range(1, count + 1)]
