from .base_model import BaseModel


class RemoveRemoteAgent(BaseModel):
    remove_remote_agent: bool
