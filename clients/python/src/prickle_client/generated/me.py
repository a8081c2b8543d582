from .base_model import BaseModel


class Me(BaseModel):
    me: "MeMe"


class MeMe(BaseModel):
    kind: str
    id: str
    owner: str


Me.model_rebuild()
