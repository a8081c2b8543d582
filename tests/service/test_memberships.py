"""The hub's record of live subscribers' memberships re-reads them only after a change."""

from __future__ import annotations

from typing import Any

import pytest
from factory import ALICE, give
from sqlalchemy import event

from app.events.members import Memberships
from app.service import admin
from app.storage.store import Store

pytestmark = pytest.mark.cast


class Statements:
    def __init__(self) -> None:
        self.count = 0

    def __call__(self, *_: Any) -> None:
        self.count += 1


async def test_refresh_reads_nothing_until_a_membership_changes(store: Store) -> None:
    memberships = Memberships(store)
    store.member_listeners.append(memberships.changed)
    await give(store, by=ALICE, project="kept")  # founds "kept": a membership change
    await memberships.refresh()
    carol = await memberships.track("carol")
    assert "kept" not in carol
    statements = Statements()
    event.listen(store.statements_engine, "before_cursor_execute", statements)
    try:
        for _ in range(5):
            await memberships.refresh()
        assert statements.count == 0
        await admin.add_project_member(store, ALICE, "kept", "carol")
        before = statements.count
        await memberships.refresh()  # one read, for every tracked person at once
        once = statements.count
        await memberships.refresh()
        assert "kept" in carol and statements.count == once > before
    finally:
        event.remove(store.statements_engine, "before_cursor_execute", statements)
    memberships.untrack("carol")
