from .base_model import BaseModel
from .enums import TaskState


class TaskStates(BaseModel):
    task_states: list["TaskStatesTaskStates"]


class TaskStatesTaskStates(BaseModel):
    name: TaskState
    description: str
    terminal: bool
    moves_to: list[TaskState]
    reached_from: list[TaskState]


TaskStates.model_rebuild()
