from .base_model import BaseModel
from .fragments import TaskDetail


class WaitOn(BaseModel):
    wait_on: "WaitOnWaitOn"


WaitOnWaitOn = TaskDetail
WaitOn.model_rebuild()
