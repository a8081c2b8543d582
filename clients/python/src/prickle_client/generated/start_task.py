from .base_model import BaseModel
from .fragments import TaskDetail


class StartTask(BaseModel):
    start_task: "StartTaskStartTask"


StartTaskStartTask = TaskDetail
StartTask.model_rebuild()
