from .base_model import BaseModel


class DeleteResultRule(BaseModel):
    delete_result_rule: bool
