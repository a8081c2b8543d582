"""Erasure: how an erased principal reads in task objects, and when erasing is refused.

An erased principal keeps its id wherever a task object names it (other principals' records
point to it); `requested_by`, `result.decided_by` and `result.verified_by` gain
`erased: true`. Nothing else in the task changes.
"""

from __future__ import annotations

from collections.abc import Iterable, Set
from typing import Any

from app.domain.errors import Conflict
from app.domain.principals import Principal, owner_of
from app.domain.table import table

JSON = dict[str, Any]
OpenTask = tuple[str, str, str]  # (task id, state, assignee)

_RESULT_REFERENCES = ("decided_by", "verified_by")


def mark_erased(task: JSON, erased: Set[str]) -> JSON:
    """A copy of the task object with `erased: true` on each reference to an erased id.

    `erased` holds handles and agent ids; the task object given is left unchanged."""
    marked = dict(task)
    if "requested_by" in task:
        marked["requested_by"] = marked_reference(task["requested_by"], erased)
    result = task.get("result")
    if result is not None:
        marked["result"] = {
            key: marked_reference(value, erased) if key in _RESULT_REFERENCES else value
            for key, value in result.items()
        }
    return marked


def marked_reference(reference: JSON | None, erased: Set[str]) -> JSON | None:
    """`{kind, handle | agent_id, erased: true}` when it names an erased person or agent."""
    if reference is None or _referenced_id(reference) not in erased:
        return reference
    return {**reference, "erased": True}


def _referenced_id(reference: JSON) -> str | None:
    kind = reference.get("kind")
    if kind == "person":
        return reference.get("handle")
    if kind == "agent":
        return reference.get("agent_id")
    return None  # the system is never erased


def erased_together(handle: str, agent_ids: Iterable[str]) -> list[str]:
    """Erasing a person erases its agents: the person's handle, then each of its agents' ids.

    Agents are those of `agent_ids` whose owner part is the handle."""
    return [handle, *sorted({a for a in agent_ids if owner_of(a) == handle})]


def open_work(principal: Principal, tasks: Iterable[OpenTask]) -> list[str]:
    """Ids of the tasks not in a final state whose assignee is the principal or, for a
    person, one of its agents, in the order given."""
    final = table().terminal
    return [
        task_id
        for task_id, state, assignee in tasks
        if state not in final and principal.acts_for(assignee)
    ]


def check_no_open_work(principal: Principal, tasks: Iterable[OpenTask]) -> None:
    """Refuse the erasure (conflict, nothing changed) while the principal has open work."""
    ids = open_work(principal, tasks)
    if ids:
        who = f"{principal.id} or its agents" if principal.is_person else principal.id
        listed = ", ".join(ids)
        raise Conflict(f"cannot erase {principal.id}: open tasks assigned to {who}: {listed}")
