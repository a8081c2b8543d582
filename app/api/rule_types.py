"""The rules an owner sets, as GraphQL types: its permission gate's and its result policy's."""

from __future__ import annotations

import strawberry

from app.api.enums import CapabilityKind, DeliverableType, GateEffect, ResultPolicy
from app.domain.gate import GateRule as DomainGateRule
from app.domain.policy import ResultRule as DomainResultRule


@strawberry.type(description="A rule of its owner's permission gate.")
class GateRule:
    id: strawberry.ID
    owner: str
    effect: GateEffect
    priority: int
    project: str | None
    requester_owner: str | None
    requester_agent: str | None
    deliverable_type: DeliverableType | None
    capability_kind: CapabilityKind | None
    created_at: str

    @classmethod
    def from_domain(cls, rule: DomainGateRule) -> GateRule:
        return cls(**rule.__dict__)


@strawberry.type(description="A rule of its owner's result policy.")
class ResultRule:
    id: strawberry.ID
    owner: str
    policy: ResultPolicy
    project: str | None
    assignee: str | None
    deliverable_type: DeliverableType | None
    created_at: str

    @classmethod
    def from_domain(cls, rule: DomainResultRule) -> ResultRule:
        return cls(**rule.__dict__)


@strawberry.type(description="Why its owner's permission gate holds a handoff.")
class GateHold:
    owner: str = strawberry.field(description="Whose gate: the assignee's owner.")
    rule_id: strawberry.ID | None = strawberry.field(
        description="The rule that held it; null when none of the owner's rules matched "
        "(a handoff no rule lets through waits for the owner's approval)."
    )
    rule: GateRule | None = strawberry.field(
        description="That rule as it stands now; null when none matched or it was deleted since."
    )
