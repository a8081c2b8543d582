from .base_model import BaseModel


class DeleteSchedule(BaseModel):
    delete_schedule: bool
