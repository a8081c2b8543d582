"""What every repository shares: the unit of work it runs its statements in."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from sqlalchemy import Insert, Table, insert
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from app.storage.direct import direct

if TYPE_CHECKING:
    from app.storage.store import Tx


class Repository:
    __slots__ = ("tx",)

    def __init__(self, tx: Tx) -> None:
        self.tx = tx


async def insert_missing(tx: Tx, table: Table, values: dict[str, Any]) -> None:
    """Insert the row unless its key exists, even if a concurrent transaction inserts it
    first (a plain INSERT would then fail on the primary key)."""
    stmt = (sqlite_insert if tx.sqlite else pg_insert)(table).values(**values)
    await tx.conn.execute(stmt.on_conflict_do_nothing())


@functools.cache
def insert_of(table: Table) -> Insert:
    """The table's plain INSERT, built once and sent straight to the driver."""
    return direct(insert(table))
