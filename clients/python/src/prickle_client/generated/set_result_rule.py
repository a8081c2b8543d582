
from .base_model import BaseModel
from .enums import DeliverableType, ResultPolicy


class SetResultRule(BaseModel):
    set_result_rule: "SetResultRuleSetResultRule"


class SetResultRuleSetResultRule(BaseModel):
    id: str
    owner: str
    policy: ResultPolicy
    project: str | None
    assignee: str | None
    deliverable_type: DeliverableType | None
    created_at: str


SetResultRule.model_rebuild()
