"""Rows to domain objects and back."""

from __future__ import annotations

import dataclasses
from typing import Any

from app.domain.events import Event
from app.domain.task import Gate, Task

# Each field of the domain Task is the column of the same name, but its gate, which is three
# (gate_basis, gate_rule_id, approval_id). The row adds columns derived from the task, for
# the read side's filters and visibility, and the task's creator.
_PLAIN = tuple(f.name for f in dataclasses.fields(Task) if f.name != "gate")


def task_from_row(row: Any) -> Task:
    m = row._mapping
    task = Task(**{name: m[name] for name in _PLAIN})
    task.gate = Gate(m["gate_basis"], m["gate_rule_id"], m["approval_id"])
    return task


def task_to_row(task: Task, created_by: str | None = None) -> dict[str, Any]:
    row = {name: getattr(task, name) for name in _PLAIN}
    row.update(
        requester_owner=task.requester_owner,
        assignee_owner=task.assignee_owner,
        requested_by_id=task.requested_by_id,
        gate_basis=task.gate.basis,
        gate_rule_id=task.gate.rule_id,
        approval_id=task.gate.approval_id,
    )
    if created_by is not None:
        row["created_by"] = created_by
    return row


def event_from_row(row: Any) -> Event:
    m = row._mapping
    return Event(
        kind=m["kind"],
        task_id=m["task_id"],
        project=m["project"],
        from_state=m["from_state"],
        to_state=m["to_state"],
        waiting_on=m["waiting_on"],
        verb=m["verb"],
        actor=m["actor"],
        at=m["at"],
        version=m["version"],
        task=m["task"],
        note=m["note"],
        seq=m["seq"],
        wait_agent=m["wait_agent"],
    )


def event_to_row(event: Event, seq: int) -> dict[str, Any]:
    return {
        "seq": seq,
        "task_id": event.task_id,
        "project": event.project,
        "kind": event.kind,
        "from_state": event.from_state,
        "to_state": event.to_state,
        "waiting_on": event.waiting_on,
        "verb": event.verb,
        "actor": event.actor,
        "at": event.at,
        "version": event.version,
        "note": event.note,
        "task": event.task,
        "wait_agent": event.wait_agent,
    }
