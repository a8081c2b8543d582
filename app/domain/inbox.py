"""What waits on a principal: its inbox, in one place.

A task waits on a principal when the principal is the table's actor of one of the verbs that
only it can use there: `approve_handoff` (a handoff held for the assignee's owner),
`decide_result` (a result in `approval`, for the requester's owner) or `answer` (a question:
on `human`, for a person of the requester side or the assignee's owner; on `agent`, for that
agent). A person's agent being asked is the agent's inbox, not the person's: the owner may
answer for it, but the question was put to the agent.

The SQL form of this rule is `app.storage.repositories.inbox`; a test proves they agree.
"""

from __future__ import annotations

from app.domain.actors import actor_for, is_actor
from app.domain.principals import Principal
from app.domain.table import SYSTEM
from app.domain.task import Task

VERBS = ("approve_handoff", "decide_result", "answer")


def waits_on(principal: Principal, task: Task) -> bool:
    """Whether the task waits on this principal to approve, decide or answer."""
    if task.waiting_on == "agent":
        return principal.id == task.wait_agent
    return any(_acts(verb, principal, task) for verb in VERBS)


def _acts(verb: str, principal: Principal, task: Task) -> bool:
    actor = actor_for(verb, task)
    return actor is not None and actor != SYSTEM and is_actor(actor, principal, task)
