from typing import Optional

from pydantic import Field

from .base_model import BaseModel


class TaskVerbs(BaseModel):
    task_verbs: list["TaskVerbsTaskVerbs"]


class TaskVerbsTaskVerbs(BaseModel):
    name: str
    description: Optional[str]
    guide: str
    destructive: bool
    ends_task: bool
    label: str
    rank: int
    arguments: list["TaskVerbsTaskVerbsArguments"]
    form: list["TaskVerbsTaskVerbsForm"]
    document: str


class TaskVerbsTaskVerbsArguments(BaseModel):
    name: str
    type_: str = Field(alias="type")
    required: bool
    description: Optional[str]
    options: Optional[list[str]]


class TaskVerbsTaskVerbsForm(BaseModel):
    name: str
    label: str
    kind: str
    required: bool
    options: list[str]
    placeholder: Optional[str]
    none: Optional[str]


TaskVerbs.model_rebuild()
TaskVerbsTaskVerbs.model_rebuild()
