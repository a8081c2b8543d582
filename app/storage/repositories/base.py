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


class Prefixed:
    """A table's columns under prefixed labels, to be selected beside another table's."""

    __slots__ = ("columns", "names")

    def __init__(self, table: Table, prefix: str) -> None:
        self.names = {f"{prefix}{c.name}": c.name for c in table.c}  # label -> column name
        self.columns = [table.c[name].label(label) for label, name in self.names.items()]

    def values(self, row: Any) -> dict[str, Any]:
        """The row's values of these columns, by the columns' own names."""
        mapped = row._mapping
        return {name: mapped[label] for label, name in self.names.items()}


async def insert_missing(tx: Tx, table: Table, values: dict[str, Any]) -> None:
    """Insert the row unless its key exists, even if a concurrent transaction inserts it
    first (a plain INSERT would then fail on the primary key)."""
    stmt = (sqlite_insert if tx.sqlite else pg_insert)(table).values(**values)
    await tx.conn.execute(stmt.on_conflict_do_nothing())


@functools.cache
def insert_of(table: Table) -> Insert:
    """The table's plain INSERT, built once and sent straight to the driver."""
    return direct(insert(table))
