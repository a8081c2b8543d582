"""PostgreSQL: the hot statements sent straight to asyncpg (app/storage/fast/direct.py) store and
answer exactly what SQLAlchemy's execution of the same statements does, raise SQLAlchemy's
errors, and a block run `alone` refuses a statement after its write."""

from __future__ import annotations

import copy
import itertools
from typing import Any

import pytest
from factory import (
    ALICE,
    BOB,
    CHECKPOINT,
    CODER,
    PLANNER,
    call,
    drive,
    evidence,
    give,
    packet,
    result,
)
from server import BACKEND, connect, new_database_name, pg_admin_execute, pg_url
from sqlalchemy import event
from sqlalchemy.engine import make_url

from app.domain.errors import Conflict
from app.service import auth, creation, verbs
from app.service.admin import provision_token
from app.service.inputs import RequestCapabilityInput
from app.storage import statements
from app.storage.event_reads import event_pages, row_pages
from app.storage.fast import direct
from app.storage.fast.driver import OnDriver
from app.storage.repositories import events as events_repo
from app.storage.repositories import projects, tasks
from app.storage.store import Store

pytestmark = [
    pytest.mark.cast,
    pytest.mark.skipif(BACKEND != "postgres", reason="the asyncpg driver path is PostgreSQL's"),
]


async def _dump(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows as stored, and each sequence's position."""
    db = await connect(url)
    try:
        tables = [
            r[0]
            for r in await db.fetch(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
            )
        ]
        dumped = {  # in a stable order, whatever the key
            t: sorted((tuple(r) for r in await db.fetch(f"SELECT * FROM {t}")), key=repr)
            for t in tables
        }
        for (name,) in await db.fetch("SELECT sequencename FROM pg_sequences"):
            dumped[f"sequence {name}"] = [(await db.fetchval(f"SELECT last_value FROM {name}"),)]
    finally:
        await db.close()
    return dumped


def _one_write(statement: Any) -> bool:
    """A statement of a task's save with its events: built for each shape of write it meets."""
    return str(statement).startswith("WITH moved AS (")


def _answer(result: Any) -> Any:
    if result.returns_rows:
        return [(tuple(row), dict(row._mapping)) for row in result.all()]
    return result.rowcount


@pytest.mark.fast_path
async def test_a_lifecycle_through_asyncpg_stores_and_answers_as_sqlalchemy_does(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the database as it is now, copied: the lifecycle replayed into the copy through
    # SQLAlchemy must answer each statement as the driver did, and end with equal tables
    source = make_url(store.url).database
    replica = new_database_name("prickle_replica")
    await store.close()  # (a template must have no connections; the store reconnects)
    await pg_admin_execute(f'CREATE DATABASE "{replica}" TEMPLATE "{source}"')
    try:
        calls = await _lifecycle(store, monkeypatch)
        sent = {id(c[1]): c[1] for c in calls if c[3] is not None}
        quiet = {id(projects._ROLE), id(events_repo._LAST_SEQ)}  # a person's; SQLite's
        # a store without a hub announces in its writes (app/events/announcer.py)
        quiet |= {id(events_repo._draw(False)), id(events_repo._ANNOUNCE)}
        quiet |= {id(tasks._UPDATE)}  # a move updates its task in its one statement
        quiet |= {id(events_repo._INSERT)}  # rows in a list: through SQLAlchemy
        # every hot statement built once, and one-write statements of both heads
        built_once = {i for i, s in statements.ONCE.items() if not _one_write(s)}
        missing = [str(statements.ONCE[i])[:80] for i in built_once - quiet - set(sent)]
        assert not missing
        heads = {str(s).split(" (")[1].split()[0] for s in sent.values() if _one_write(s)}
        assert heads == {"UPDATE", "INSERT"}
        await _replay_into(pg_url(replica), calls)
        assert await _dump(pg_url(replica)) == await _dump(store.url)
    finally:
        await pg_admin_execute(f'DROP DATABASE IF EXISTS "{replica}" WITH (FORCE)')


async def _lifecycle(store: Store, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every verb path the hot statements serve; each statement, its block, its
    parameters and the driver's answer, recorded."""
    calls: list[tuple[Any, Any, Any, Any]] = []  # block, statement, params, answer
    executing = OnDriver.execute

    async def recorded(self: Any, statement: Any, parameters: Any = None) -> Any:
        params = copy.deepcopy(parameters)
        answer = await executing(self, statement, parameters)
        sent = _answer(answer) if isinstance(answer, direct.Result) else None
        calls.append((self, statement, params, sent))
        return answer

    monkeypatch.setattr(OnDriver, "execute", recorded)
    parent = await give(store, by=PLANNER, project="work")
    task = await give(store, by=PLANNER, project="work", parent_task_id=parent.id)
    for verb in ("accept_task", "start_task"):
        parent = await call(store, verb, CODER, parent.id)
        task = await call(store, verb, CODER, task.id)
    parent = await call(store, "wait_on", CODER, parent.id, on="agent")
    task = await verbs.save_checkpoint(store, CODER, task.id, dict(CHECKPOINT))
    # `strict`: half the evidence sends it back, then a second revision supersedes it
    held = await give(store, by=PLANNER, project="strict")
    for verb in ("accept_task", "start_task"):
        held = await call(store, verb, CODER, held.id)
    held = await verbs.return_result(store, CODER, held.id, result([evidence([0])]))
    held = await verbs.return_result(store, CODER, held.id, result(submission_id="s-2"))
    assert held.result is not None and held.result["revision"] == 2
    task = await verbs.return_result(store, CODER, task.id, result(submission_id="s-1"))
    again = await verbs.return_result(store, CODER, task.id, result(submission_id="s-1"))
    assert again.version == task.version  # the same submission: found, not stored again
    await give(store, by=ALICE, project="fresh", idempotency_key="k-1")
    await give(store, by=ALICE, project="fresh", idempotency_key="k-1")
    await give(store, by=PLANNER, project="held")  # bob's gate holds it: more writes
    wanted = {"kind": "repo", "name": "prickle"}  # the gate's rules read on their own
    inp = RequestCapabilityInput(project="work", packet=packet(), capability=wanted)
    await creation.request_capability(store, PLANNER, inp)
    await call(store, "reroute", PLANNER, (await drive(store, "returned")).id)
    made = await provision_token(store, CODER)  # its row read as a request proves it
    await auth.credential_for(store, f"Bearer {made.token}")
    monkeypatch.undo()
    return calls


async def _replay_into(url: str, calls: list[tuple[Any, Any, Any, Any]]) -> None:
    """Each recorded block's statements, in one transaction each, through SQLAlchemy (it
    is listened to), each answer compared with the driver's."""
    replay = Store(url)
    seen: list[str] = []
    event.listen(replay.statements_engine, "before_cursor_execute", lambda *a: seen.append(a[2]))
    try:
        for _, block in itertools.groupby(calls, key=lambda c: id(c[0])):
            async with replay.write() as tx:
                for _, statement, params, answer in block:
                    through = await tx.conn.execute(statement, params)  # SQLAlchemy's path
                    assert not isinstance(through, direct.Result)
                    if answer is not None:
                        assert _answer(through) == answer, statement
    finally:
        await replay.close()
    assert len(seen) >= len(calls)


async def test_a_key_already_in_use_is_a_conflict_through_the_driver(store: Store) -> None:
    task = await give(store, by=ALICE, project="keys", idempotency_key="once")
    copied = task.copy()
    with pytest.raises(Conflict, match="idempotency key 'once' is already in use"):
        async with store.write() as tx:
            await tx.tasks.insert(copied, created_by=ALICE.id)
    events = list(await _events_of(store, task.id))
    with pytest.raises(Conflict, match="idempotency key 'once' is already in use"):
        async with store.write(alone=True) as tx:  # the task and its events in one statement
            await tx.tasks.add(copied, ALICE.id, events)
    assert len(await _events_of(store, task.id)) == len(events)


async def _events_of(store: Store, task_id: str) -> list[Any]:
    async with store.read() as tx:
        return await tx.events.after(0, 100, task_id=task_id)


@pytest.mark.fast_path
async def test_a_block_run_alone_refuses_a_statement_after_its_write(store: Store) -> None:
    task = await give(store, by=PLANNER, project="work")
    with pytest.raises(RuntimeError, match="after the last write"):
        async with store.write(alone=True) as tx:
            loaded = await tx.tasks.get(task.id)
            assert loaded is not None
            loaded.display_title = "changed"
            loaded.version += 1
            await tx.tasks.update(loaded, task.version)  # commits by itself
            await tx.tasks.get(task.id)
    async with store.read() as tx:
        kept = await tx.tasks.get(task.id)
    assert kept is not None and kept.display_title == "changed"  # the one write stands
    async with store.write(alone=True) as tx:  # after Tx.begin(), writes are a transaction
        await tx.begin()
        loaded = await tx.tasks.get(task.id)
        assert loaded is not None
        loaded.display_title, loaded.version = "again", loaded.version + 1
        await tx.tasks.update(loaded, kept.version)
        assert await tx.tasks.get(task.id) is not None


async def test_a_replay_page_is_planned_for_its_own_range(store: Store) -> None:
    """A replay's page statement runs again and again on a kept connection; a generic plan
    (PostgreSQL's choice from the sixth run) read far more than the page: each page's
    transaction plans for its parameters, and only that transaction."""
    await give(store, by=PLANNER, project="work")
    pages = (row_pages(BOB, 10, ["cursor"]), event_pages(BOB, 10))
    for read in pages:
        for _ in range(8):
            async with store.read() as tx:
                assert len(await read(tx, 0, 100)) == 2
                mode = await tx.conn.exec_driver_sql("SHOW plan_cache_mode")
                assert mode.scalar() == "force_custom_plan"
    async with store.read() as tx:
        assert (await tx.conn.exec_driver_sql("SHOW plan_cache_mode")).scalar() == "auto"
