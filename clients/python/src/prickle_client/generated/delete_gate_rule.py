from .base_model import BaseModel


class DeleteGateRule(BaseModel):
    delete_gate_rule: bool
