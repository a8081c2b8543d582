"""Approvals: a handoff held by its assignee's owner's gate, pending until decided."""

from __future__ import annotations

from sqlalchemy import bindparam, insert, update

from app.storage.repositories.base import Repository
from app.storage.tables import ApprovalRow, table_of

approvals = table_of(ApprovalRow)

_INSERT = insert(approvals)
_CLOSE = update(approvals).where(
    approvals.c.id == bindparam("where_id"), approvals.c.status == "pending"
)


class Approvals(Repository):
    __slots__ = ()

    async def insert(self, approval_id: str, task_id: str, owner: str, at: str) -> None:
        row = {
            "id": approval_id,
            "task_id": task_id,
            "owner": owner,
            "status": "pending",
            "created_at": at,
        }
        await self.tx.conn.execute(_INSERT, row)

    async def close(self, approval_id: str, status: str, reason: str | None, at: str) -> None:
        """Decide a pending approval (approved, denied, cancelled); a decided one stays."""
        params = {"where_id": approval_id, "status": status, "reason": reason, "decided_at": at}
        await self.tx.conn.execute(_CLOSE, params)
