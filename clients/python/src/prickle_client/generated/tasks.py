from typing import Optional

from .base_model import BaseModel
from .fragments import TaskDetail


class Tasks(BaseModel):
    tasks: "TasksTasks"


class TasksTasks(BaseModel):
    total_count: int
    page_info: "TasksTasksPageInfo"
    edges: list["TasksTasksEdges"]


class TasksTasksPageInfo(BaseModel):
    has_next_page: bool
    end_cursor: Optional[str]


class TasksTasksEdges(BaseModel):
    cursor: str
    node: "TasksTasksEdgesNode"


TasksTasksEdgesNode = TaskDetail
Tasks.model_rebuild()
TasksTasks.model_rebuild()
TasksTasksEdges.model_rebuild()
