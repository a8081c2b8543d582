"""A task's graph as the viewer may see it, read in one transaction and one statement."""

from __future__ import annotations

from app.domain.graph import MAX_TASKS, TaskGraph, edges_among
from app.domain.principals import Principal
from app.storage import graph as sql
from app.storage.store import Store


async def task_graph(store: Store, viewer: Principal, task_id: str, depth: int) -> TaskGraph | None:
    """The task, its ancestors and descendants, the tasks they depend on and those depending on
    them, up to `depth` steps away; None when the task does not exist or is not visible."""
    async with store.read() as tx:
        found, truncated = await sql.graph_tasks(tx, viewer, task_id, depth, MAX_TASKS)
    if not found:
        return None
    return TaskGraph(task_id, found, edges_among(found), truncated)
