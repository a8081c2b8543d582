"""The permission gate of the assignee's owner: route, hold for approval, or reject."""

from __future__ import annotations

from dataclasses import dataclass

MATCH_FIELDS = (
    "project",
    "requester_owner",
    "requester_agent",
    "deliverable_type",
    "capability_kind",
)


@dataclass(frozen=True)
class GateRule:
    id: str
    owner: str
    effect: str  # allow | deny | hold
    priority: int = 0
    project: str | None = None
    requester_owner: str | None = None
    requester_agent: str | None = None
    deliverable_type: str | None = None
    capability_kind: str | None = None
    created_at: str = ""


@dataclass(frozen=True)
class Request:
    """What the gate knows about a handoff."""

    assignee_owner: str
    requester_owner: str
    requester_agent: str | None
    project: str
    deliverable_type: str
    capability_kind: str | None = None


@dataclass(frozen=True)
class Decision:
    outcome: str  # routed | held | rejected
    basis: str | None = None  # same_owner | rule
    rule_id: str | None = None
    reason: str | None = None

    @property
    def to_state(self) -> str:
        return {"routed": "routed", "held": "waiting", "rejected": "rejected"}[self.outcome]


def matches(rule: GateRule, request: Request) -> bool:
    """A rule matches when every match field it sets equals the request's; unset matches all."""
    return all(
        getattr(rule, name) is None or getattr(rule, name) == getattr(request, name)
        for name in MATCH_FIELDS
    )


def ordered(rules: list[GateRule]) -> list[GateRule]:
    """Highest priority first; among equals, the older rule first."""
    return sorted(rules, key=lambda r: (-r.priority, r.created_at, r.id))


def decide(request: Request, rules: list[GateRule]) -> Decision:
    if request.requester_owner == request.assignee_owner:
        return Decision("routed", basis="same_owner")
    for rule in ordered(rules):
        if rule.owner != request.assignee_owner or not matches(rule, request):
            continue
        if rule.effect == "allow":
            return Decision("routed", basis="rule", rule_id=rule.id)
        if rule.effect == "deny":
            return Decision("rejected", rule_id=rule.id, reason=f"denied by gate rule {rule.id}")
        return Decision("held", rule_id=rule.id, reason=f"held by gate rule {rule.id}")
    return Decision("held", reason=f"no gate rule of {request.assignee_owner} matched")
