"""Erasure in task objects, the person-erases-its-agents rule and the open-work refusal."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from jsonschema import Draft202012Validator, FormatChecker

from app.domain.erasure import (
    check_no_open_work,
    erased_together,
    mark_erased,
    marked_reference,
    open_work,
)
from app.domain.errors import Conflict
from app.domain.principals import agent, person
from app.domain.schedules import lineage_cause
from app.domain.table import task_schema

pytestmark = pytest.mark.once  # the same on either backend: not run on PostgreSQL

AT = "2026-12-03T07:00:00.000000Z"


def full_task(**result_fields: Any) -> dict[str, Any]:
    """A completed task object with every part a person or agent can be named in."""
    result = {
        "summary": "Wrote the page.",
        "evidence": [{"kind": "note", "summary": "read it through", "criteria": [0]}],
        "provenance": "agent_generated",
        "returned_by": "bob/writer",
        "returned_at": AT,
        "submission_id": "sub-1",
        "revision": 1,
        "artifacts": [],
        "status": "accepted",
        "verdicts": [{"criterion": 0, "accepted": True}],
        "verified_by": {"kind": "person", "handle": "alice"},
        "decided_by": {"kind": "agent", "agent_id": "alice/reviewer"},
        "decided_by_policy": None,
        "reason": None,
        "evidence_report": {
            "coverage": [{"criterion": 0, "evidence": [0]}],
            "general": [],
            "uncovered": [],
            "stale": [],
            "complete": True,
        },
        "lineage": {
            "cause": lineage_cause("SCHED1", 2, "TASK1", "alice"),
            "context": [],
            "recorded_at": AT,
        },
        "provenance_status": "attested",
        **result_fields,
    }
    return {
        "id": "TASK1",
        "project": "docs",
        "state": "completed",
        "waiting_on": None,
        "requester": None,
        "assignee": "bob/writer",
        "packet": {
            "task": "Write the page",
            "deliverable_type": "doc",
            "acceptance_criteria": ["it reads well"],
            "context": "",
            "files": [],
            "depends_on": [],
        },
        "result": result,
        "latest_checkpoint": None,
        "latest_checkpoint_by": None,
        "parent_task_id": None,
        "created_at": AT,
        "updated_at": AT,
        "requested_by": {"kind": "person", "handle": "alice"},
        "origin_message_id": None,
        "route": {"via": "handoff"},
        "display_title": None,
        "turn_budget": None,
    }


def assert_valid(task: dict[str, Any]) -> None:
    schema = task_schema()
    Draft202012Validator.check_schema(schema)
    errors = list(Draft202012Validator(schema, format_checker=FormatChecker()).iter_errors(task))
    assert not errors, [e.message for e in errors]


def test_the_full_task_object_is_valid_before_erasure() -> None:
    assert_valid(full_task())


def test_erasing_a_person_and_its_agent_marks_every_site_and_stays_valid() -> None:
    marked = mark_erased(full_task(), {"alice", "alice/reviewer"})
    assert marked["requested_by"] == {"kind": "person", "handle": "alice", "erased": True}
    assert marked["result"]["verified_by"] == {"kind": "person", "handle": "alice", "erased": True}
    assert marked["result"]["decided_by"] == {
        "kind": "agent",
        "agent_id": "alice/reviewer",
        "erased": True,
    }
    assert_valid(marked)


@pytest.mark.parametrize(
    ("site", "reference"),
    [
        ("requested_by", {"kind": "person", "handle": "carol"}),
        ("requested_by", {"kind": "agent", "agent_id": "carol/bot"}),
        ("decided_by", {"kind": "person", "handle": "carol"}),
        ("decided_by", {"kind": "agent", "agent_id": "carol/bot"}),
        ("verified_by", {"kind": "person", "handle": "carol"}),
        ("verified_by", {"kind": "agent", "agent_id": "carol/bot"}),
    ],
)
def test_each_erased_site_is_valid_against_the_task_schema(
    site: str, reference: dict[str, str]
) -> None:
    task = full_task()
    holder = task if site == "requested_by" else task["result"]
    holder[site] = reference
    marked = mark_erased(task, {"carol", "carol/bot"})
    marked_holder = marked if site == "requested_by" else marked["result"]
    assert marked_holder[site] == {**reference, "erased": True}
    assert_valid(marked)


def test_only_erased_ids_are_marked_and_the_given_task_is_unchanged() -> None:
    task = full_task()
    before = copy.deepcopy(task)
    marked = mark_erased(task, {"alice/reviewer"})
    assert task == before
    assert marked["requested_by"] == {"kind": "person", "handle": "alice"}
    assert marked["result"]["verified_by"] == {"kind": "person", "handle": "alice"}
    assert marked["result"]["decided_by"]["erased"] is True
    assert {k: v for k, v in marked.items() if k != "result"} == {
        k: v for k, v in before.items() if k != "result"
    }


def test_the_system_and_missing_deciders_are_never_marked() -> None:
    task = full_task(decided_by={"kind": "system"}, verified_by=None)
    marked = mark_erased(task, {"alice", "system"})
    assert marked["result"]["decided_by"] == {"kind": "system"}
    assert marked["result"]["verified_by"] is None
    assert_valid(marked)


def test_a_task_without_a_result_only_marks_requested_by() -> None:
    task = full_task()
    task["result"] = None
    marked = mark_erased(task, {"alice"})
    assert marked["result"] is None
    assert marked["requested_by"]["erased"] is True
    assert_valid(marked)


def test_a_person_id_never_matches_an_agent_reference_of_the_same_text() -> None:
    assert marked_reference({"kind": "agent", "agent_id": "alice/bot"}, {"alice"}) == {
        "kind": "agent",
        "agent_id": "alice/bot",
    }


def test_erasing_a_person_erases_its_agents_and_no_one_elses() -> None:
    agents = ["alice/coder", "bob/alice", "alice/a", "alice-2/x", "alice/coder"]
    assert erased_together("alice", agents) == ["alice", "alice/a", "alice/coder"]
    assert erased_together("dave", []) == ["dave"]


TASKS = [
    ("T1", "working", "alice/coder"),
    ("T2", "completed", "alice/coder"),
    ("T3", "waiting", "alice/reviewer"),
    ("T4", "routed", "bob/alice"),
    ("T5", "cancelled", "alice/reviewer"),
    ("T6", "requested", "alice-2/coder"),
    ("T7", "rejected", "alice/coder"),
    ("T8", "returned", "alice/coder"),
]


def test_open_work_of_a_person_is_every_open_task_of_its_agents() -> None:
    assert open_work(person("alice"), TASKS) == ["T1", "T3", "T8"]


def test_open_work_of_an_agent_is_its_own_open_tasks() -> None:
    assert open_work(agent("alice/reviewer"), TASKS) == ["T3"]
    assert open_work(agent("bob/alice"), TASKS) == ["T4"]


def test_erasure_with_open_work_is_refused_with_a_conflict_listing_the_tasks() -> None:
    with pytest.raises(Conflict, match=r"alice or its agents: T1, T3, T8$"):
        check_no_open_work(person("alice"), TASKS)
    with pytest.raises(Conflict, match=r"assigned to alice/reviewer: T3$"):
        check_no_open_work(agent("alice/reviewer"), TASKS)
    check_no_open_work(person("carol"), TASKS)
