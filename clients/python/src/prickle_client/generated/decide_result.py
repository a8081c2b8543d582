from .base_model import BaseModel
from .fragments import TaskDetail


class DecideResult(BaseModel):
    decide_result: "DecideResultDecideResult"


DecideResultDecideResult = TaskDetail
DecideResult.model_rebuild()
