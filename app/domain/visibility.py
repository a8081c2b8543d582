"""Who sees a task (section 1 of the protocol), in one place.

A principal sees a task when it is a party to it (the requester side or the assignee, or the
person who owns either), when it is a member of the task's project (persons only), or, while
the task waits on an agent, when it is that agent or the agent's owner: it is asked to answer,
and could not answer a task it cannot see. Membership is an input: the caller reads it.

The SQL form of this rule is `app.storage.visibility.visible`; a test proves they agree.
"""

from __future__ import annotations

from collections.abc import Container

from app.domain.actors import actor_for, is_actor
from app.domain.principals import Principal
from app.domain.task import Task


def sees(principal: Principal, task: Task, member_of: Container[str] = ()) -> bool:
    """Whether the principal may see the task; `member_of`: the projects it is a member of."""
    return (
        (principal.is_person and task.project in member_of)
        or is_actor("assignee", principal, task)
        or is_actor("requester_side", principal, task)
        or (task.waiting_on == "agent" and principal.acts_for(task.wait_agent))
    )


def sees_gate_hold(principal: Principal, task: Task) -> bool:
    """Whether the principal may read why the permission gate holds the task (the rule that
    held it): only the one who may approve the handoff, the assignee's owner, whose gate and
    rules they are. No one else reads another owner's rules."""
    if task.state != "waiting" or task.waiting_on != "owner_approval":
        return False
    actor = actor_for("approve_handoff", task)
    return actor is not None and is_actor(actor, principal, task)
