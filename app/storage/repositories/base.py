"""What every repository shares: the unit of work it runs its statements in.

A repository knows its transaction only as `UnitOfWork`, what it uses of one; `Tx`
(the store's transaction) is that, and imports the repositories, not the other way round.
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from sqlalchemy import BindParameter, Insert, Table, insert
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.postgresql.asyncpg import PGDialect_asyncpg
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from app.storage.statements import once

if TYPE_CHECKING:
    from app.domain.events import Event


@dataclass
class SafeBound:
    """The highest safe bound this process has proven (PostgreSQL); it only grows. With each
    bound proven on the primary, the primary's WAL insert position at the proof: every
    event at or below the bound had committed before it, so a standby that has replayed
    that position holds them all (`replayed`: a read replica's bound, `Replica`)."""

    highest: int = 0
    proofs: deque[tuple[int, int]] = field(default_factory=lambda: deque(maxlen=PROOFS))

    def proven(self, bound: int, position: int | None = None) -> int:
        self.highest = max(self.highest, bound)
        if position is not None and (not self.proofs or self.proofs[-1][0] < self.highest):
            self.proofs.append((self.highest, position))
        return self.highest

    def replayed(self, position: int) -> int:
        """The highest bound proven at or before WAL `position` (0 if none is known): on a
        standby that has replayed `position`, no event at or below it can still appear."""
        for bound, at in reversed(self.proofs):
            if at <= position:
                return bound
        return 0


PROOFS = 1024  # bounds remembered with their WAL positions (a standby may lag that many)


@dataclass(frozen=True, slots=True)
class Write:
    """A write of another table that the log's append follows in one statement (PostgreSQL,
    `Events.append`'s `after`): `sql`, its common table expressions, the first named `moved`
    and returning a row only when it wrote (the rest may read it: rows written with it);
    `binds`, their parameters, typed; `params`, their values. Built by the repository of that
    table (tasks.py), so the log's repository knows nothing of it."""

    sql: str
    binds: tuple[BindParameter[Any], ...]
    params: dict[str, Any]


class EventWrites(Protocol):
    """What another repository writes through `tx.events` (`Events`)."""

    async def append(self, new: Sequence[Event], after: Write | None = None) -> Any: ...


class ReadAhead(Protocol):
    """Rules read by another repository's statement (`Rules`)."""

    def known_in(self, owner: str, rows: Sequence[Any]) -> None: ...


class ProjectsReadAhead(Protocol):
    """Whether a project exists, read by another repository's statement."""

    def known(self, project: str, founded: bool) -> None: ...


class TxConnection(Protocol):
    """Where a transaction's statements go: SQLAlchemy's `AsyncConnection`, or a connection
    of the store's awaited the same way."""

    async def execute(self, statement: Any, parameters: Any = None) -> Any: ...


class UnitOfWork(Protocol):
    """What a repository uses of its transaction."""

    conn: TxConnection
    sqlite: bool
    safe_bound: SafeBound
    announces: bool
    event_bound: int | None
    replayed: int | None  # a read replica's transaction: the replay position at its start
    snapshot: int | None  # one snapshot's: the safe bound proven before it was taken
    head: tuple[int, list[int] | None] | None
    last_seq: int
    members_changed: bool
    locking: bool
    read_ahead: dict[tuple[str, str], Any]

    async def rows(self, stmt: Any, params: dict[str, Any] | None = None) -> list[Any]: ...

    async def one(self, stmt: Any, params: dict[str, Any] | None = None) -> Any: ...

    async def custom_plans(self) -> None: ...

    def ride(self, table: Table, row: dict[str, Any]) -> None: ...

    def take_riders(self) -> list[tuple[Table, dict[str, Any]]]: ...

    @property
    def events(self) -> EventWrites: ...

    @property
    def projects(self) -> ProjectsReadAhead: ...

    @property
    def gate_rules(self) -> ReadAhead: ...

    @property
    def result_rules(self) -> ReadAhead: ...


class Repository:
    __slots__ = ("tx",)

    def __init__(self, tx: UnitOfWork) -> None:
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


async def insert_missing(tx: UnitOfWork, table: Table, values: dict[str, Any]) -> None:
    """Insert the row unless its key exists, even if a concurrent transaction inserts it
    first (a plain INSERT would then fail on the primary key)."""
    stmt = (sqlite_insert if tx.sqlite else pg_insert)(table).values(**values)
    await tx.conn.execute(stmt.on_conflict_do_nothing())


@functools.cache
def insert_of(table: Table) -> Insert:
    """The table's plain INSERT, built once."""
    return once(insert(table))


_PG = PGDialect_asyncpg()  # type: ignore[no-untyped-call]


def cast(table: Table, column: str, param: str) -> str:
    """PostgreSQL: a parameter inside VALUES or a SELECT list, cast to its column's type
    (nothing else types it there)."""
    kind = table.c[column].type.dialect_impl(_PG).compile(dialect=_PG)
    return f"CAST(:{param} AS {kind})"
