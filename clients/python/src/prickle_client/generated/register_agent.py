from .base_model import BaseModel


class RegisterAgent(BaseModel):
    register_agent: "RegisterAgentRegisterAgent"


class RegisterAgentRegisterAgent(BaseModel):
    agent_id: str
    token: str


RegisterAgent.model_rebuild()
