"""The SQL form of the visibility rule: `app.domain.visibility.sees`, over the tasks table.

A person P sees a task when P owns (or is) its requester or assignee, is its `requested_by`,
or is a member of its project (read from project_members in the same statement, so a
membership change applies to the next read); an agent A when A is its requester, its
assignee or its `requested_by`; the agent a task waits on (`wait_on(on: agent)`), and that
agent's owner, while it waits. The read tests prove this equals the domain rule.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, and_, or_, select

from app.domain.principals import Principal
from app.storage.repositories.projects import members
from app.storage.repositories.tasks import tasks


def visible(principal: Principal) -> ColumnElement[bool]:
    """'The principal may see this task', as a condition on `tasks`."""
    who = principal.id
    if principal.is_person:
        projects = select(members.c.project).where(members.c.handle == who)
        return or_(
            tasks.c.requester_owner == who,
            tasks.c.assignee_owner == who,
            tasks.c.requested_by_id == who,
            tasks.c.project.in_(projects),
            and_(tasks.c.waiting_on == "agent", tasks.c.wait_agent.startswith(f"{who}/")),
        )
    return or_(
        tasks.c.requester == who,
        tasks.c.assignee == who,
        tasks.c.requested_by_id == who,
        and_(tasks.c.waiting_on == "agent", tasks.c.wait_agent == who),
    )
