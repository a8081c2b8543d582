from typing import Optional

from .base_model import BaseModel
from .enums import CapabilityKind, DeliverableType, GateEffect


class SetGateRule(BaseModel):
    set_gate_rule: "SetGateRuleSetGateRule"


class SetGateRuleSetGateRule(BaseModel):
    id: str
    owner: str
    effect: GateEffect
    priority: int
    project: Optional[str]
    requester_owner: Optional[str]
    requester_agent: Optional[str]
    deliverable_type: Optional[DeliverableType]
    capability_kind: Optional[CapabilityKind]
    created_at: str


SetGateRule.model_rebuild()
