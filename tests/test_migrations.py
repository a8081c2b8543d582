"""The migrations build exactly the tables the code declares, on the run's backend."""

from __future__ import annotations

from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import insert
from sqlalchemy.exc import IntegrityError

from app.storage.store import Store
from app.storage.tables import ErasedPrincipalRow, ScheduleRunRow, metadata

AT = "2026-12-03T07:00:00.000000Z"


async def test_the_migrated_database_matches_the_tables(store: Store) -> None:
    def differences(sync_connection: Any) -> list[Any]:
        context = MigrationContext.configure(sync_connection, opts={"compare_type": True})
        return list(compare_metadata(context, metadata))

    async with store.engine.connect() as conn:
        assert await conn.run_sync(differences) == []


async def test_a_schedule_has_at_most_one_run_per_due_time(store: Store) -> None:
    run = {"schedule_id": "SCHED1", "due_at": AT, "task_id": "TASK1", "created_at": AT}
    async with store.engine.begin() as conn:
        await conn.execute(insert(ScheduleRunRow).values(**run))
        await conn.execute(insert(ScheduleRunRow).values(**{**run, "schedule_id": "SCHED2"}))
    with pytest.raises(IntegrityError):
        async with store.engine.begin() as conn:
            await conn.execute(insert(ScheduleRunRow).values(**{**run, "task_id": "TASK2"}))


async def test_an_erased_id_is_recorded_once(store: Store) -> None:
    erased = {"id": "alice", "kind": "person", "erased_at": AT}
    async with store.engine.begin() as conn:
        await conn.execute(insert(ErasedPrincipalRow).values(**erased))
    with pytest.raises(IntegrityError):
        async with store.engine.begin() as conn:
            await conn.execute(insert(ErasedPrincipalRow).values(**erased))
