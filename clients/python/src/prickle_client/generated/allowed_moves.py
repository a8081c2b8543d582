from pydantic import Field

from .base_model import BaseModel
from .enums import TaskState


class AllowedMoves(BaseModel):
    allowed_moves: list["AllowedMovesAllowedMoves"]


class AllowedMovesAllowedMoves(BaseModel):
    from_: TaskState = Field(alias="from")
    to: TaskState
    verbs: list[str]
    actor: str
    note: str


AllowedMoves.model_rebuild()
