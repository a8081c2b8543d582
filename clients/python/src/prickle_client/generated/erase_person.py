from .base_model import BaseModel


class ErasePerson(BaseModel):
    erase_person: "ErasePersonErasePerson"


class ErasePersonErasePerson(BaseModel):
    principal: str
    erased_at: str
    tokens_revoked: int
    tasks_marked: int


ErasePerson.model_rebuild()
