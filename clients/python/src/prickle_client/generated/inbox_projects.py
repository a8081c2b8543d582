from .base_model import BaseModel


class InboxProjects(BaseModel):
    inbox_projects: list["InboxProjectsInboxProjects"]


class InboxProjectsInboxProjects(BaseModel):
    project: str
    count: int


InboxProjects.model_rebuild()
