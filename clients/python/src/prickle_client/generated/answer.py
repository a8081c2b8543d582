from .base_model import BaseModel
from .fragments import TaskDetail


class Answer(BaseModel):
    answer: "AnswerAnswer"


AnswerAnswer = TaskDetail
Answer.model_rebuild()
