"""Erased principals, and what erasing one reads and rewrites: the open work that refuses it,
and the task rows and result revisions whose references to it gain `erased: true`.

The event log is never touched here: events keep the task objects they recorded.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, bindparam, insert, or_, select, update

from app.domain.erasure import OpenTask
from app.domain.table import table
from app.storage import mapping
from app.storage.repositories.base import Repository
from app.storage.repositories.records import results
from app.storage.repositories.tasks import tasks
from app.storage.tables import ErasedPrincipalRow, table_of

erased_principals = table_of(ErasedPrincipalRow)

_INSERT = insert(erased_principals)
_BY_ID = select(erased_principals).where(erased_principals.c.id == bindparam("id"))
_SET_REFERENCES = (
    update(tasks)
    .where(tasks.c.id == bindparam("where_id"))
    .values(requested_by=bindparam("requested_by"), result=bindparam("result"))
)
_SET_RESULT_BODY = (
    update(results).where(results.c.id == bindparam("where_id")).values(body=bindparam("body"))
)


@dataclass(frozen=True)
class ErasedPrincipal:
    id: str
    kind: str  # person | agent
    erased_at: str


class Erasures(Repository):
    __slots__ = ()

    async def get(self, principal_id: str) -> ErasedPrincipal | None:
        row = await self.tx.one(_BY_ID, {"id": principal_id})
        return ErasedPrincipal(row.id, row.kind, row.erased_at) if row else None

    async def contains(self, principal_id: str) -> bool:
        return await self.get(principal_id) is not None

    async def among(self, principal_ids: Iterable[str]) -> set[str]:
        """Those of the ids that are erased."""
        wanted = sorted(set(principal_ids))
        if not wanted:
            return set()
        stmt = select(erased_principals.c.id).where(erased_principals.c.id.in_(wanted))
        return {row[0] for row in await self.tx.rows(stmt)}

    async def record(self, erased: Sequence[tuple[str, str]], at: str) -> None:
        """Record the (kind, id) pairs as erased at `at`."""
        if erased:
            rows = [{"id": i, "kind": kind, "erased_at": at} for kind, i in erased]
            await self.tx.conn.execute(_INSERT, rows)

    async def open_work(self, principal_ids: Sequence[str], owner: str | None) -> list[OpenTask]:
        """(id, state, assignee) of the tasks not ended assigned to one of the ids or, with
        `owner`, to any agent of that owner; by id."""
        assigned: ColumnElement[bool] = tasks.c.assignee.in_(list(principal_ids))
        if owner is not None:
            assigned = or_(assigned, tasks.c.assignee_owner == owner)
        stmt = (
            select(tasks.c.id, tasks.c.state, tasks.c.assignee)
            .where(assigned, tasks.c.state.not_in(sorted(table().terminal)))
            .order_by(tasks.c.id)
        )
        return [(row[0], row[1], row[2]) for row in await self.tx.rows(stmt)]

    async def referring_tasks(self, principal_ids: Sequence[str], owner: str | None) -> list[Any]:
        """The tasks, locked for this transaction, that may name one of the principals in
        `requested_by` or (with `owner`, the person whose result decisions they are) in
        `result.decided_by`: those requested by one of them, or whose requester's owner is
        `owner`."""
        named: ColumnElement[bool] = tasks.c.requested_by_id.in_(list(principal_ids))
        if owner is not None:
            named = or_(named, tasks.c.requester_owner == owner)
        stmt = select(tasks).where(named).order_by(tasks.c.id)
        if not self.tx.sqlite:
            stmt = stmt.with_for_update()
        return [mapping.task_from_row(row) for row in await self.tx.rows(stmt)]

    async def set_references(self, task_id: str, requested_by: Any, result: Any) -> None:
        """Rewrite a task's `requested_by` and `result` in place: not a move, so neither
        its version nor its updated_at changes, and no event is recorded."""
        params = {"where_id": task_id, "requested_by": requested_by, "result": result}
        await self.tx.conn.execute(_SET_REFERENCES, params)

    async def result_bodies(self, task_ids: Sequence[str]) -> list[tuple[str, dict[str, Any]]]:
        """(result row id, body) of every result revision of the tasks."""
        if not task_ids:
            return []
        stmt = select(results.c.id, results.c.body).where(results.c.task_id.in_(list(task_ids)))
        return [(row[0], row[1]) for row in await self.tx.rows(stmt.order_by(results.c.id))]

    async def set_result_body(self, result_id: str, body: dict[str, Any]) -> None:
        await self.tx.conn.execute(_SET_RESULT_BODY, {"where_id": result_id, "body": body})
