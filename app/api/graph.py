"""`task_graph`: a task's ancestors, descendants and dependencies both ways, with their edges,
read in one SQL statement however large the graph (the store's recursive walk)."""

from __future__ import annotations

from enum import StrEnum

import strawberry

from app.api.task_types import Task
from app.domain import graph as domain
from app.domain import shapes
from app.domain.errors import InvalidInput
from app.service import graph as service


@strawberry.enum(
    description="parent: from a task to its subtask; depends_on: from a task to one named in "
    "its packet.depends_on."
)
class EdgeKind(StrEnum):
    parent = "parent"
    depends_on = "depends_on"


@strawberry.type(description="An edge of a task graph; both ends are among its tasks.")
class TaskGraphEdge:
    kind: EdgeKind
    from_id: strawberry.ID
    to_id: strawberry.ID


@strawberry.type(description="A task's graph as the caller may see it.")
class TaskGraph:
    root_id: strawberry.ID
    tasks: list[Task] = strawberry.field(description="The task first, then the rest by id.")
    edges: list[TaskGraphEdge]
    truncated: bool = strawberry.field(
        description=f"More tasks belonged to the graph than the {domain.MAX_TASKS} returned."
    )

    @classmethod
    def from_domain(cls, found: domain.TaskGraph) -> TaskGraph:
        return cls(
            root_id=strawberry.ID(found.root),
            tasks=[Task.from_domain(t) for t in found.tasks],
            edges=[
                TaskGraphEdge(
                    kind=EdgeKind(e.kind),
                    from_id=strawberry.ID(e.from_id),
                    to_id=strawberry.ID(e.to_id),
                )
                for e in found.edges
            ],
            truncated=found.truncated,
        )


async def task_graph(
    info: strawberry.Info, task_id: strawberry.ID, depth: int = domain.DEFAULT_DEPTH
) -> TaskGraph | None:
    """The task, its ancestors and descendants, the tasks they depend on and those that depend
    on them, up to `depth` steps away; null when the task does not exist or is not visible."""
    viewer = await info.context.viewer()
    if not 1 <= depth <= domain.MAX_DEPTH:
        raise InvalidInput(f"depth: must be between 1 and {domain.MAX_DEPTH}, not {depth}")
    root = shapes.check("task_id", task_id, "task_id")
    found = await service.task_graph(info.context.store, viewer, root, depth)
    return TaskGraph.from_domain(found) if found else None


field = strawberry.field(
    resolver=task_graph,
    description="A task's graph: the task, its ancestors and descendants, and the tasks they "
    "depend on or that depend on them, up to `depth` steps; null when the task is not visible.",
)
