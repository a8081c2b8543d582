from typing import Optional

from .base_model import BaseModel
from .enums import TaskState
from .fragments import (  # noqa: F401
    EventFields,
    ResultFields,
    TaskDetail,
    TaskDetailQuestion,
    TaskFieldsLatestCheckpoint,
    TaskFieldsLatestCheckpointBy,
    TaskFieldsPacket,
    TaskFieldsRequestedByAgentRef,
    TaskFieldsRequestedByPersonRef,
    TaskFieldsRequestedBySystemRef,
    TaskFieldsResult,
    TaskFieldsRoute,
)


class Task(BaseModel):
    task: Optional["TaskTask"]


class TaskTask(TaskDetail):
    parent: Optional["TaskTaskParent"]
    children: list["TaskTaskChildren"]
    dependencies: list["TaskTaskDependencies"]
    checkpoints: list["TaskTaskCheckpoints"]
    results: list["TaskTaskResults"]
    events: list["TaskTaskEvents"]


class TaskTaskParent(BaseModel):
    id: str
    state: TaskState


class TaskTaskChildren(BaseModel):
    id: str
    state: TaskState


class TaskTaskDependencies(BaseModel):
    id: str
    state: TaskState


class TaskTaskCheckpoints(BaseModel):
    id: str
    task_id: str
    checkpoint: "TaskTaskCheckpointsCheckpoint"
    sha256: str
    agent: str
    handed_back: bool
    created_at: str


class TaskTaskCheckpointsCheckpoint(BaseModel):
    progress: str
    decisions: list[str]
    files_touched: list[str]
    next_steps: list[str]
    open_questions: list[str]
    needs_answer: Optional[bool]


TaskTaskResults = ResultFields
TaskTaskEvents = EventFields
Task.model_rebuild()
TaskTask.model_rebuild()
TaskTaskCheckpoints.model_rebuild()
