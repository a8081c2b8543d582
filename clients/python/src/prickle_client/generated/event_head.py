from .base_model import BaseModel


class EventHead(BaseModel):
    event_head: str
