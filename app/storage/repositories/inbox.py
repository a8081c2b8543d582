"""The inbox: what waits on a principal, in every project, a page at a time by task id.

The SQL form of `app.domain.inbox.waits_on`. For a person P: a result in `approval` whose
requester's owner is P; a handoff held on `owner_approval` whose assignee's owner is P; a
question on `human` whose requester's owner or assignee's owner is P (`requester_owner` is
the requester side's person: the requester agent's owner, or the person in requested_by).
For an agent A: a question on `agent` put to A.

Each of those is one branch that an index answers in task id order (migration 0016:
`(requester_owner, state, waiting_on, id)`, `(assignee_owner, state, waiting_on, id)`,
`(wait_agent, id)`); a page reads at most a page from each branch, so its cost is the
page's, not the number of tasks, in the principal's projects or anywhere. A task found in
two branches (a person who owns both sides) is one row. A task found by a branch is visible
to the principal by the visibility rule's own terms (it is a party, or the agent asked), so
no visibility test is added.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Integer,
    Select,
    String,
    and_,
    bindparam,
    func,
    select,
    union,
)

from app.domain.principals import Principal
from app.domain.reads import Page, Paging
from app.domain.task import Task
from app.storage.repositories.base import Repository
from app.storage.repositories.tasks import Columns, select_tasks, tasks

_WHO = bindparam("who", type_=String)
_AFTER = bindparam("after", type_=String)
_BEFORE = bindparam("before", type_=String)
_LIMIT = bindparam("limit", type_=Integer)


def _waiting(on: str) -> ColumnElement[bool]:
    return and_(tasks.c.state == "waiting", tasks.c.waiting_on == on)


def _branches(person: bool) -> list[ColumnElement[bool]]:
    """Each branch's condition: equality on every column of its index before `id`."""
    if not person:
        return [and_(tasks.c.wait_agent == _WHO, *_waiting("agent").clauses)]
    in_approval = and_(tasks.c.state == "approval", tasks.c.waiting_on.is_(None))
    return [
        and_(tasks.c.requester_owner == _WHO, in_approval),
        and_(tasks.c.requester_owner == _WHO, _waiting("human")),
        and_(tasks.c.assignee_owner == _WHO, _waiting("owner_approval")),
        and_(tasks.c.assignee_owner == _WHO, _waiting("human")),
    ]


def _ids(person: bool, paged: bool, before: bool = False, backward: bool = False) -> Any:
    """The union of the branches' task ids; `paged`: each branch's first page after the
    cursor (and, with `before`, before the cursor `before`) only, its last page when
    `backward` (the page cannot hold more of any one branch)."""
    selects = []
    order = tasks.c.id.desc() if backward else tasks.c.id
    for branch in _branches(person):
        stmt = select(tasks.c.id).where(branch)
        if paged:
            stmt = stmt.where(tasks.c.id > _AFTER)
            if before:
                stmt = stmt.where(tasks.c.id < _BEFORE)
            stmt = select(stmt.order_by(order).limit(_LIMIT).subquery().c.id)
        selects.append(stmt)
    return union(*selects)


@cache
def page_statement(
    person: bool, columns: tuple[str, ...] | None, before: bool = False, backward: bool = False
) -> Select[Any]:
    stmt, _ = select_tasks(columns)
    found = _ids(person, True, before, backward).subquery()
    order = tasks.c.id.desc() if backward else tasks.c.id
    return stmt.where(tasks.c.id.in_(select(found.c.id))).order_by(order).limit(_LIMIT)


@cache
def _count_statement(person: bool, limited: bool) -> Select[Any]:
    """`limited`: each branch's first `limit` ids only, so that counting stops; the count is
    then exact when below `limit`, else at least `limit`."""
    return select(func.count()).select_from(_ids(person, paged=limited).subquery())


class Inbox(Repository):
    __slots__ = ()

    async def page(
        self,
        principal: Principal,
        first: int,
        after: str | None,
        columns: Columns = None,
        paging: Paging[str] | None = None,
    ) -> Page[Task]:
        """Up to `first` tasks waiting on the principal, by id, after the task `after`; with
        `paging`, also before its `before`, and its last ones when it reads backward."""
        kept = None if columns is None else tuple(columns)
        before = None if paging is None else paging.before
        backward = paging is not None and paging.backward
        stmt = page_statement(principal.is_person, kept, before is not None, backward)
        params = {"who": principal.id, "after": after or "", "limit": first + 1}
        if before is not None:
            params["before"] = before
        await self.tx.custom_plans()
        rows = await self.tx.rows(stmt, params)
        _, task_of = select_tasks(kept)
        found = list(map(task_of, rows[:first]))
        return Page(found[::-1] if backward else found, len(rows) > first)

    async def count(self, principal: Principal, limit: int | None = None) -> int:
        """The tasks waiting on the principal; with `limit`, at most that many."""
        stmt = _count_statement(principal.is_person, limit is not None)
        params = {"who": principal.id, "after": "", "limit": limit}
        await self.tx.custom_plans()
        row = await self.tx.one(stmt, params if limit is not None else {"who": principal.id})
        found = int(row[0])
        return found if limit is None else min(found, limit)
