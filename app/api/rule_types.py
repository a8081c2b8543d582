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
