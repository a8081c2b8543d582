"""The inbox: what waits on a principal, in every project, oldest waiting first, a page at a
time.

The SQL form of `app.domain.inbox.waits_on`. For a person P: a result in `approval` whose
requester's owner is P; a handoff held on `owner_approval` whose assignee's owner is P; a
question on `human` whose requester's owner or assignee's owner is P (`requester_owner` is
the requester side's person: the requester agent's owner, or the person in requested_by).
For an agent A: a question on `agent` put to A.

Each of those is one branch that an index answers oldest waiting first, in `(moved_at, id)`
order (migration 0021: `(requester_owner, state, waiting_on, moved_at, id)`,
`(assignee_owner, state, waiting_on, moved_at, id)`, `(wait_agent, moved_at, id)`); a page
reads at most a page from each branch, so its cost is the page's, not the number of tasks,
in the principal's projects or anywhere. What is asked (`asked`: the branches of one verb)
and a project narrow it; a project is a condition on the rows the index reads, so it costs
the principal's waiting tasks of that kind, never the table. A task found in
two branches (a person who owns both sides) is one row. A task found by a branch is visible
to the principal by the visibility rule's own terms (it is a party, or the agent asked), so
no visibility test is added.
"""

from __future__ import annotations

from dataclasses import dataclass
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
    or_,
    select,
    union,
)

from app.domain.principals import Principal
from app.domain.reads import InboxPage, Page, Paging, Waiting
from app.storage.repositories.base import Repository
from app.storage.repositories.tasks import Columns, select_tasks, tasks

_WHO = bindparam("who", type_=String)
_PROJECT = bindparam("project", type_=String)
_AFTER_AT = bindparam("after_at", type_=String)
_AFTER_ID = bindparam("after_id", type_=String)
_BEFORE_AT = bindparam("before_at", type_=String)
_BEFORE_ID = bindparam("before_id", type_=String)
_LIMIT = bindparam("limit", type_=Integer)


def _waiting(on: str) -> ColumnElement[bool]:
    return and_(tasks.c.state == "waiting", tasks.c.waiting_on == on)


def _branches(person: bool, asked: str | None) -> list[ColumnElement[bool]]:
    """Each branch's condition (of those that ask `asked`, or all): equality on every column
    of its index before `(moved_at, id)`."""
    if not person:
        found = [("answer", and_(tasks.c.wait_agent == _WHO, *_waiting("agent").clauses))]
    else:
        in_approval = and_(tasks.c.state == "approval", tasks.c.waiting_on.is_(None))
        found = [
            ("decide_result", and_(tasks.c.requester_owner == _WHO, in_approval)),
            ("answer", and_(tasks.c.requester_owner == _WHO, _waiting("human"))),
            ("approve_handoff", and_(tasks.c.assignee_owner == _WHO, _waiting("owner_approval"))),
            ("answer", and_(tasks.c.assignee_owner == _WHO, _waiting("human"))),
        ]
    return [branch for verb, branch in found if asked is None or verb == asked]


def _past(at: Any, id: Any, later: bool) -> ColumnElement[bool]:
    """After (or, not `later`, before) the place (at, id) in `(moved_at, id)` order."""
    if later:
        return or_(tasks.c.moved_at > at, and_(tasks.c.moved_at == at, tasks.c.id > id))
    return or_(tasks.c.moved_at < at, and_(tasks.c.moved_at == at, tasks.c.id < id))


def _order(backward: bool) -> list[Any]:
    if backward:
        return [tasks.c.moved_at.desc(), tasks.c.id.desc()]
    return [tasks.c.moved_at, tasks.c.id]


@dataclass(frozen=True)
class Shape:
    """What a statement of the inbox is built for (one statement per shape, built once)."""

    person: bool
    asked: str | None = None  # one verb's branches only: approve_handoff, decide_result, answer
    project: bool = False  # narrowed to one project
    after: bool = False
    before: bool = False
    backward: bool = False


def _ids(shape: Shape, paged: bool) -> Any:
    """The union of the branches' task ids; `paged`: each branch's first page after the
    cursor (and, with `before`, before the cursor `before`) only, its last page when
    `backward` (the page cannot hold more of any one branch)."""
    selects = []
    for branch in _branches(shape.person, shape.asked):
        stmt = select(tasks.c.id).where(branch)
        if shape.project:
            stmt = stmt.where(tasks.c.project == _PROJECT)
        if paged:
            if shape.after:
                stmt = stmt.where(_past(_AFTER_AT, _AFTER_ID, True))
            if shape.before:
                stmt = stmt.where(_past(_BEFORE_AT, _BEFORE_ID, False))
            stmt = select(stmt.order_by(*_order(shape.backward)).limit(_LIMIT).subquery().c.id)
        selects.append(stmt)
    return union(*selects)


@cache
def page_statement(shape: Shape, columns: tuple[str, ...] | None) -> Select[Any]:
    stmt, _ = select_tasks(columns)
    found = _ids(shape, True).subquery()
    stmt = stmt.add_columns(tasks.c.moved_at.label("inbox_moved_at"))
    return (
        stmt.where(tasks.c.id.in_(select(found.c.id)))
        .order_by(*_order(shape.backward))
        .limit(_LIMIT)
    )


@cache
def _count_statement(shape: Shape, limited: bool) -> Select[Any]:
    """`limited`: each branch's first `limit` ids only, so that counting stops; the count is
    then exact when below `limit`, else at least `limit`."""
    return select(func.count()).select_from(_ids(shape, paged=limited).subquery())


@cache
def projects_statement(person: bool, asked: str | None) -> Select[Any]:
    """Each project's count of the tasks waiting on the principal (asking `asked`, or any
    verb): the branches' rows, a task in two branches once, by project."""
    found = union(
        *(select(tasks.c.id, tasks.c.project).where(b) for b in _branches(person, asked))
    ).subquery()
    return select(found.c.project, func.count()).group_by(found.c.project).order_by(found.c.project)


class Inbox(Repository):
    __slots__ = ()

    async def page(
        self,
        principal: Principal,
        first: int,
        after: Waiting | None,
        columns: Columns = None,
        paging: Paging[Waiting] | None = None,
        asked: str | None = None,
        project: str | None = None,
    ) -> InboxPage:
        """Up to `first` tasks waiting on the principal, oldest waiting first (by `moved_at`,
        then id), after the place `after`; with `paging`, also before its `before`, and its
        last ones when it reads backward. `asked`: only what asks that verb; `project`: only
        that project's."""
        kept = None if columns is None else tuple(columns)
        before = None if paging is None else paging.before
        backward = paging is not None and paging.backward
        shape = Shape(
            principal.is_person, asked, project is not None, after is not None,
            before is not None, backward,
        )  # fmt: skip
        params: dict[str, Any] = {"who": principal.id, "limit": first + 1}
        if project is not None:
            params["project"] = project
        if after is not None:
            params["after_at"], params["after_id"] = after
        if before is not None:
            params["before_at"], params["before_id"] = before
        await self.tx.custom_plans()
        rows = await self.tx.rows(page_statement(shape, kept), params)
        _, task_of = select_tasks(kept)
        found = list(map(task_of, rows[:first]))
        places = {r.id: (r.inbox_moved_at or "", r.id) for r in rows[:first]}
        return InboxPage(Page(found[::-1] if backward else found, len(rows) > first), places)

    async def count(
        self,
        principal: Principal,
        limit: int | None = None,
        asked: str | None = None,
        project: str | None = None,
    ) -> int:
        """The tasks waiting on the principal (asking `asked`, in `project`, where given);
        with `limit`, at most that many."""
        shape = Shape(principal.is_person, asked, project is not None)
        params: dict[str, Any] = {"who": principal.id}
        if project is not None:
            params["project"] = project
        if limit is not None:
            params["limit"] = limit
        await self.tx.custom_plans()
        row = await self.tx.one(_count_statement(shape, limit is not None), params)
        found = int(row[0])
        return found if limit is None else min(found, limit)

    async def projects(
        self, principal: Principal, asked: str | None = None
    ) -> list[tuple[str, int]]:
        """Every project in which something waits on the principal (asking `asked`, where
        given), by name, with how many; the branches' indexes answer it, so it costs the
        principal's waiting tasks, never the table."""
        await self.tx.custom_plans()
        rows = await self.tx.rows(
            projects_statement(principal.is_person, asked), {"who": principal.id}
        )
        return [(str(r[0]), int(r[1])) for r in rows]
