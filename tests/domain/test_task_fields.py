"""The task's fields are listed once, in the domain Task: its row and its GraphQL type follow."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from app.api.task_types import TASK_CONVERTERS, TASK_FIELDS
from app.api.task_types import Task as GraphQLTask
from app.domain.task import PROTOCOL_FIELDS, Gate, Task
from app.storage import mapping
from app.storage.tables import TaskRow

pytestmark = pytest.mark.once  # the same on either backend: not run on PostgreSQL

SCHEMA = Path(__file__).resolve().parents[2] / "app/domain/protocol/task.schema.json"
GATE_COLUMNS = {"gate_basis", "gate_rule_id", "approval_id"}


def _task() -> Task:
    return Task(
        id="t-1",
        project="demo",
        state="waiting",
        assignee="bob/coder",
        packet={"task": "x"},
        requested_by={"kind": "agent", "agent_id": "alice/planner"},
        route={"via": "direct"},
        created_at="2026-01-01T00:00:00Z",
        updated_at="2026-01-02T00:00:00Z",
        requester="alice/planner",
        waiting_on="agent",
        turn_budget=0,
        version=4,
        resume_to="working",
        wait_agent="carol/spy",
        question="?",
        gate=Gate("rule", "g-1", None),
        idempotency_key="k",
    )


def test_the_protocol_fields_are_the_schema_properties_in_order() -> None:
    assert tuple(json.loads(SCHEMA.read_text())["properties"]) == PROTOCOL_FIELDS


def test_every_field_of_the_domain_task_has_a_column_of_its_own_name() -> None:
    columns = set(TaskRow.__table__.c.keys())
    fields = {f.name for f in dataclasses.fields(Task)} - {"gate"}
    assert fields <= columns, sorted(fields - columns)
    assert columns >= GATE_COLUMNS


def test_a_task_row_fills_every_column_and_reads_back_as_the_same_task() -> None:
    task = _task()
    row = mapping.task_to_row(task, created_by="alice/planner")
    assert set(row) == set(TaskRow.__table__.c.keys())
    assert mapping.task_from_row(SimpleNamespace(_mapping=row)) == task


def test_the_graphql_task_declares_every_protocol_field_and_the_version() -> None:
    declared = [f.python_name for f in GraphQLTask.__strawberry_definition__.fields]
    assert set(TASK_FIELDS) == {*PROTOCOL_FIELDS, "version"}
    assert set(TASK_FIELDS) <= set(declared), sorted(set(TASK_FIELDS) - set(declared))
    assert set(TASK_CONVERTERS) <= set(PROTOCOL_FIELDS)


def test_the_graphql_task_carries_each_field_of_the_domain_task() -> None:
    task = _task()
    built = GraphQLTask.from_domain(task)
    for name in TASK_FIELDS:
        if name not in TASK_CONVERTERS:
            assert getattr(built, name) == getattr(task, name), name
    assert built.converted("packet").task == "x"
    assert built.converted("requested_by").agent_id == "alice/planner"
    assert built.converted("route").via == "direct"
    assert built.converted("result") is None and built.converted("latest_checkpoint") is None
    assert built.domain is task
