from .base_model import BaseModel


class EventsSeenAfterHead(BaseModel):
    event_head: str
    events_seen_after_head: list[str]
