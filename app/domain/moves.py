"""The move rules: which move a verb makes from where a task stands, and who may make it."""

from __future__ import annotations

from app.domain.actors import actor_for, is_actor
from app.domain.errors import Forbidden, InvalidState
from app.domain.principals import Principal
from app.domain.table import SYSTEM, table
from app.domain.task import Task


def check(task: Task, verb: str, principal: Principal | None) -> None:
    """Raise InvalidState when the verb can't act now, Forbidden when the principal can't."""
    actor = actor_for(verb, task)
    if actor is None or actor == SYSTEM:
        raise InvalidState(verb, task.state, task.waiting_on)
    if principal is not None and not is_actor(actor, principal, task):
        raise Forbidden(f"{principal.id} may not {verb} this task")


def resume_target(task: Task) -> str:
    """Where an answer or a resumed run takes a waiting task: back where it waited from."""
    return task.resume_to or "working"


def allowed_verbs(task: Task, principal: Principal) -> list[str]:
    """The verbs the principal may use on the task now, in the table's order."""
    callers = table().callers(task.state, task.waiting_on)
    return [verb for verb, actor in callers.items() if is_actor(actor, principal, task)]
