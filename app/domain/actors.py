"""Who may make each move: the actors of the table's rules, resolved for a task and a principal."""

from __future__ import annotations

from app.domain.principals import Principal, owner_of
from app.domain.table import table
from app.domain.task import Task


def actor_for(verb: str, task: Task) -> str | None:
    """The table's actor for `verb` where the task stands (`system`: the server's); None: nobody."""
    return table().actor(task.state, task.waiting_on, verb)


def is_actor(role: str, principal: Principal, task: Task) -> bool:
    """Whether the principal is the table's `role` (an actor other than `system`) for the task."""
    return _CHECKS[role](principal, task)


def _assignee(p: Principal, task: Task) -> bool:
    return p.acts_for(task.assignee)


def _assignee_owner(p: Principal, task: Task) -> bool:
    return p.is_person and p.id == task.assignee_owner


def _requester_side(p: Principal, task: Task) -> bool:
    if p.acts_for(task.requester):
        return True
    return p.id == task.requested_by_id or (p.is_person and p.id == owner_of(task.requested_by_id))


def _requester_owner(p: Principal, task: Task) -> bool:
    return p.is_person and p.id == task.requester_owner


def answerers(task: Task) -> tuple[str, ...]:
    """Who may answer the task's open question (the table's `answerer`), each acting also
    through its owner: the agent named in wait_on(on: agent); for a wait on `human`, the
    persons of the requester side and the assignee's owner. None while the task waits on
    no question, or on `agent` naming none (only its subtasks' ends resume it)."""
    if task.waiting_on == "agent":
        return (task.wait_agent,) if task.wait_agent else ()
    if task.waiting_on == "human":
        sides = (task.requester, task.requested_by_id, task.assignee)
        return tuple(dict.fromkeys(owner_of(who) for who in sides if who))
    return ()


def _answerer(p: Principal, task: Task) -> bool:
    return any(p.acts_for(who) for who in answerers(task))


_CHECKS = {
    "assignee": _assignee,
    "assignee_owner": _assignee_owner,
    "requester_side": _requester_side,
    "requester_owner": _requester_owner,
    "answerer": _answerer,
}
