"""Erasure through the service, where the stored rows tell more than the API shows: every
result revision marked, an erased person's owner schedules deleted (others' kept), and a
refused erasure leaving every row as it was."""

from __future__ import annotations

import pytest
from factory import ALICE, BOB, CAROL, CODER, PLANNER, call, give, load, packet, snapshot
from sqlalchemy import select

from app.domain.errors import Conflict, InvalidInput, NotFound
from app.service import creation, credentials, erasure, schedules
from app.service.inputs import RequestCapabilityInput
from app.service.schedules import ScheduleInput
from app.storage.repositories.records import results
from app.storage.store import Store

pytestmark = pytest.mark.cast

ERASED_ALICE = {"kind": "person", "handle": "alice", "erased": True}


async def test_every_result_revision_of_a_decided_task_is_marked(store: Store) -> None:
    task = await give(store, project="review")
    for verb in ("accept_task", "start_task", "return_result"):
        await call(store, verb, CODER, task.id)
    await call(store, "decide_result", ALICE, task.id, decision="request_changes")
    await call(store, "return_result", CODER, task.id)
    await call(store, "decide_result", ALICE, task.id, decision="accept")
    kept = await give(store, by=CAROL, assignee="carol/spy")
    untouched = await snapshot(store, kept.id)
    done = await erasure.erase_person(store, ALICE, "alice")
    assert (done.principal, done.tasks_marked) == ("alice", 1)
    async with store.read() as tx:
        rows = await tx.rows(select(results.c.body).where(results.c.task_id == task.id))
    assert [row[0]["decided_by"] for row in rows] == [ERASED_ALICE, ERASED_ALICE]
    stored = await load(store, task.id)
    assert stored.result is not None and stored.result["decided_by"] == ERASED_ALICE
    assert stored.requested_by["erased"] is True  # alice/planner went with alice
    assert await snapshot(store, kept.id) == untouched


async def test_an_erased_persons_schedules_are_deleted_and_others_kept(store: Store) -> None:
    every = {"project": "work", "packet": packet(), "every_seconds": 3600}
    await schedules.create_schedule(store, ALICE, ScheduleInput(assignee="bob/coder", **every))
    bobs = await schedules.create_schedule(store, BOB, ScheduleInput(assignee="bob/coder", **every))
    await erasure.erase_person(store, None, "alice")
    async with store.read() as tx:
        assert await tx.schedules.of("alice", None) == []
        assert [s.id for s in await tx.schedules.of("bob", None)] == [bobs.id]


async def test_a_refused_erasure_changes_no_row(store: Store) -> None:
    task = await give(store, by=PLANNER)
    before = await snapshot(store, task.id)
    tokens_before = await credentials.tokens(store, BOB)
    with pytest.raises(Conflict) as refused:
        await erasure.erase_person(store, BOB, "bob")
    assert task.id in str(refused.value)
    assert await snapshot(store, task.id) == before
    assert await credentials.tokens(store, BOB) == tokens_before
    async with store.read() as tx:
        assert await tx.erasures.among(["bob", "bob/coder", "bob/helper"]) == set()


async def test_an_erased_agent_is_not_scheduled_nor_picked_by_capability(store: Store) -> None:
    await erasure.erase_agent(store, BOB, "bob/coder")
    fields = {"project": "work", "packet": packet(), "every_seconds": 3600}
    with pytest.raises(InvalidInput, match="erased"):
        await schedules.create_schedule(store, ALICE, ScheduleInput(assignee="bob/coder", **fields))
    wanted = RequestCapabilityInput(
        project="work", capability={"kind": "repo", "name": "prickle"}, packet=packet()
    )
    with pytest.raises(NotFound):  # bob/coder offered it; nobody else does
        await creation.request_capability(store, PLANNER, wanted)
