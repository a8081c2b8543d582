"""What every verb shares: optimistic versions, one transaction, and a parent's auto-resume."""

from __future__ import annotations

import pytest
from factory import (
    ALICE,
    BOB,
    CAROL,
    CODER,
    HELPER,
    PLANNER,
    SPY,
    call,
    drive,
    events_of,
    give,
    load,
    refused,
    result,
)

from app.domain.errors import Conflict, InvalidState, NotFound
from app.domain.table import table
from app.service import admin, verbs
from app.service.inputs import GateRuleInput

pytestmark = pytest.mark.cast


@pytest.mark.parametrize("verb", ["accept_task", "cancel_task", "deny_task", "hand_back"])
async def test_a_differing_expected_version_is_a_conflict_and_changes_nothing(
    store, verb: str
) -> None:
    task = await drive(store, "routed")
    who = {"accept_task": CODER, "cancel_task": PLANNER, "deny_task": BOB, "hand_back": CODER}[verb]
    error = await refused(store, task.id, Conflict, verb, who, expected_version=task.version - 1)
    assert error.code == "conflict"
    assert f"at version {task.version}, not the expected {task.version - 1}" in error.message


async def test_the_expected_version_lets_the_move_through_when_it_matches(store) -> None:
    task = await drive(store, "routed")
    assert task.version == 2
    accepted = await verbs.accept_task(store, CODER, task.id, expected_version=2)
    saved = await verbs.save_checkpoint(
        store, CODER, task.id, {"progress": "p"}, expected_version=3
    )
    assert (accepted.version, saved.version) == (3, 4)
    await refused(store, task.id, Conflict, "start_task", CODER, expected_version=3)


async def test_the_expected_version_is_checked_on_results_and_decisions_too(store) -> None:
    task = await drive(store, "working", project="review")
    await refused(store, task.id, Conflict, "return_result", CODER, expected_version=1)
    held = await verbs.return_result(store, CODER, task.id, result(), expected_version=task.version)
    await refused(
        store, held.id, Conflict, "decide_result", ALICE, expected_version=held.version + 1
    )


async def subtasks(store, parent_id: str, count: int) -> list:  # type: ignore[no-untyped-def]
    """bob/coder, working on the parent, hands `count` subtasks to bob/helper (same owner)."""
    return [
        await give(store, by=CODER, assignee="bob/helper", parent_task_id=parent_id)
        for _ in range(count)
    ]


@pytest.mark.parametrize("resume_to", ["accepted", "working"])
async def test_a_task_waiting_on_agent_resumes_when_its_last_subtask_ends(
    store, resume_to: str
) -> None:
    parent = await drive(store, resume_to)
    first, second = await subtasks(store, parent.id, 2)
    await verbs.wait_on(store, CODER, parent.id, "agent", agent="bob/helper")

    await verbs.cancel_task(store, CODER, first.id)
    assert (await load(store, parent.id)).state == "waiting"

    await call(store, "accept_task", HELPER, second.id)
    ended = await call(store, "return_result", HELPER, second.id)
    assert ended.state == "completed"
    resumed = await load(store, parent.id)
    assert (resumed.state, resumed.waiting_on, resumed.resume_to) == (resume_to, None, None)

    child_event = (await events_of(store, second.id))[-1]
    parent_event = (await events_of(store, parent.id))[-1]
    assert (
        parent_event.kind,
        parent_event.from_state,
        parent_event.to_state,
        parent_event.actor,
    ) == (
        "answered",
        "waiting",
        resume_to,
        None,
    )
    assert parent_event.verb == "return_result"  # the mutation that caused it
    assert table().find("waiting", resume_to, "answer")  # the table's move, made by the server
    # Same transaction: the resume is logged right after the child's last event, at its time.
    assert (parent_event.seq, parent_event.at) == (child_event.seq + 1, child_event.at)
    assert resumed.version == len(await events_of(store, parent.id))


async def test_a_task_waiting_on_agent_does_not_resume_while_a_subtask_is_open(store) -> None:
    parent = await drive(store, "working")
    first, _open = await subtasks(store, parent.id, 2)
    await verbs.wait_on(store, CODER, parent.id, "agent", agent="bob/helper")
    await verbs.deny_task(store, BOB, first.id)
    assert (await load(store, parent.id)).waiting_on == "agent"


async def test_a_task_waiting_on_a_human_does_not_resume_when_its_subtasks_end(store) -> None:
    parent = await drive(store, "working")
    [sub] = await subtasks(store, parent.id, 1)
    await verbs.wait_on(store, CODER, parent.id, "human", question="Port?")
    await verbs.cancel_task(store, CODER, sub.id)
    assert (await load(store, parent.id)).waiting_on == "human"


async def test_the_named_agent_answers_a_task_waiting_on_it(store) -> None:
    parent = await drive(store, "waiting", "agent", "working")
    answered = await verbs.answer(store, PLANNER, parent.id, "use 8080")
    assert answered.state == "working"
    event = (await events_of(store, parent.id))[-1]
    assert (event.kind, event.verb, event.actor, event.note) == (
        "answered",
        "answer",
        "alice/planner",
        "use 8080",
    )


async def test_a_second_move_from_the_same_state_fails_with_invalid_state(store) -> None:
    task = await drive(store, "routed")
    await verbs.accept_task(store, CODER, task.id)
    error = await refused(store, task.id, InvalidState, "accept_task", CODER)
    assert error.state == "accepted"


async def test_a_subtask_rejected_by_the_gate_at_creation_counts_as_ended(store) -> None:
    parent = await drive(store, "working")
    await verbs.wait_on(store, CODER, parent.id, "agent", agent="bob/helper")
    denied = await give(store, by=CODER, assignee="carol/spy", parent_task_id=parent.id)
    assert denied.state == "waiting"  # carol has no rule: held, still open
    await verbs.deny_task(store, CAROL, denied.id)
    assert (await load(store, parent.id)).state == "working"

    await verbs.wait_on(store, CODER, parent.id, "agent", agent="bob/helper")
    await admin.set_gate_rule(store, CAROL, GateRuleInput(effect="deny"))
    rejected = await give(store, by=CODER, assignee="carol/spy", parent_task_id=parent.id)
    assert rejected.state == "rejected"
    resumed = await load(store, parent.id)
    assert (resumed.state, resumed.version) == ("working", len(await events_of(store, parent.id)))


async def test_the_agent_named_in_wait_on_sees_the_task_and_answers_it(store) -> None:
    task = await give(store)
    await verbs.accept_task(store, CODER, task.id)
    await verbs.wait_on(store, CODER, task.id, "agent", question="which db?", agent="carol/spy")
    answered = await verbs.answer(store, SPY, task.id, "postgres")
    assert (answered.state, answered.waiting_on) == ("accepted", None)
    with pytest.raises(NotFound):
        await verbs.cancel_task(store, SPY, task.id)
