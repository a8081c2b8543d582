from typing import Optional

from .base_model import BaseModel
from .enums import TaskState
from .fragments import EventFields


class TaskEvents(BaseModel):
    task_events: "TaskEventsTaskEvents"


class TaskEventsTaskEvents(BaseModel):
    total_count: int
    page_info: "TaskEventsTaskEventsPageInfo"
    edges: list["TaskEventsTaskEventsEdges"]


class TaskEventsTaskEventsPageInfo(BaseModel):
    has_next_page: bool
    end_cursor: Optional[str]


class TaskEventsTaskEventsEdges(BaseModel):
    cursor: str
    node: "TaskEventsTaskEventsEdgesNode"


class TaskEventsTaskEventsEdgesNode(EventFields):
    task: "TaskEventsTaskEventsEdgesNodeTask"


class TaskEventsTaskEventsEdgesNodeTask(BaseModel):
    id: str
    state: TaskState
    version: int


TaskEvents.model_rebuild()
TaskEventsTaskEvents.model_rebuild()
TaskEventsTaskEventsEdges.model_rebuild()
TaskEventsTaskEventsEdgesNode.model_rebuild()
