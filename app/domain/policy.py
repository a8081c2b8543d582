"""The result policy of the requester's owner: v0 and the three result rules."""

from __future__ import annotations

from dataclasses import dataclass

from app.domain.evidence import failing_criteria
from app.domain.task import JSON, Task

POLICIES = ("auto_accept", "require_complete_evidence", "require_approval")


@dataclass(frozen=True)
class ResultRule:
    id: str
    owner: str
    policy: str
    project: str | None = None
    assignee: str | None = None
    deliverable_type: str | None = None
    created_at: str = ""

    def matches(self, task: Task) -> bool:
        facts = {
            "project": task.project,
            "assignee": task.assignee,
            "deliverable_type": task.packet["deliverable_type"],
        }
        return all(getattr(self, k) is None or getattr(self, k) == v for k, v in facts.items())

    @property
    def specificity(self) -> int:
        return sum(v is not None for v in (self.project, self.assignee, self.deliverable_type))


@dataclass(frozen=True)
class Judgement:
    to_state: str  # completed | approval | working
    status: str  # accepted | submitted | rejected
    decided_by: JSON | None
    decided_by_policy: str | None
    verdicts: list[JSON]
    reason: str | None = None


def pick(rules: list[ResultRule], task: Task) -> ResultRule | None:
    """The most specific matching rule of the requester's owner; the newest among equals."""
    mine = [r for r in rules if r.owner == task.requester_owner and r.matches(task)]
    mine.sort(key=lambda r: (r.specificity, r.created_at, r.id), reverse=True)
    return mine[0] if mine else None


def judge(rule: ResultRule | None, report: JSON) -> Judgement:
    system = {"kind": "system"}
    if rule is None or rule.policy in ("v0", "auto_accept"):
        return Judgement("completed", "accepted", system, rule.policy if rule else "v0", [])
    if rule.policy == "require_approval":
        return Judgement("approval", "submitted", None, None, [])
    failing = failing_criteria(report)
    if not failing and report["complete"]:
        return Judgement("completed", "accepted", system, None, [])
    verdicts = [
        {"criterion": c, "accepted": False, "note": "no fresh evidence cites this criterion"}
        for c in failing
    ]
    stale = [s["evidence"] for s in report["stale"]]
    reason = (
        f"evidence incomplete under rule {rule.id}: "
        f"uncovered criteria {report['uncovered']}, stale evidence {stale}"
    )
    return Judgement("working", "rejected", system, None, verdicts, reason)
