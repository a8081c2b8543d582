from .base_model import BaseModel
from .fragments import TaskDetail


class HandBack(BaseModel):
    hand_back: "HandBackHandBack"


HandBackHandBack = TaskDetail
HandBack.model_rebuild()
