"""The move rules: which move a verb makes from where a task stands, and who may make it."""

from __future__ import annotations

from app.domain.actors import actor_for, is_actor
from app.domain.errors import Forbidden, InvalidState
from app.domain.principals import Principal
from app.domain.table import Move, table
from app.domain.task import Task

# In `waiting`, waiting_on narrows the verbs the table allows (the table's notes say which).
WAITING_VERBS = {
    "owner_approval": {"approve_handoff", "deny_task", "cancel_task"},
    "human": {"answer", "hand_back", "cancel_task", "save_checkpoint"},
    "agent": {"answer", "hand_back", "cancel_task", "save_checkpoint"},
    "stopped": {"resume_run", "hand_back", "cancel_task", "save_checkpoint"},
}

# Verbs whose target the server picks: the gate, the result policy, the decision, the resume.
RESUMING = {"answer", "resume_run"}

# A checkpoint is no move; the states where the assignee may save one.
CHECKPOINT_STATES = {"accepted", "working", "waiting"}


def allowed_here(task: Task, verb: str) -> bool:
    """Whether the table (narrowed by waiting_on) lets `verb` act on the task now."""
    if task.state == "waiting" and verb not in WAITING_VERBS[task.waiting_on or ""]:
        return False
    if verb == "save_checkpoint":
        return task.state in CHECKPOINT_STATES
    # The server's own moves (the gate, the result policy) are no caller's to make.
    return any(verb in m.verbs and m.actor != "system" for m in table().moves_from(task.state))


def check(task: Task, verb: str, principal: Principal | None) -> None:
    """Raise InvalidState when the verb can't act now, Forbidden when the principal can't."""
    if not allowed_here(task, verb):
        raise InvalidState(verb, task.state, task.waiting_on)
    if principal is not None and not is_actor(actor_for(verb, task), principal, task):
        raise Forbidden(f"{principal.id} may not {verb} this task")


def move_to(task: Task, verb: str, to_state: str) -> Move:
    """The table's move from the task's state to `to_state` by `verb`; InvalidState if none."""
    move = table().find(task.state, to_state, verb)
    if move is None:
        raise InvalidState(verb, task.state, task.waiting_on)
    return move


def resume_target(task: Task) -> str:
    return task.resume_to or "working"


def allowed_verbs(task: Task, principal: Principal) -> list[str]:
    verbs = [*table().verbs, "save_checkpoint"]
    return [
        v
        for v in verbs
        if v not in ("handoff", "request_capability")
        and allowed_here(task, v)
        and is_actor(actor_for(v, task), principal, task)
    ]
