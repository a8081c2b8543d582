"""SQLite: the hot statements sent straight to the driver (app/storage/fast/direct.py) store and
answer exactly what SQLAlchemy's execution of the same statements does, raise SQLAlchemy's
errors, and are still seen by whatever listens to the engine's statements."""

from __future__ import annotations

import copy
import itertools
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from factory import ALICE, CHECKPOINT, CODER, PLANNER, call, drive, give, packet, result
from server import BACKEND
from sqlalchemy import event
from sqlalchemy.engine import make_url

from app.domain.errors import Conflict
from app.service import auth, creation, verbs
from app.service.admin import provision_token
from app.service.inputs import RequestCapabilityInput
from app.storage import statements
from app.storage.fast import direct
from app.storage.fast.loop import OnLoop
from app.storage.migrate import upgrade
from app.storage.repositories import events, projects, tasks
from app.storage.store import Store

pytestmark = [
    pytest.mark.cast,
    pytest.mark.skipif(BACKEND != "sqlite", reason="the driver path is SQLite's alone"),
]


def _file(store: Store) -> str:
    database = make_url(store.url).database
    assert database
    return database


def _dump(path: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows as stored: each value beside its SQLite type (NULL is not 'null')."""
    with sqlite3.connect(path) as db:
        tables = [
            r[0]
            for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        ]
        dumped = {}
        for table in tables:
            columns = [r[1] for r in db.execute(f"PRAGMA table_info({table})")]
            picked = ", ".join(f"typeof({c}), {c}" for c in columns)
            dumped[table] = db.execute(f"SELECT {picked} FROM {table} ORDER BY rowid").fetchall()
    return dumped


def _answer(result: Any) -> Any:
    """What a direct result holds: its rows (values and keys), or its row count."""
    if result.returns_rows:
        return [(tuple(row), row._mapping) for row in result.all()]
    return result.rowcount


@pytest.mark.fast_path
async def test_a_lifecycle_through_the_driver_stores_and_answers_as_sqlalchemy_does(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    replica = tmp_path / "replica.db"
    with sqlite3.connect(_file(store)) as source, sqlite3.connect(replica) as target:
        source.backup(target)
    calls: list[tuple[Any, Any, Any, Any]] = []  # transaction, statement, params, answer
    executing = OnLoop.execute

    async def recorded(self: Any, statement: Any, parameters: Any = None) -> Any:
        params = copy.deepcopy(parameters)
        answer = await executing(self, statement, parameters)
        sent = _answer(answer) if isinstance(answer, direct.Result) else None
        calls.append((self, statement, params, sent))  # one connection: one transaction
        return answer

    monkeypatch.setattr(OnLoop, "execute", recorded)
    parent = await give(store, by=PLANNER, project="work")
    task = await give(store, by=PLANNER, project="work", parent_task_id=parent.id)
    for verb in ("accept_task", "start_task"):
        parent = await call(store, verb, CODER, parent.id)
        task = await call(store, verb, CODER, task.id)
    parent = await call(store, "wait_on", CODER, parent.id, on="agent")
    task = await verbs.save_checkpoint(store, CODER, task.id, dict(CHECKPOINT))
    task = await verbs.return_result(store, CODER, task.id, result(submission_id="s-1"))
    again = await verbs.return_result(store, CODER, task.id, result(submission_id="s-1"))
    assert again.version == task.version  # the same submission: found, not stored again
    await give(store, by=ALICE, project="fresh", idempotency_key="k-1")
    await give(store, by=ALICE, project="fresh", idempotency_key="k-1")
    wanted = {"kind": "repo", "name": "prickle"}  # the gate's rules read on their own
    inp = RequestCapabilityInput(project="work", packet=packet(), capability=wanted)
    await creation.request_capability(store, PLANNER, inp)
    await call(store, "reroute", PLANNER, (await drive(store, "returned")).id)
    made = await provision_token(store, CODER)  # its row read as a request proves it
    await auth.credential_for(store, f"Bearer {made.token}")
    monkeypatch.undo()
    sent = {id(c[1]) for c in calls if c[3] is not None}
    # every hot statement but a person's, and those only PostgreSQL runs
    postgres_only = {id(s) for s in (tasks._BY_ID_LOCKED, tasks._WITH_RESULT_RULES_LOCKED)}
    postgres_only |= {id(events._draw(True)), id(events._draw(False)), id(events._ANNOUNCE)}
    assert sent >= set(statements.ONCE) - {id(projects._ROLE)} - postgres_only

    replay = Store(f"sqlite+aiosqlite:///{replica}")
    seen: list[str] = []
    event.listen(replay.statements_engine, "before_cursor_execute", lambda *a: seen.append(a[2]))
    try:
        await upgrade(replay.engine)
        for _, transaction in itertools.groupby(calls, key=lambda c: c[0]):
            async with replay.write() as tx:
                for _, statement, params, answer in transaction:
                    through = await tx.conn.execute(statement, params)  # SQLAlchemy's path
                    assert not isinstance(through, direct.Result)
                    if answer is not None:
                        assert _answer(through) == answer, statement
    finally:
        await replay.close()
    assert len(seen) >= len(calls)
    assert _dump(str(replica)) == _dump(_file(store))


async def test_a_key_already_in_use_is_a_conflict_through_the_driver(store: Store) -> None:
    task = await give(store, by=ALICE, project="keys", idempotency_key="once")
    with pytest.raises(Conflict, match="idempotency key 'once' is already in use"):
        async with store.write() as tx:
            await tx.tasks.insert(task.copy(), created_by=ALICE.id)


async def test_a_moves_statements_are_seen_by_the_engines_listeners(store: Store) -> None:
    task = await give(store, by=PLANNER, project="work")
    seen: list[str] = []

    def statement(*args: Any) -> None:
        seen.append(args[2])

    event.listen(store.statements_engine, "before_cursor_execute", statement)
    try:
        await verbs.accept_task(store, CODER, task.id)
    finally:
        event.remove(store.statements_engine, "before_cursor_execute", statement)
    assert [s.split()[0] for s in seen] == ["SELECT", "UPDATE", "SELECT", "INSERT"]
