from .base_model import BaseModel
from .fragments import TaskDetail


class RunScheduleNow(BaseModel):
    run_schedule_now: "RunScheduleNowRunScheduleNow"


RunScheduleNowRunScheduleNow = TaskDetail
RunScheduleNow.model_rebuild()
