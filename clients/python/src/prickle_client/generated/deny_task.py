from .base_model import BaseModel
from .fragments import TaskDetail


class DenyTask(BaseModel):
    deny_task: "DenyTaskDenyTask"


DenyTaskDenyTask = TaskDetail
DenyTask.model_rebuild()
