"""Moves are atomic and serialised per task, on SQLite and on PostgreSQL alike.

These tests use conftest's plain `store` (then `setup`), so they run on either backend.
"""

from __future__ import annotations

import asyncio
from collections import Counter

from factory import (
    BOB,
    CAROL,
    CODER,
    HELPER,
    PLANNER,
    call,
    drive,
    events_of,
    give,
    load,
    setup,
    snapshot,
)

from app.domain.errors import Conflict, InvalidState, ProtocolError, TurnBudgetExhausted
from app.service import admin, verbs
from app.service.inputs import GateRuleInput


async def outcomes(calls) -> list:  # type: ignore[no-untyped-def]
    return await asyncio.gather(*calls, return_exceptions=True)


def kinds(results: list) -> Counter:
    return Counter(type(r).__name__ if isinstance(r, BaseException) else "ok" for r in results)


async def test_of_twenty_concurrent_accepts_exactly_one_wins(store) -> None:
    await setup(store)
    task = await drive(store, "routed")
    results = await outcomes(verbs.accept_task(store, CODER, task.id) for _ in range(20))
    count = kinds(results)
    assert count["ok"] == 1, count
    assert count["InvalidState"] + count["Conflict"] == 19, count
    for r in results:
        if isinstance(r, ProtocolError):
            assert isinstance(r, InvalidState | Conflict)
    accepts = [e for e in await events_of(store, task.id) if e.verb == "accept_task"]
    assert len(accepts) == 1
    stored = await load(store, task.id)
    assert (stored.state, stored.version) == ("accepted", 3)


async def test_of_two_concurrent_moves_from_the_same_state_one_wins_and_the_other_changes_nothing(
    store,
) -> None:
    await setup(store)
    task = await drive(store, "routed")
    accepted, denied = await outcomes(
        [verbs.accept_task(store, CODER, task.id), verbs.deny_task(store, BOB, task.id)]
    )
    ok = [r for r in (accepted, denied) if not isinstance(r, BaseException)]
    assert len(ok) == 1
    stored = await load(store, task.id)
    assert stored.state == ok[0].state
    assert stored.version == len(await events_of(store, task.id)) == 3


async def test_concurrent_checkpoints_never_overspend_the_turn_budget(store) -> None:
    await setup(store)
    task = await give(store, turn_budget=3)
    await verbs.accept_task(store, CODER, task.id)
    results = await outcomes(call(store, "save_checkpoint", CODER, task.id) for _ in range(8))
    count = kinds(results)
    assert count["ok"] == 3, count
    assert all(
        isinstance(r, TurnBudgetExhausted | Conflict)
        for r in results
        if isinstance(r, BaseException)
    )
    stored = await load(store, task.id)
    assert (stored.turn_budget, stored.version) == (0, 3 + 3)


async def test_concurrent_handoffs_with_one_idempotency_key_create_one_task(store) -> None:
    await setup(store)
    results = await outcomes(give(store, idempotency_key="once") for _ in range(8))
    ids = {r.id for r in results if not isinstance(r, BaseException)}
    assert len(ids) == 1, kinds(results)
    assert kinds(results) == {"ok": 8}
    assert (await snapshot(store))["tasks"] == 1


async def test_subtasks_ending_together_resume_their_parent_exactly_once(store) -> None:
    await setup(store)
    parent = await drive(store, "working")
    subs = [
        await give(store, by=CODER, assignee="bob/helper", parent_task_id=parent.id)
        for _ in range(4)
    ]
    await verbs.wait_on(store, CODER, parent.id, "agent", agent="bob/helper")
    await outcomes(verbs.cancel_task(store, CODER, s.id) for s in subs)
    stored = await load(store, parent.id)
    assert (stored.state, stored.waiting_on) == ("working", None)
    resumes = [e for e in await events_of(store, parent.id) if e.kind == "answered"]
    assert len(resumes) == 1
    assert stored.version == len(await events_of(store, parent.id))
    assert PLANNER and HELPER  # the cast: alice/planner asked, bob/helper worked the subtasks


async def test_subtasks_the_gate_rejects_together_are_all_created(store) -> None:
    await setup(store)
    parent = await drive(store, "working")
    await admin.set_gate_rule(store, CAROL, GateRuleInput(effect="deny"))
    made = await outcomes(
        give(store, by=CODER, assignee="carol/spy", parent_task_id=parent.id) for _ in range(8)
    )
    assert kinds(made) == {"ok": 8}
    assert {task.state for task in made} == {"rejected"}
    assert (await load(store, parent.id)).state == "working"


async def test_concurrent_first_handoffs_into_a_new_project_all_succeed(store) -> None:
    await setup(store)
    results = await outcomes(give(store, project="fresh") for _ in range(8))
    assert kinds(results) == {"ok": 8}
    async with store.read() as tx:
        assert await tx.projects.role("fresh", "alice") == "admin"
