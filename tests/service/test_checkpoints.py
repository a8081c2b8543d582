"""Checkpoints: no move, one `checkpointed` event, and a turn budget they spend."""

from __future__ import annotations

import pytest
from factory import (
    CHECKPOINT,
    CODER,
    assert_valid,
    drive,
    events_of,
    give,
    load,
    refused,
    result,
    snapshot,
)
from sqlalchemy import select

from app.domain.clock import sha256_of
from app.domain.errors import InvalidInput, TurnBudgetExhausted
from app.service import verbs
from app.storage.repositories.records import checkpoints

pytestmark = pytest.mark.cast

FILLED = {
    "progress": "wrote the handler",
    "decisions": [],
    "files_touched": [],
    "next_steps": ["document it"],
    "open_questions": [],
}


async def stored_checkpoints(store, task_id: str) -> list:  # type: ignore[no-untyped-def]
    async with store.read() as tx:
        return await tx.rows(select(checkpoints).where(checkpoints.c.task_id == task_id))


@pytest.mark.parametrize(
    "position",
    [
        ("accepted", None, None),
        ("working", None, None),
        ("waiting", "human", "working"),
        ("waiting", "stopped", "accepted"),
    ],
    ids=lambda p: "-".join(x for x in p if x),
)
async def test_a_checkpoint_replaces_latest_checkpoint_without_moving_the_task(
    store, position
) -> None:
    task = await drive(store, *position)
    saved = await verbs.save_checkpoint(store, CODER, task.id, dict(CHECKPOINT))
    assert (saved.state, saved.waiting_on, saved.version) == (
        task.state,
        task.waiting_on,
        task.version + 1,
    )
    assert saved.latest_checkpoint == FILLED
    assert saved.latest_checkpoint_by == {
        "agent": "bob/coder",
        "provenance": "agent_generated",
        "handed_back": False,
    }
    assert saved.updated_at > task.updated_at
    event = (await events_of(store, task.id))[-1]
    assert (event.kind, event.verb, event.actor) == ("checkpointed", "save_checkpoint", "bob/coder")
    assert (event.from_state, event.to_state, event.waiting_on) == (
        task.state,
        task.state,
        task.waiting_on,
    )
    assert_valid(await load(store, task.id))


async def test_every_checkpoint_is_kept_with_an_id_and_the_sha256_of_its_canonical_json(
    store,
) -> None:
    task = await drive(store, "working")
    await verbs.save_checkpoint(store, CODER, task.id, dict(CHECKPOINT))
    latest = await verbs.save_checkpoint(store, CODER, task.id, {"progress": "documented it"})
    rows = await stored_checkpoints(store, task.id)
    assert len(rows) == 2 and len({r.id for r in rows}) == 2
    for row in rows:
        assert row.sha256 == sha256_of(row.body)
    assert latest.latest_checkpoint["progress"] == "documented it"


async def test_hand_back_with_a_checkpoint_marks_it_handed_back(store) -> None:
    task = await drive(store, "working")
    back = await verbs.hand_back(store, CODER, task.id, reason="stuck", checkpoint=dict(CHECKPOINT))
    assert back.state == "returned"
    assert back.latest_checkpoint == FILLED
    assert back.latest_checkpoint_by["handed_back"] is True
    [row] = await stored_checkpoints(store, task.id)
    assert row.handed_back is True


async def test_each_checkpoint_spends_one_turn_and_at_zero_save_checkpoint_is_refused(
    store,
) -> None:
    task = await give(store, turn_budget=2)
    await verbs.accept_task(store, CODER, task.id)
    budgets = [
        (await verbs.save_checkpoint(store, CODER, task.id, dict(CHECKPOINT))).turn_budget
        for _ in range(2)
    ]
    assert budgets == [1, 0]
    error = await refused(store, task.id, TurnBudgetExhausted, "save_checkpoint", CODER)
    assert error.code == "turn_budget_exhausted"
    done = await verbs.return_result(store, CODER, task.id, result())
    assert done.state == "completed"


async def test_an_exhausted_budget_still_lets_the_assignee_hand_back(store) -> None:
    task = await give(store, turn_budget=0)
    await verbs.accept_task(store, CODER, task.id)
    await refused(store, task.id, TurnBudgetExhausted, "save_checkpoint", CODER)
    back = await verbs.hand_back(store, CODER, task.id, checkpoint=dict(CHECKPOINT))
    assert (back.state, back.turn_budget) == ("returned", 0)


async def test_a_task_without_a_turn_budget_checkpoints_without_limit(store) -> None:
    task = await drive(store, "working")
    for _ in range(3):
        task = await verbs.save_checkpoint(store, CODER, task.id, dict(CHECKPOINT))
    assert task.turn_budget is None


@pytest.mark.parametrize("budget", [-1, 101])
async def test_a_turn_budget_outside_0_to_100_is_invalid_input(store, budget: int) -> None:
    before = await snapshot(store)
    with pytest.raises(InvalidInput, match="turn_budget"):
        await give(store, turn_budget=budget)
    assert await snapshot(store) == before


@pytest.mark.parametrize(
    "checkpoint",
    [
        pytest.param({"progress": ""}, id="empty-progress"),
        pytest.param({"next_steps": ["x"]}, id="no-progress"),
        pytest.param({"progress": "p", "decisions": ["d"] * 21}, id="21-decisions"),
        pytest.param({"progress": "x" * 2001}, id="progress-2001"),
        pytest.param({"progress": "p", "mood": "fine"}, id="unknown-field"),
    ],
)
async def test_a_checkpoint_outside_the_schema_is_invalid_input(store, checkpoint: dict) -> None:
    task = await drive(store, "working")
    await refused(store, task.id, InvalidInput, "save_checkpoint", CODER, checkpoint=checkpoint)
