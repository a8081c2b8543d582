"""What an assignee hands in: checkpoints and result revisions."""

from __future__ import annotations

from typing import Any

from sqlalchemy import bindparam, insert, select, update

from app.storage.repositories.base import Repository
from app.storage.statements import once
from app.storage.tables import CheckpointRow, ResultRow, table_of

checkpoints = table_of(CheckpointRow)
results = table_of(ResultRow)

_INSERT_CHECKPOINT = once(insert(checkpoints))
_SUBMISSION = once(
    select(results).where(
        results.c.task_id == bindparam("task_id"),
        results.c.submission_id == bindparam("submission_id"),
    )
)
_SET_RESULT = update(results).where(
    results.c.task_id == bindparam("where_task_id"),
    results.c.revision == bindparam("where_revision"),
)
_EARLIER_RESULTS = select(results.c.revision, results.c.body).where(
    results.c.task_id == bindparam("task_id"),
    results.c.revision < bindparam("below"),
    results.c.status != "superseded",
)


class Checkpoints(Repository):
    __slots__ = ()

    async def insert(self, row: dict[str, Any]) -> None:
        await self.tx.conn.execute(_INSERT_CHECKPOINT, row)

    async def hashes(self, ids: list[str]) -> dict[str, tuple[str, str]]:
        """checkpoint id -> (task id, sha256)"""
        if not ids:
            return {}
        stmt = select(checkpoints.c.id, checkpoints.c.task_id, checkpoints.c.sha256)
        rows = await self.tx.rows(stmt.where(checkpoints.c.id.in_(ids)))
        return {r[0]: (r[1], r[2]) for r in rows}


class Results(Repository):
    __slots__ = ()

    def insert_with_move(self, row: dict[str, Any]) -> None:
        """The result revision, written with the task's move (`Tx.ride`): on PostgreSQL in
        the move's one statement, and only if the move is."""
        self.tx.ride(results, row)

    async def find_submission(self, task_id: str, submission_id: str) -> Any:
        """The stored row of the task's result with this submission id, if any."""
        return await self.tx.one(_SUBMISSION, {"task_id": task_id, "submission_id": submission_id})

    async def set(self, task_id: str, revision: int, status: str, body: dict[str, Any]) -> None:
        params = {
            "where_task_id": task_id,
            "where_revision": revision,
            "status": status,
            "body": body,
        }
        await self.tx.conn.execute(_SET_RESULT, params)

    async def supersede(self, task_id: str, below_revision: int) -> None:
        """Mark every earlier revision superseded, in its status column and its body."""
        params = {"task_id": task_id, "below": below_revision}
        for revision, body in await self.tx.rows(_EARLIER_RESULTS, params):
            await self.set(task_id, revision, "superseded", {**body, "status": "superseded"})
