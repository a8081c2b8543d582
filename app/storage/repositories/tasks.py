"""Tasks: load, save (optimistically, by version) and add, each with its events.

`save(task, version, events)` and `add(task, created_by, events)` are the one way a command
writes a task and appends what happened to it: storage chooses how. On PostgreSQL the task's
row, the rows written with it (`Tx.ride`), the events' seqs, their insert and their
announcement are one statement (the log's part is the events repository's, `Events.append`
`after` this repository's `Write`); elsewhere the row, then the append.

A task loaded in a transaction is remembered as its row was; its update then writes only
the columns that differ (JSON columns compared by their encoding, so a value changed in
place is seen too). The version in the WHERE clause still guards the whole row.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

import orjson
from sqlalchemy import JSON, BindParameter, Select, Table, bindparam, insert, select, update
from sqlalchemy.exc import IntegrityError

from app.domain.errors import ChangedConcurrently, Conflict
from app.domain.events import Event
from app.domain.task import Task
from app.storage import mapping
from app.storage.repositories import rules
from app.storage.repositories.base import Repository, Write, cast, insert_of
from app.storage.statements import once
from app.storage.tables import TaskLinkRow, TaskRow, table_of

tasks = table_of(TaskRow)
task_links = table_of(TaskLinkRow)

_JSON_COLUMNS = tuple(c.name for c in tasks.c if isinstance(c.type, JSON))
_INSERT = once(insert(tasks))
_INSERT_LINKS = insert(task_links)
_BY_ID = once(select(tasks).where(tasks.c.id == bindparam("task_id")))
_BY_ID_LOCKED = once(_BY_ID.with_for_update())
# the task with its requester's owner's result rules beside it, one row per rule (or one
# row with none): what return_result reads
_WITH_RESULT_RULES = once(
    select(tasks, *rules.RESULT.beside.columns)
    .select_from(
        tasks.outerjoin(rules.RESULT.table, rules.RESULT.table.c.owner == tasks.c.requester_owner)
    )
    .where(tasks.c.id == bindparam("task_id"))
)
# (only a command run under locks, after its optimistic tries, reads it: not built once)
_WITH_RESULT_RULES_LOCKED = _WITH_RESULT_RULES.with_for_update(of=tasks)
_UPDATE = once(
    update(tasks).where(
        tasks.c.id == bindparam("where_id"), tasks.c.version == bindparam("where_version")
    )
)
_IDEMPOTENT = select(tasks).where(
    tasks.c.created_by == bindparam("created_by"), tasks.c.idempotency_key == bindparam("key")
)
_CHILD_STATES = select(tasks.c.state).where(tasks.c.parent_task_id == bindparam("parent_id"))
_ANY = select(tasks.c.id).limit(1)


Columns = Sequence[str] | None  # the task columns to read; None: every one
_FIELDS = tuple(f.name for f in dataclasses.fields(Task) if f.name != "gate")
_FIELD_SET = frozenset(_FIELDS)


def select_tasks(columns: Columns, *needed: str) -> tuple[Select[Any], Any]:
    """The statement reading these task columns (with `id` and `needed`), and the function
    making a task of each of its rows: whole, or with only those columns (the rest None)."""
    if columns is None:
        return select(tasks), mapping.task_from_row
    names = tuple(dict.fromkeys(("id", *needed, *columns)))
    fields = [n for n in names if n in _FIELD_SET]
    at = [names.index(n) for n in fields]
    rest: dict[str, Any] = {n: None for n in _FIELDS if n not in names}

    def partial(row: Any) -> Task:
        return Task(**rest, **{n: row[i] for n, i in zip(fields, at, strict=True)})

    return select(*(tasks.c[n] for n in names)), partial


class Tasks(Repository):
    __slots__ = ("_loaded",)

    def __init__(self, tx: Any) -> None:
        super().__init__(tx)
        self._loaded: dict[str, dict[str, Any]] = {}  # task id -> its row as loaded, kept

    async def get(
        self, task_id: str, for_update: bool = False, with_result_rules: bool = False
    ) -> Task | None:
        """The task (locked with `for_update`). `with_result_rules`: its requester's owner's
        result rules are read by the same statement, and `tx.result_rules.of` answers them
        for the rest of the transaction."""
        if with_result_rules:
            return await self._with_result_rules(task_id, for_update)
        locked = (for_update or self.tx.locking) and not self.tx.sqlite
        stmt = _BY_ID_LOCKED if locked else _BY_ID
        row = await self.tx.one(stmt, {"task_id": task_id})
        return None if row is None else self._load(row)

    async def _with_result_rules(self, task_id: str, for_update: bool) -> Task | None:
        locked = (for_update or self.tx.locking) and not self.tx.sqlite
        stmt = _WITH_RESULT_RULES_LOCKED if locked else _WITH_RESULT_RULES
        rows = await self.tx.rows(stmt, {"task_id": task_id})
        if not rows:
            return None
        task = self._load(rows[0])
        self.tx.result_rules.known_in(task.requester_owner, rows)
        return task

    def _load(self, row: Any) -> Task:
        task = mapping.task_from_row(row)
        self._loaded[task.id] = _kept(mapping.task_to_row(task))
        return task

    async def get_many(self, ids: list[str]) -> list[Task]:
        if not ids:
            return []
        rows = await self.tx.rows(select(tasks).where(tasks.c.id.in_(ids)))
        return [mapping.task_from_row(r) for r in rows]

    async def insert(self, task: Task, created_by: str) -> None:
        """Conflict when the creator already used the task's idempotency key (a concurrent
        creation committed first); the transaction is then spoilt and must be rolled back."""
        try:
            await self.tx.conn.execute(_INSERT, mapping.task_to_row(task, created_by))
        except IntegrityError as error:
            refused = refused_insert(task)
            if refused is None:
                raise
            raise refused from error
        links = links_of(task)
        if links:
            await self.tx.conn.execute(_INSERT_LINKS, links)

    async def save(self, task: Task, version: int, events: Sequence[Event] = ()) -> None:
        """Write the task (it was loaded at `version`) and the rows written with it
        (`Tx.ride`), and append its `events` to the log; `ChangedConcurrently`, with nothing
        written, unless the stored task is still at `version`. On PostgreSQL, with events, one
        statement."""
        if self.tx.sqlite or not events:
            await self.update(task, version)
            await self._ridden()
            await self.tx.events.append(events)
            return
        columns = self.changes(task)
        params: dict[str, Any] = {f"t_{name}": value for name, value in columns.items()}
        params.update(where_id=task.id, where_version=version)
        sql, binds = _moved(tuple(columns), self._riders(params))
        if await self.tx.events.append(events, Write(sql, binds, params)) is None:
            raise changed_concurrently(task.id)

    async def add(self, task: Task, created_by: str, events: Sequence[Event] = ()) -> None:
        """Insert a new task, its steps in the task graph and the rows written with it, and
        append its `events`; Conflict when its creator's idempotency key is taken. On
        PostgreSQL, with events, one statement."""
        if self.tx.sqlite or not events:
            await self.insert(task, created_by)
            await self._ridden()
            await self.tx.events.append(events)
            return
        for link in links_of(task):  # its steps in the task's graph go with it
            self.tx.ride(task_links, link)
        columns = mapping.task_to_row(task, created_by)
        params = {f"t_{name}": value for name, value in columns.items()}
        sql, binds = _created(tuple(columns), self._riders(params))
        try:
            await self.tx.events.append(events, Write(sql, binds, params))
        except IntegrityError as error:
            refused = refused_insert(task)
            if refused is None:
                raise
            raise refused from error

    def _riders(self, params: dict[str, Any]) -> tuple[tuple[Table, tuple[str, ...]], ...]:
        """The rows to write with the task, their values put in `params`; their shape."""
        riders = self.tx.take_riders()
        for j, (_, row) in enumerate(riders):
            params.update({f"r{j}_{name}": value for name, value in row.items()})
        return tuple((table, tuple(row)) for table, row in riders)

    async def _ridden(self) -> None:
        """The rows to write with the task, after it (its own statements)."""
        for table, row in self.tx.take_riders():
            await self.tx.conn.execute(insert_of(table), row)

    async def update(self, task: Task, old_version: int) -> None:
        """Conflict unless the stored task is still at `old_version`."""
        params = {**self.changes(task), "where_id": task.id, "where_version": old_version}
        if (await self.tx.conn.execute(_UPDATE, params)).rowcount != 1:
            raise changed_concurrently(task.id)

    def changes(self, task: Task) -> dict[str, Any]:
        """The columns of the task's row to write (those that differ from the row as loaded
        in this transaction, or all), taken as written from now on."""
        row = mapping.task_to_row(task)
        del row["id"]
        loaded = self._loaded.get(task.id)
        if loaded is not None:
            kept = _kept(row)
            row = {name: value for name, value in row.items() if kept[name] != loaded[name]}
            loaded.update(kept)
        return row

    async def find_idempotent(self, created_by: str, key: str) -> Task | None:
        row = await self.tx.one(_IDEMPOTENT, {"created_by": created_by, "key": key})
        return mapping.task_from_row(row) if row else None

    async def child_states(self, parent_id: str) -> list[str]:
        return [r[0] for r in await self.tx.rows(_CHILD_STATES, {"parent_id": parent_id})]

    async def any(self) -> bool:
        """Whether the database holds a task at all."""
        return await self.tx.one(_ANY, {}) is not None


Riders = tuple[tuple[Table, tuple[str, ...]], ...]  # the rows written with a task: their shape


@functools.cache
def _moved(columns: tuple[str, ...], riders: Riders) -> tuple[str, tuple[BindParameter[Any], ...]]:
    """PostgreSQL: the task's update of its changed `columns`, if it is still at the version
    loaded (no row comes back on a conflict), and the rows written with it: `Write`'s SQL."""
    sets = ", ".join(f"{name} = :t_{name}" for name in columns) or "version = version"
    head = (
        f"UPDATE tasks SET {sets}  WHERE id = :where_id AND version = :where_version RETURNING id"
    )
    binds = [bindparam(f"t_{name}", type_=tasks.c[name].type) for name in columns]
    binds += [bindparam("where_id", type_=tasks.c.id.type)]
    binds += [bindparam("where_version", type_=tasks.c.version.type)]
    return _with_riders(head, binds, riders)


@functools.cache
def _created(
    columns: tuple[str, ...], riders: Riders
) -> tuple[str, tuple[BindParameter[Any], ...]]:
    """PostgreSQL: the new task's insert, and the rows written with it: `Write`'s SQL."""
    given = ", ".join(f":t_{name}" for name in columns)
    head = f"INSERT INTO tasks ({', '.join(columns)}) VALUES ({given}) RETURNING id"
    binds = [bindparam(f"t_{name}", type_=tasks.c[name].type) for name in columns]
    return _with_riders(head, binds, riders)


def _with_riders(
    head: str, binds: list[BindParameter[Any]], riders: Riders
) -> tuple[str, tuple[BindParameter[Any], ...]]:
    ridden = "".join(
        f", r{j} AS (INSERT INTO {table.name} ({', '.join(cols)})"
        f"  SELECT {', '.join(cast(table, c, f'r{j}_{c}') for c in cols)} FROM moved)"
        for j, (table, cols) in enumerate(riders)
    )
    binds += [
        bindparam(f"r{j}_{c}", type_=table.c[c].type)
        for j, (table, cols) in enumerate(riders)
        for c in cols
    ]
    return f"moved AS ({head}){ridden}", tuple(binds)


def refused_insert(task: Task) -> Conflict | None:
    """What a new task's insert refused by a constraint means: its creator's idempotency
    key is taken (a concurrent creation committed first); None when it has no key."""
    if task.idempotency_key is None:
        return None
    return Conflict(f"idempotency key {task.idempotency_key!r} is already in use")


def changed_concurrently(task_id: str) -> ChangedConcurrently:
    return ChangedConcurrently(f"task {task_id} changed concurrently; read it again and retry")


def _kept(row: dict[str, Any]) -> dict[str, Any]:
    """A row as remembered: its JSON columns as their encoding, the rest as they are."""
    kept = dict(row)
    for name in _JSON_COLUMNS:
        value = kept.get(name)
        if value is not None:
            kept[name] = orjson.dumps(value)
    return kept


def links_of(task: Task) -> list[dict[str, str]]:
    """The task's steps in `task_links`: to and from its parent, to and from each task its
    packet depends on."""
    links = []
    if task.parent_task_id:
        links.append({"src": task.id, "way": "up", "dst": task.parent_task_id})
        links.append({"src": task.parent_task_id, "way": "down", "dst": task.id})
    for named in dict.fromkeys(task.packet.get("depends_on") or []):
        links.append({"src": task.id, "way": "out", "dst": named})
        links.append({"src": named, "way": "in", "dst": task.id})
    return links
