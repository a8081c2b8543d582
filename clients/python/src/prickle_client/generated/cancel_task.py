from .base_model import BaseModel
from .fragments import TaskDetail


class CancelTask(BaseModel):
    cancel_task: "CancelTaskCancelTask"


CancelTaskCancelTask = TaskDetail
CancelTask.model_rebuild()
