from .base_model import BaseModel


class RemoveProjectMember(BaseModel):
    remove_project_member: bool
