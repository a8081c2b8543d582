from .base_model import BaseModel
from .fragments import TaskDetail


class Handoff(BaseModel):
    handoff: "HandoffHandoff"


HandoffHandoff = TaskDetail
Handoff.model_rebuild()
