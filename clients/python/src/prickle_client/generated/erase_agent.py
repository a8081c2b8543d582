from .base_model import BaseModel


class EraseAgent(BaseModel):
    erase_agent: "EraseAgentEraseAgent"


class EraseAgentEraseAgent(BaseModel):
    principal: str
    erased_at: str
    tokens_revoked: int
    tasks_marked: int


EraseAgent.model_rebuild()
