from .base_model import BaseModel
from .fragments import TaskDetail


class AcceptTask(BaseModel):
    accept_task: "AcceptTaskAcceptTask"


AcceptTaskAcceptTask = TaskDetail
AcceptTask.model_rebuild()
