from .base_model import BaseModel


class RemoteAgents(BaseModel):
    remote_agents: list["RemoteAgentsRemoteAgents"]


class RemoteAgentsRemoteAgents(BaseModel):
    agent_id: str
    card_url: str
    has_credential: bool
    created_at: str


RemoteAgents.model_rebuild()
