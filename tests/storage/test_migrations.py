"""The migrations build exactly the tables the code declares, on the run's backend."""

from __future__ import annotations

from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from factory import ALICE, BOB, CHECKPOINT, PLANNER, call, give, setup, snapshot
from sqlalchemy import insert, inspect, text
from sqlalchemy.exc import IntegrityError

from app.storage.graph import graph_tasks
from app.storage.migrate import downgrade, upgrade
from app.storage.repositories import tasks as task_repository
from app.storage.store import Store
from app.storage.tables import CheckpointRow, ErasedPrincipalRow, ScheduleRunRow, metadata

AT = "2026-12-03T07:00:00.000000Z"


async def test_the_migrated_database_matches_the_tables(store: Store) -> None:
    def differences(sync_connection: Any) -> list[Any]:
        context = MigrationContext.configure(sync_connection, opts={"compare_type": True})
        return list(compare_metadata(context, metadata))

    async with store.engine.connect() as conn:
        assert await conn.run_sync(differences) == []


async def test_a_schedule_has_at_most_one_run_per_due_time(store: Store) -> None:
    run = {"schedule_id": "SCHED1", "due_at": AT, "task_id": None, "created_at": AT}
    async with store.engine.begin() as conn:
        await conn.execute(insert(ScheduleRunRow).values(**run))
        await conn.execute(insert(ScheduleRunRow).values(**{**run, "schedule_id": "SCHED2"}))
    with pytest.raises(IntegrityError):
        async with store.engine.begin() as conn:
            await conn.execute(insert(ScheduleRunRow).values(**{**run, "error": "again"}))


async def test_an_erased_id_is_recorded_once(store: Store) -> None:
    erased = {"id": "alice", "kind": "person", "erased_at": AT}
    async with store.engine.begin() as conn:
        await conn.execute(insert(ErasedPrincipalRow).values(**erased))
    with pytest.raises(IntegrityError):
        async with store.engine.begin() as conn:
            await conn.execute(insert(ErasedPrincipalRow).values(**erased))


REFERRING = {
    "tasks": "parent_task_id",
    "events": "task_id",
    "checkpoints": "task_id",
    "results": "task_id",
    "approvals": "task_id",
    "schedule_runs": "task_id",
}


def checkpoint_of(task_id: str) -> dict[str, Any]:
    return {
        "id": "CHECKPOINT1",
        "task_id": task_id,
        "body": {"progress": "p"},
        "sha256": "0" * 64,
        "agent": "bob/coder",
        "handed_back": False,
        "created_at": AT,
    }


async def test_a_row_naming_a_task_that_does_not_exist_is_refused(store: Store) -> None:
    with pytest.raises(IntegrityError):
        async with store.engine.begin() as conn:
            await conn.execute(insert(CheckpointRow).values(**checkpoint_of("NO_SUCH_TASK")))
    run = {"schedule_id": "SCHED1", "due_at": AT, "task_id": "NO_SUCH_TASK", "created_at": AT}
    with pytest.raises(IntegrityError):
        async with store.engine.begin() as conn:
            await conn.execute(insert(ScheduleRunRow).values(**run))


async def foreign_keys(store: Store) -> dict[str, list[tuple[list[str], str, list[str]]]]:
    def read(sync_connection: Any) -> dict[str, list[tuple[list[str], str, list[str]]]]:
        found = inspect(sync_connection)
        return {
            table: [
                (fk["constrained_columns"], fk["referred_table"], fk["referred_columns"])
                for fk in found.get_foreign_keys(table)
            ]
            for table in REFERRING
        }

    async with store.engine.connect() as conn:
        return await conn.run_sync(read)


async def stand_in_for_moved_at(store: Store, add: bool) -> None:
    """The server of today writes tasks.moved_at (0021): on an older schema a column stands
    in for it while the test writes, and is dropped before the upgrade, which adds it again
    and fills it from the events."""
    change = "ADD COLUMN moved_at VARCHAR(40)" if add else "DROP COLUMN moved_at"
    async with store.engine.begin() as conn:
        await conn.execute(text(f"ALTER TABLE tasks {change}"))


async def test_a_database_from_before_the_foreign_keys_upgrades_with_its_rows(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(database_url)
    # the server at 0007 wrote no steps of a task's graph (task_links, migration 0011)
    monkeypatch.setattr(task_repository, "links_of", lambda task: [])
    try:
        await upgrade(store.engine, "0007")
        await stand_in_for_moved_at(store, True)
        await setup(store)
        parent = await give(store)
        child = await give(store, parent_task_id=parent.id)
        await call(store, "accept_task", BOB, child.id)
        await call(store, "save_checkpoint", BOB, child.id, checkpoint=dict(CHECKPOINT))
        await call(store, "start_task", BOB, child.id)
        returned = await call(store, "return_result", BOB, child.id)
        held = await give(store, project="held")  # waits for bob's approval
        before = await snapshot(store)
        await stand_in_for_moved_at(store, False)
        monkeypatch.undo()
        await upgrade(store.engine)
        assert await snapshot(store) == before
        assert held.state == "waiting"
        async with store.read() as tx:  # the last move's time, from the events: not updated_at
            moved = {t.id: t.moved_at for t in await tx.tasks.get_many([parent.id, child.id])}
        assert moved == {parent.id: parent.moved_at, child.id: returned.moved_at}, moved
        assert returned.moved_at and returned.moved_at > child.created_at
        async with store.read() as tx:  # the upgrade wrote the steps of the tasks it found
            graph, _ = await graph_tasks(tx, ALICE, parent.id, 4, 10)
        assert [t.id for t in graph] == [parent.id, child.id]
        keys = await foreign_keys(store)
        for table, column in REFERRING.items():
            assert keys[table] == [([column], "tasks", ["id"])], table
        grandchild = await give(store, by=PLANNER, parent_task_id=child.id)
        assert grandchild.parent_task_id == child.id
    finally:
        await store.close()


async def test_an_upgrade_over_a_row_naming_a_missing_task_stops_and_changes_nothing(
    database_url: str,
) -> None:
    store = Store(database_url)
    try:
        await upgrade(store.engine, "0007")
        async with store.engine.begin() as conn:
            await conn.execute(insert(CheckpointRow).values(**checkpoint_of("NO_SUCH_TASK")))
        with pytest.raises(RuntimeError, match=r"checkpoints\.task_id: 1"):
            await upgrade(store.engine)
        async with store.engine.connect() as conn:
            version = (await conn.execute(text("SELECT version_num FROM alembic_version"))).all()
            kept = (await conn.execute(text("SELECT task_id FROM checkpoints"))).all()
        assert [tuple(row) for row in version] == [("0007",)]
        assert [tuple(row) for row in kept] == [("NO_SUCH_TASK",)]
        assert (await foreign_keys(store))["checkpoints"] == []
    finally:
        await store.close()


async def test_a_downgrade_below_the_foreign_keys_keeps_the_rows_and_drops_only_them(
    database_url: str,
) -> None:
    store = Store(database_url)
    try:
        await upgrade(store.engine)
        await setup(store)
        parent = await give(store)
        await give(store, parent_task_id=parent.id)
        before = await snapshot(store)
        await downgrade(store.engine, "0007")
        assert await snapshot(store) == before
        assert all(keys == [] for keys in (await foreign_keys(store)).values())
        await upgrade(store.engine)
        assert await snapshot(store) == before
    finally:
        await store.close()


async def test_the_events_keep_their_seqs_through_0009_and_later_ones_follow_them(
    database_url: str,
) -> None:
    """0009 rebuilds SQLite's events table with seq as its rowid: every event keeps its seq,
    the next move's comes right after the newest, and no second b-tree is kept for seq. A
    downgrade leaves the counter row at the newest seq, where 0008's writers start from."""
    store = Store(database_url)
    try:
        await upgrade(store.engine, "0008")
        await stand_in_for_moved_at(store, True)
        await setup(store)
        task = await give(store)
        await call(store, "accept_task", BOB, task.id)
        before = await snapshot(store, task.id)
        await stand_in_for_moved_at(store, False)
        await upgrade(store.engine)
        assert await snapshot(store, task.id) == before
        moved = await call(store, "start_task", BOB, task.id)
        after = (await snapshot(store, task.id))["events"]
        assert [e["seq"] for e in after] == [e["seq"] for e in before["events"]] + [
            before["events"][-1]["seq"] + 1
        ]
        assert after[-1]["version"] == moved.version
        if store.sqlite:
            async with store.engine.connect() as conn:
                indexes = await conn.exec_driver_sql("SELECT name FROM pragma_index_list('events')")
                columns = await conn.exec_driver_sql(
                    "SELECT name, type FROM pragma_table_info('events')"
                )
                assert sorted(r[0] for r in indexes) == [
                    "ix_events_project_seq",
                    "ix_events_task_seq",
                ]
                assert ("seq", "INTEGER") in [tuple(r) for r in columns]
            await downgrade(store.engine, "0008")
            async with store.engine.connect() as conn:
                last = await conn.exec_driver_sql("SELECT last_seq FROM event_counter")
                assert last.scalar_one() == after[-1]["seq"]
    finally:
        await store.close()


async def tables(store: Store) -> list[str]:
    async with store.engine.connect() as conn:
        return await conn.run_sync(lambda sync: inspect(sync).get_table_names())


async def test_0010_drops_the_counter_and_its_downgrade_puts_it_back_at_the_newest_seq(
    database_url: str,
) -> None:
    store = Store(database_url)
    try:
        await upgrade(store.engine)
        await setup(store)
        task = await give(store)
        await call(store, "accept_task", BOB, task.id)
        newest = (await snapshot(store, task.id))["events"][-1]["seq"]
        assert "event_counter" not in await tables(store)
        await downgrade(store.engine, "0009")
        async with store.engine.connect() as conn:
            rows = await conn.exec_driver_sql("SELECT id, last_seq FROM event_counter")
            assert [tuple(r) for r in rows] == [(1, newest)]
        await upgrade(store.engine)
        assert "event_counter" not in await tables(store)
    finally:
        await store.close()
