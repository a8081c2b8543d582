"""One transaction's view of the database (`Store.write()` and `Store.read()` yield one).

Its repositories (`tx.tasks`, `tx.events`, ...) share its connection; each knows it only as
a `UnitOfWork` (the repositories' protocol). What a statement read ahead for a
repository is kept here for the rest of the transaction (`read_ahead`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import cached_property
from typing import Any

from sqlalchemy import Table, text

from app.domain.gate import GateRule
from app.domain.policy import ResultRule
from app.storage.repositories.approvals import Approvals
from app.storage.repositories.base import SafeBound, TxConnection
from app.storage.repositories.erasures import Erasures
from app.storage.repositories.events import Events
from app.storage.repositories.inbox import Inbox
from app.storage.repositories.principals import Principals
from app.storage.repositories.projects import Projects
from app.storage.repositories.records import Checkpoints, Results
from app.storage.repositories.remote_agents import RemoteAgents
from app.storage.repositories.rules import GATE, RESULT, Rules
from app.storage.repositories.schedules import Schedules
from app.storage.repositories.tasks import Tasks
from app.storage.repositories.tokens import Tokens
from app.storage.repositories.webhooks import Webhooks

_CUSTOM_PLANS = text("SET LOCAL plan_cache_mode = force_custom_plan")


class Tx:
    """One transaction's view of the database: its repositories share its connection."""

    def __init__(
        self,
        conn: TxConnection,
        sqlite: bool,
        safe_bound: SafeBound | None = None,
        announces: bool = True,
    ) -> None:
        self.conn = conn
        self.sqlite = sqlite
        self.safe_bound = safe_bound if safe_bound is not None else SafeBound()
        self.announces = announces  # PostgreSQL: its events' statement sends pg_notify
        self.event_bound: int | None = None  # the log's safe bound, once read (PostgreSQL)
        # PostgreSQL, a query's shared read in one snapshot (REPEATABLE READ): the safe bound
        # proven before its snapshot was taken (every event at or below it is in it)
        self.snapshot: int | None = None
        # `Events.head`, once read; in a snapshot, its bound as soon as that is (None: what
        # the snapshot holds past it not read yet)
        self.head: tuple[int, list[int] | None] | None = None
        # a read replica's transaction: the standby's replay position at its start
        self.replayed: int | None = None
        self.last_seq = 0  # the last seq this transaction appended; 0 for none
        self.members_changed = False  # a project's members changed (Projects sets it)
        # a command run under locks (`Store.command`, after its optimistic tries): every
        # task it loads is locked
        self.locking = False
        # what a statement read ahead for a repository, by (what, key): asked for later in
        # the same transaction, it is not read again
        self.read_ahead: dict[tuple[str, str], Any] = {}
        self._savepoints = 0  # savepoints made: each one's name is new
        self._riders: list[tuple[Table, dict[str, Any]]] = []
        self._custom_plans = False

    @property
    def unsure(self) -> bool:
        """A write that commits by itself (a connection the store was handed that runs a
        block's one write without BEGIN, `unsure` when it failed after it was sent) failed:
        whether it committed is unknown."""
        return bool(getattr(self.conn, "unsure", False))

    async def begin(self) -> None:
        """More than one write follows: on a connection that begins its transaction when
        told (`transactional`, a block run `alone` on the fast paths), it begins now;
        elsewhere it is already open."""
        if hasattr(self.conn, "transactional"):
            self.conn.transactional = True

    async def custom_plans(self) -> None:
        """PostgreSQL: the rest of this transaction plans each statement for its parameters.
        A prepared statement run a sixth time on a connection may get a generic plan, made
        without its parameters; for a replay's page (a range of seqs, joined with the tasks)
        that plan can read far more than the page (docs/performance.md)."""
        if not self.sqlite and not self._custom_plans:
            self._custom_plans = True
            await self.conn.execute(_CUSTOM_PLANS)

    def ride(self, table: Table, row: dict[str, Any]) -> None:
        """A row to insert with the task's next write (`Events.append`)."""
        self._riders.append((table, row))

    def take_riders(self) -> list[tuple[Table, dict[str, Any]]]:
        riders, self._riders = self._riders, []
        return riders

    async def rows(self, stmt: Any, params: dict[str, Any] | None = None) -> list[Any]:
        return list((await self.conn.execute(stmt, params)).all())

    @asynccontextmanager
    async def savepoint(self) -> AsyncIterator[None]:
        """What the block writes is undone when it raises, and the transaction goes on (on
        PostgreSQL too, where a failed statement aborts the transaction up to the last
        savepoint). Plain SQL statements: the same on every way a Tx is driven."""
        self._savepoints += 1
        name = f"sp_{self._savepoints}"
        last_seq = self.last_seq
        await self.conn.execute(text(f"SAVEPOINT {name}"))
        try:
            yield
        except Exception:  # (a cancellation ends the whole transaction instead)
            await self.conn.execute(text(f"ROLLBACK TO SAVEPOINT {name}"))
            await self.conn.execute(text(f"RELEASE SAVEPOINT {name}"))
            self.last_seq = last_seq  # the events appended inside are gone
            raise
        await self.conn.execute(text(f"RELEASE SAVEPOINT {name}"))

    async def one(self, stmt: Any, params: dict[str, Any] | None = None) -> Any:
        return (await self.conn.execute(stmt, params)).first()

    @cached_property
    def tasks(self) -> Tasks:
        return Tasks(self)

    @cached_property
    def events(self) -> Events:
        return Events(self)

    @cached_property
    def inbox(self) -> Inbox:
        return Inbox(self)

    @cached_property
    def principals(self) -> Principals:
        return Principals(self)

    @cached_property
    def tokens(self) -> Tokens:
        return Tokens(self)

    @cached_property
    def gate_rules(self) -> Rules[GateRule]:
        return Rules(self, GATE)

    @cached_property
    def result_rules(self) -> Rules[ResultRule]:
        return Rules(self, RESULT)

    @cached_property
    def approvals(self) -> Approvals:
        return Approvals(self)

    @cached_property
    def projects(self) -> Projects:
        return Projects(self)

    @cached_property
    def checkpoints(self) -> Checkpoints:
        return Checkpoints(self)

    @cached_property
    def results(self) -> Results:
        return Results(self)

    @cached_property
    def schedules(self) -> Schedules:
        return Schedules(self)

    @cached_property
    def erasures(self) -> Erasures:
        return Erasures(self)

    @cached_property
    def webhooks(self) -> Webhooks:
        return Webhooks(self)

    @cached_property
    def remote_agents(self) -> RemoteAgents:
        return RemoteAgents(self)
