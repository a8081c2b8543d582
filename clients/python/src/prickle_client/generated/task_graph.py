from typing import Optional

from .base_model import BaseModel
from .enums import EdgeKind, TaskState, WaitingOn


class TaskGraph(BaseModel):
    task_graph: Optional["TaskGraphTaskGraph"]


class TaskGraphTaskGraph(BaseModel):
    root_id: str
    tasks: list["TaskGraphTaskGraphTasks"]
    edges: list["TaskGraphTaskGraphEdges"]
    truncated: bool


class TaskGraphTaskGraphTasks(BaseModel):
    id: str
    project: str
    state: TaskState
    waiting_on: Optional[WaitingOn]
    display_title: Optional[str]
    assignee: str
    parent_task_id: Optional[str]
    version: int


class TaskGraphTaskGraphEdges(BaseModel):
    kind: EdgeKind
    from_id: str
    to_id: str


TaskGraph.model_rebuild()
TaskGraphTaskGraph.model_rebuild()
