from .base_model import BaseModel
from .fragments import TaskDetail


class ReturnResult(BaseModel):
    return_result: "ReturnResultReturnResult"


ReturnResultReturnResult = TaskDetail
ReturnResult.model_rebuild()
