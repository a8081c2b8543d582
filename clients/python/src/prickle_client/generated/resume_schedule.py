from .base_model import BaseModel
from .fragments import ScheduleFields


class ResumeSchedule(BaseModel):
    resume_schedule: "ResumeScheduleResumeSchedule"


ResumeScheduleResumeSchedule = ScheduleFields
ResumeSchedule.model_rebuild()
