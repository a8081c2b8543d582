"""Tasks: load, insert and update (optimistically, by version).

A task loaded in a transaction is remembered as its row was; its update then writes only
the columns that differ (JSON columns compared by their encoding, so a value changed in
place is seen too). The version in the WHERE clause still guards the whole row.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import orjson
from sqlalchemy import JSON, Select, bindparam, insert, select, update
from sqlalchemy.exc import IntegrityError

from app.domain.errors import ChangedConcurrently, Conflict
from app.domain.task import Task
from app.storage import mapping
from app.storage.fast.direct import direct
from app.storage.repositories import rules
from app.storage.repositories.base import Repository
from app.storage.tables import TaskLinkRow, TaskRow, table_of

tasks = table_of(TaskRow)
task_links = table_of(TaskLinkRow)

_JSON_COLUMNS = tuple(c.name for c in tasks.c if isinstance(c.type, JSON))
_INSERT = direct(insert(tasks))
_INSERT_LINKS = insert(task_links)
_BY_ID = direct(select(tasks).where(tasks.c.id == bindparam("task_id")))
_BY_ID_LOCKED = direct(_BY_ID.with_for_update())
# the task with its requester's owner's result rules beside it, one row per rule (or one
# row with none): what return_result reads
_WITH_RESULT_RULES = direct(
    select(tasks, *rules.RESULT.beside.columns)
    .select_from(
        tasks.outerjoin(rules.RESULT.table, rules.RESULT.table.c.owner == tasks.c.requester_owner)
    )
    .where(tasks.c.id == bindparam("task_id"))
)
_WITH_RESULT_RULES_LOCKED = direct(_WITH_RESULT_RULES.with_for_update(of=tasks))
_UPDATE = direct(
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
        stmt = _BY_ID_LOCKED if for_update and not self.tx.sqlite else _BY_ID
        row = await self.tx.one(stmt, {"task_id": task_id})
        return None if row is None else self._load(row)

    async def _with_result_rules(self, task_id: str, for_update: bool) -> Task | None:
        locked = for_update and not self.tx.sqlite
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
