from .base_model import BaseModel
from .fragments import TaskDetail


class RequestCapability(BaseModel):
    request_capability: "RequestCapabilityRequestCapability"


RequestCapabilityRequestCapability = TaskDetail
RequestCapability.model_rebuild()
