from .base_model import BaseModel


class SetAgentCardPublic(BaseModel):
    set_agent_card_public: bool
