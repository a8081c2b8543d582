"""Which result rule of the requester's owner applies, and what it decides."""

from __future__ import annotations

import pytest
from factory import packet

from app.domain.policy import ResultRule, judge, pick
from app.domain.task import Task

pytestmark = pytest.mark.once  # the same on either backend: not run on PostgreSQL


def task(**fields) -> Task:  # type: ignore[no-untyped-def]
    base = {
        "id": "T1",
        "project": "web",
        "state": "verifying",
        "assignee": "bob/coder",
        "packet": packet(),
        "requested_by": {"kind": "agent", "agent_id": "alice/planner"},
        "route": {"via": "handoff"},
        "created_at": "",
        "updated_at": "",
        "requester": "alice/planner",
    }
    return Task(**{**base, **fields})


def rule(
    id: str, policy: str, owner: str = "alice", created_at: str = "1", **match: str
) -> ResultRule:
    return ResultRule(id=id, owner=owner, policy=policy, created_at=created_at, **match)


def test_no_rule_of_the_requesters_owner_means_v0() -> None:
    assert pick([rule("r1", "require_approval", owner="bob")], task()) is None
    assert (
        judge(
            None, {"complete": False, "coverage": [], "stale": [], "uncovered": []}
        ).decided_by_policy
        == "v0"
    )


def test_the_most_specific_matching_rule_applies() -> None:
    rules = [
        rule("r1", "auto_accept"),
        rule("r2", "require_approval", project="web", assignee="bob/coder"),
        rule("r3", "require_complete_evidence", project="web"),
        rule("r4", "auto_accept", project="web", assignee="bob/other"),
    ]
    assert pick(rules, task()).id == "r2"


def test_among_equally_specific_rules_the_newest_applies() -> None:
    rules = [
        rule("r1", "auto_accept", created_at="1"),
        rule("r2", "require_approval", created_at="2"),
    ]
    assert pick(rules, task()).id == "r2"


def test_a_person_requesters_own_rules_apply() -> None:
    mine = task(requester=None, requested_by={"kind": "person", "handle": "alice"})
    assert pick([rule("r1", "require_approval")], mine).id == "r1"


def test_a_rule_for_another_deliverable_type_does_not_apply() -> None:
    assert pick([rule("r1", "require_approval", deliverable_type="doc")], task()) is None
