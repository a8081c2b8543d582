"""The lease on a row of a durable reader's table (`leased_by`, `lease_until`): the process
holding it alone reads the log for that row, until the time it holds it to.

A process claims the rows whose lease is free or expired (on PostgreSQL with FOR UPDATE
SKIP LOCKED, so that two processes never claim the same one), renews its leases while it
holds them, and releases them when it is done; every change it makes to a leased row is
conditional on still holding its lease (`held`). Webhooks and remote A2A agents each keep
one `Leases` of their table.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Table, or_, select, update

from app.domain.clock import rfc3339
from app.storage.repositories.base import UnitOfWork


class Leases:
    """The leases on the rows of `table`, each row named by its `key` column; `claimable`,
    what else a row must be to be claimed (e.g. enabled)."""

    __slots__ = ("claimable", "key", "table")

    def __init__(self, table: Table, key: str, *claimable: ColumnElement[bool]) -> None:
        self.table = table
        self.key: ColumnElement[Any] = table.c[key]
        self.claimable = claimable

    def held(self, row_id: Any, holder: Any) -> tuple[ColumnElement[bool], ...]:
        """The condition of a statement on the row while `holder` holds its lease (values,
        or bound parameters)."""
        return self.key == row_id, self.table.c.leased_by == holder

    async def claim(
        self, tx: UnitOfWork, holder: str, now: datetime, until: datetime, limit: int
    ) -> list[str]:
        """Claim up to `limit` rows whose lease is free or expired, for `holder` until
        `until`; their keys."""
        c = self.table.c
        stmt = (
            select(self.key)
            .where(*self.claimable, or_(c.leased_by.is_(None), c.lease_until < rfc3339(now)))
            .order_by(self.key)
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
        ids = [row[0] for row in await tx.rows(stmt)]
        if ids:
            claimed = update(self.table).where(self.key.in_(ids))
            await tx.conn.execute(claimed.values(leased_by=holder, lease_until=rfc3339(until)))
        return ids

    async def renew(self, tx: UnitOfWork, holder: str, until: datetime) -> set[str]:
        """Extend every lease `holder` still holds; the keys of those rows."""
        held = self.table.c.leased_by == holder
        await tx.conn.execute(update(self.table).where(held).values(lease_until=rfc3339(until)))
        return {row[0] for row in await tx.rows(select(self.key).where(held))}

    async def release(self, tx: UnitOfWork, row_id: str, holder: str) -> None:
        """Free the row's lease, if `holder` holds it."""
        stmt = update(self.table).where(*self.held(row_id, holder))
        await tx.conn.execute(stmt.values(leased_by=None, lease_until=None))

    async def release_all(self, tx: UnitOfWork, holder: str) -> None:
        """Free every lease `holder` holds (the server stopping)."""
        held = self.table.c.leased_by == holder
        await tx.conn.execute(update(self.table).where(held).values(leased_by=None))
