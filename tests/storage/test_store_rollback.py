"""A block that fails stores nothing, on either backend: neither what went straight to the
driver (app/storage/fast/direct.py) nor what went through SQLAlchemy on the same connection; and
the next write on that store works."""

from __future__ import annotations

import pytest
from factory import CODER, PLANNER, give

from app.service import verbs
from app.storage.store import Store

pytestmark = pytest.mark.cast


class Stop(Exception):
    pass


async def test_a_failed_write_stores_nothing_and_the_next_write_works(store: Store) -> None:
    task = await give(store, by=PLANNER, project="work")
    for through_sqlalchemy_too in (False, True):
        with pytest.raises(Stop):
            async with store.write() as tx:
                loaded = await tx.tasks.get(task.id)
                assert loaded is not None
                loaded.display_title = "changed"
                loaded.version += 1
                await tx.tasks.update(loaded, task.version)  # to the driver
                if through_sqlalchemy_too:  # the same transaction, through SQLAlchemy
                    await tx.principals.ensure_person("dora", "2026-12-03T10:00:00.000000Z")
                raise Stop
        async with store.read() as tx:
            kept = await tx.tasks.get(task.id)
            assert kept is not None and kept.display_title is None
            assert kept.version == task.version
            assert not await tx.principals.person_exists("dora")
    assert (await verbs.accept_task(store, CODER, task.id)).state == "accepted"
