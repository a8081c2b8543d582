from .base_model import BaseModel
from .fragments import ScheduleFields


class CreateSchedule(BaseModel):
    create_schedule: "CreateScheduleCreateSchedule"


CreateScheduleCreateSchedule = ScheduleFields
CreateSchedule.model_rebuild()
