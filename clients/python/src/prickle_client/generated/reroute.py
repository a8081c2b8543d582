from .base_model import BaseModel
from .fragments import TaskDetail


class Reroute(BaseModel):
    reroute: "RerouteReroute"


RerouteReroute = TaskDetail
Reroute.model_rebuild()
