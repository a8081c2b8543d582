from .base_model import BaseModel
from .fragments import ScheduleFields


class PauseSchedule(BaseModel):
    pause_schedule: "PauseSchedulePauseSchedule"


PauseSchedulePauseSchedule = ScheduleFields
PauseSchedule.model_rebuild()
