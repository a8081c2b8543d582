
from .base_model import BaseModel
from .enums import CapabilityKind, DeliverableType, GateEffect


class SetGateRule(BaseModel):
    set_gate_rule: "SetGateRuleSetGateRule"


class SetGateRuleSetGateRule(BaseModel):
    id: str
    owner: str
    effect: GateEffect
    priority: int
    project: str | None
    requester_owner: str | None
    requester_agent: str | None
    deliverable_type: DeliverableType | None
    capability_kind: CapabilityKind | None
    created_at: str


SetGateRule.model_rebuild()
