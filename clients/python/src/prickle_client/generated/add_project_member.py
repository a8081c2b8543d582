from .base_model import BaseModel


class AddProjectMember(BaseModel):
    add_project_member: bool
