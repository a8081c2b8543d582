from typing import Optional

from .base_model import BaseModel
from .fragments import TaskDetail


class Inbox(BaseModel):
    inbox: "InboxInbox"


class InboxInbox(BaseModel):
    total_count: int
    page_info: "InboxInboxPageInfo"
    edges: list["InboxInboxEdges"]


class InboxInboxPageInfo(BaseModel):
    has_next_page: bool
    end_cursor: Optional[str]


class InboxInboxEdges(BaseModel):
    cursor: str
    node: "InboxInboxEdgesNode"


InboxInboxEdgesNode = TaskDetail
Inbox.model_rebuild()
InboxInbox.model_rebuild()
InboxInboxEdges.model_rebuild()
