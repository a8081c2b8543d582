"""A task's graph: the task, its ancestors and descendants, and the tasks they depend on or
that depend on them, with the edges among them.

Which tasks belong is decided in SQL (storage's recursive walk); the edges follow from the tasks
themselves, each task naming its parent (`parent_task_id`) and what it waits for
(`packet.depends_on`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.domain.task import Task

DEFAULT_DEPTH = 4
MAX_DEPTH = 10
MAX_TASKS = 500


@dataclass(frozen=True)
class Edge:
    """`parent`: from a task to its subtask. `depends_on`: from a task to one it depends on."""

    kind: str
    from_id: str
    to_id: str


@dataclass(frozen=True)
class TaskGraph:
    root: str
    tasks: list[Task]
    edges: list[Edge]
    truncated: bool  # more tasks belonged than MAX_TASKS


def edges_among(tasks: Sequence[Task]) -> list[Edge]:
    """Every parent and depends_on edge whose both ends are among `tasks`."""
    ids = {t.id for t in tasks}
    edges = [Edge("parent", t.parent_task_id, t.id) for t in tasks if t.parent_task_id in ids]
    for task in tasks:
        named = task.packet.get("depends_on") or []
        edges += [Edge("depends_on", task.id, d) for d in dict.fromkeys(named) if d in ids]
    return edges
