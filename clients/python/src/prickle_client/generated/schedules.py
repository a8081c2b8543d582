from .base_model import BaseModel
from .fragments import ScheduleFields


class Schedules(BaseModel):
    schedules: list["SchedulesSchedules"]


SchedulesSchedules = ScheduleFields
Schedules.model_rebuild()
