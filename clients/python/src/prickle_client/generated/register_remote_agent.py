from .base_model import BaseModel


class RegisterRemoteAgent(BaseModel):
    register_remote_agent: "RegisterRemoteAgentRegisterRemoteAgent"


class RegisterRemoteAgentRegisterRemoteAgent(BaseModel):
    agent_id: str
    card_url: str
    has_credential: bool
    created_at: str


RegisterRemoteAgent.model_rebuild()
