from .base_model import BaseModel
from .fragments import TaskDetail


class ResumeRun(BaseModel):
    resume_run: "ResumeRunResumeRun"


ResumeRunResumeRun = TaskDetail
ResumeRun.model_rebuild()
