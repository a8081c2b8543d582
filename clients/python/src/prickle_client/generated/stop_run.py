from .base_model import BaseModel
from .fragments import TaskDetail


class StopRun(BaseModel):
    stop_run: "StopRunStopRun"


StopRunStopRun = TaskDetail
StopRun.model_rebuild()
