"""A task's graph in one statement, whatever its size: a recursive CTE walks from the task
along visible tasks only, and the same statement returns the rows of the tasks it reached.

The walk reads the steps of the tasks it has reached from `task_links` (by its primary key:
a step's start), and each task a step reaches by its own primary key, visibility checked on
it there: its cost follows the graph, not the number of tasks in the database.

The walk keeps a direction, so that it answers "ancestors, descendants, and dependencies
both ways" and not the whole connected component:

- from the task itself, every step: `up` (to the parent), `down` (to a subtask), `out` (to a
  task it depends on), `in` (to a task that depends on it);
- from an ancestor, `up`, `out` or `in`; from a descendant, `down`, `out` or `in`;
- from a dependency, `out` again; from a dependent, `in` again.

Visibility is `app.storage.visibility.visible`, as in every other read: an invisible task is
neither returned nor walked through, so nothing about it (not even that it links two visible
tasks) shows. `depth` bounds the steps from the task.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from sqlalchemy import (
    CTE,
    Integer,
    Select,
    String,
    and_,
    bindparam,
    case,
    cast,
    literal,
    or_,
    select,
)

from app.domain.principals import Principal
from app.domain.task import Task
from app.storage import mapping
from app.storage.repositories.tasks import task_links, tasks
from app.storage.tx import Tx
from app.storage.visibility import visible

NEXT = {
    "self": ("up", "down", "out", "in"),
    "up": ("up", "out", "in"),
    "down": ("down", "out", "in"),
    "out": ("out",),
    "in": ("in",),
}


async def graph_tasks(
    tx: Tx, principal: Principal, root: str, depth: int, limit: int
) -> tuple[list[Task], bool]:
    """The visible tasks of `root`'s graph (root first), at most `limit`; and whether there
    were more. Empty when `root` does not exist or is not visible."""
    params = {"root": root, "depth": depth, "limit": limit + 1}
    rows = await tx.rows(_statement(principal), params)
    return [mapping.task_from_row(r) for r in rows[:limit]], len(rows) > limit


@lru_cache(maxsize=256)
def _statement(principal: Principal) -> Select[Any]:
    """The statement for one viewer, built once (building it costs more than running it);
    the task, the depth and the limit are bound parameters."""
    walk = _walk(principal)
    first = case((tasks.c.id == bindparam("root", type_=String), 0), else_=1)
    return (
        select(tasks)
        .where(tasks.c.id.in_(select(walk.c.id)))
        .order_by(first, tasks.c.id)
        .limit(bindparam("limit", type_=Integer))
    )


def _walk(principal: Principal) -> CTE:
    root = bindparam("root", type_=String)
    seen = visible(principal)
    start = (
        select(
            cast(root, String).label("id"),
            cast(literal("self"), String).label("way"),
            cast(literal(0), Integer).label("d"),
        )
        .where(select(tasks.c.id).where(tasks.c.id == root, seen).exists())
        .cte("walk", recursive=True)
    )
    follows = or_(*(and_(start.c.way == w, task_links.c.way.in_(n)) for w, n in NEXT.items()))
    # Each step by its key, then the task it reaches by its own. Not as inner joins: for
    # those SQLite may first build a Bloom filter over the whole of `tasks` or `task_links`,
    # at a cost of the table's size each call (10 ms at 100,000 tasks for a 45-task graph).
    # The task reached is an EXISTS, and the outer join keeps no row without a step (the WHERE
    # needs one): the same rows, and PostgreSQL plans it as the inner join.
    reached = select(tasks.c.id).where(tasks.c.id == task_links.c.dst, seen).exists()
    step = (
        select(task_links.c.dst, task_links.c.way, start.c.d + 1)
        .select_from(start.outerjoin(task_links, task_links.c.src == start.c.id))
        .where(start.c.d < bindparam("depth", type_=Integer), follows, reached)
    )
    return start.union(step)
