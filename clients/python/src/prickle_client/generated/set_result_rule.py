from typing import Optional

from .base_model import BaseModel
from .enums import DeliverableType, ResultPolicy


class SetResultRule(BaseModel):
    set_result_rule: "SetResultRuleSetResultRule"


class SetResultRuleSetResultRule(BaseModel):
    id: str
    owner: str
    policy: ResultPolicy
    project: Optional[str]
    assignee: Optional[str]
    deliverable_type: Optional[DeliverableType]
    created_at: str


SetResultRule.model_rebuild()
