"""A task's graph in one statement, whatever its size: a recursive CTE walks from the task
along visible tasks only, and the same statement returns the rows of the tasks it reached.

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
    func,
    literal,
    literal_column,
    or_,
    select,
    true,
)

from app.domain.principals import Principal
from app.domain.task import Task
from app.storage import mapping
from app.storage.repositories.tasks import tasks
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
    rows = await tx.rows(_statement(tx.sqlite, principal), params)
    return [mapping.task_from_row(r) for r in rows[:limit]], len(rows) > limit


@lru_cache(maxsize=256)
def _statement(sqlite: bool, principal: Principal) -> Select[Any]:
    """The statement for one viewer, built once (building it costs more than running it);
    the task, the depth and the limit are bound parameters."""
    seen = select(tasks.c.id, tasks.c.parent_task_id, tasks.c.packet).where(visible(principal))
    walk = _walk(sqlite, seen.cte("seen"))
    first = case((tasks.c.id == bindparam("root", type_=String), 0), else_=1)
    return (
        select(tasks)
        .where(tasks.c.id.in_(select(walk.c.id)))
        .order_by(first, tasks.c.id)
        .limit(bindparam("limit", type_=Integer))
    )


def _walk(sqlite: bool, seen: CTE) -> CTE:
    steps = _steps(sqlite, seen)
    root = bindparam("root", type_=String)
    start = (
        select(
            cast(root, String).label("id"),
            cast(literal("self"), String).label("way"),
            cast(literal(0), Integer).label("d"),
        )
        .where(select(seen.c.id).where(seen.c.id == root).exists())
        .cte("walk", recursive=True)
    )
    follows = or_(*(and_(start.c.way == w, steps.c.way.in_(n)) for w, n in NEXT.items()))
    step = (
        select(steps.c.dst, steps.c.way, start.c.d + 1)
        .select_from(start.join(steps, steps.c.src == start.c.id))
        .where(start.c.d < bindparam("depth", type_=Integer), follows)
        .where(steps.c.dst.in_(select(seen.c.id)))
    )
    return start.union(step)


def _steps(sqlite: bool, seen: CTE) -> CTE:
    """Every step the walk may take, as (src, dst, way), both ways of both kinds of edge."""
    deps = _dependencies(sqlite, seen)
    parent = cast(seen.c.parent_task_id, String)
    own = cast(seen.c.id, String)
    has_parent = seen.c.parent_task_id.is_not(None)
    return (
        select(own.label("src"), parent.label("dst"), _way("up"))
        .where(has_parent)
        .union_all(
            select(parent, own, _way("down")).where(has_parent),
            select(deps.c.task_id, deps.c.dep_id, _way("out")),
            select(deps.c.dep_id, deps.c.task_id, _way("in")),
        )
        .cte("steps")
        .prefix_with("MATERIALIZED")
    )


def _way(name: str) -> Any:
    return cast(literal(name), String).label("way")


def _dependencies(sqlite: bool, seen: CTE) -> CTE:
    """(task_id, dep_id) for each id a visible task's packet.depends_on names."""
    if sqlite:
        each = func.json_each(seen.c.packet, "$.depends_on").table_valued("value")
    else:
        named = func.jsonb_path_query_array(seen.c.packet, literal_column("'$.depends_on[*]'"))
        each = func.jsonb_array_elements_text(named).table_valued("value")
    return (
        select(cast(seen.c.id, String).label("task_id"), cast(each.c.value, String).label("dep_id"))
        .select_from(seen.join(each, true()))
        .cte("deps")
    )
