from .base_model import BaseModel
from .fragments import TaskDetail


class ApproveHandoff(BaseModel):
    approve_handoff: "ApproveHandoffApproveHandoff"


ApproveHandoffApproveHandoff = TaskDetail
ApproveHandoff.model_rebuild()
