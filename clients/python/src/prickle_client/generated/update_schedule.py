from .base_model import BaseModel
from .fragments import ScheduleFields


class UpdateSchedule(BaseModel):
    update_schedule: "UpdateScheduleUpdateSchedule"


UpdateScheduleUpdateSchedule = ScheduleFields
UpdateSchedule.model_rebuild()
