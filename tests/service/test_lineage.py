"""Lineage of a result: its cause, the context the assignee declares, and whether it is attested."""

from __future__ import annotations

import pytest
from factory import (
    ALICE,
    CAROL,
    CHECKPOINT,
    CODER,
    PLANNER,
    assert_valid,
    drive,
    give,
    result,
)
from sqlalchemy import select

from app.domain.clock import canonical_json, sha256_of
from app.domain.lineage import provenance_status
from app.domain.principals import agent
from app.service import admin, verbs
from app.service.inputs import GateRuleInput
from app.storage.repositories.records import checkpoints

pytestmark = pytest.mark.cast


async def finish(store, task_id: str, assignee=CODER, **fields):  # type: ignore[no-untyped-def]
    await verbs.accept_task(store, assignee, task_id)
    await verbs.start_task(store, assignee, task_id)
    return await verbs.return_result(store, assignee, task_id, result(**fields))


def test_canonical_json_sorts_keys_drops_spaces_and_keeps_utf8() -> None:
    assert canonical_json({"b": 1, "a": ["é", None]}) == '{"a":["é",null],"b":1}'.encode()
    assert sha256_of({"b": 1, "a": 2}) == sha256_of({"a": 2, "b": 1})
    assert sha256_of({"a": 1}) == "015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862"


async def test_a_task_a_person_asked_for_in_a_message_is_caused_by_that_message(store) -> None:
    task = await give(store, by=ALICE, origin_message_id="msg-42")
    done = await finish(store, task.id)
    cause = done.result["lineage"]["cause"]
    assert cause == {"kind": "owner_message", "message_id": "msg-42", "author": "alice"}
    assert done.result["lineage"]["recorded_at"] == done.result["returned_at"]
    assert_valid(done)


async def test_a_task_with_no_message_parent_or_schedule_has_no_cause(store) -> None:
    for by in (ALICE, PLANNER):
        done = await finish(store, (await give(store, by=by)).id)
        assert done.result["lineage"]["cause"] == {"kind": "none"}


async def test_a_subtask_an_agent_created_is_caused_by_its_parent_and_how_the_gate_let_it_through(
    store,
) -> None:
    parent = await drive(store, "working")
    # bob/coder, working on the parent, asks carol's agent: carol's gate holds it, carol approves.
    sub = await give(store, by=CODER, assignee="carol/spy", parent_task_id=parent.id)
    assert (sub.state, sub.requester) == ("waiting", "bob/coder")
    await verbs.approve_handoff(store, CAROL, sub.id)
    done = await finish(store, sub.id, assignee=agent("carol/spy"))
    assert done.result["lineage"]["cause"] == {
        "kind": "task",
        "task_id": parent.id,
        "basis": "approval",
        "rule_id": None,
        "approval_id": sub.gate.approval_id,
    }
    assert_valid(done)


async def test_a_subtask_let_through_by_a_rule_names_the_rule(store) -> None:
    parent = await drive(store, "working")
    bob_allowed = GateRuleInput(effect="allow", requester_owner="bob")
    allow = await admin.set_gate_rule(store, CAROL, bob_allowed)
    sub = await give(store, by=CODER, assignee="carol/spy", parent_task_id=parent.id)
    done = await finish(store, sub.id, assignee=agent("carol/spy"))
    cause = done.result["lineage"]["cause"]
    assert (cause["kind"], cause["basis"], cause["rule_id"], cause["approval_id"]) == (
        "task",
        "rule",
        allow.id,
        None,
    )


async def test_a_subtask_to_an_agent_of_the_same_owner_has_basis_same_owner(store) -> None:
    parent = await drive(store, "working")
    sub = await give(store, by=CODER, assignee="bob/helper", parent_task_id=parent.id)
    done = await finish(store, sub.id, assignee=agent("bob/helper"))
    assert done.result["lineage"]["cause"]["basis"] == "same_owner"


async def _checkpoint_id(store, task_id: str) -> str:  # type: ignore[no-untyped-def]
    async with store.read() as tx:
        rows = await tx.rows(select(checkpoints.c.id).where(checkpoints.c.task_id == task_id))
    return rows[-1][0]


async def test_context_whose_hashes_match_what_the_server_holds_is_attested(store) -> None:
    task = await drive(store, "working")
    saved = await verbs.save_checkpoint(store, CODER, task.id, dict(CHECKPOINT))
    context = [
        {"kind": "packet", "task_id": task.id, "sha256": sha256_of(task.packet)},
        {
            "kind": "checkpoint",
            "task_id": task.id,
            "checkpoint_id": await _checkpoint_id(store, task.id),
            "sha256": sha256_of(saved.latest_checkpoint),
        },
    ]
    done = await verbs.return_result(store, CODER, task.id, result(context=context))
    assert done.result["provenance_status"] == "attested"
    assert done.result["lineage"]["context"] == context
    assert_valid(done)


async def test_context_with_a_mismatched_hash_is_only_claimed(store) -> None:
    task = await drive(store, "working")
    context = [{"kind": "packet", "task_id": task.id, "sha256": sha256_of({"task": "other"})}]
    done = await verbs.return_result(store, CODER, task.id, result(context=context))
    assert done.result["provenance_status"] == "claimed"


async def test_context_with_a_memory_fact_is_only_claimed(store) -> None:
    task = await drive(store, "working")
    context = [
        {"kind": "packet", "task_id": task.id, "sha256": sha256_of(task.packet)},
        {"kind": "memory_fact", "key": "port", "sha256": sha256_of("8000")},
    ]
    done = await verbs.return_result(store, CODER, task.id, result(context=context))
    assert done.result["provenance_status"] == "claimed"


async def test_a_checkpoint_named_under_another_task_is_only_claimed(store) -> None:
    task = await drive(store, "working")
    saved = await verbs.save_checkpoint(store, CODER, task.id, dict(CHECKPOINT))
    other = await drive(store, "working")
    context = [
        {
            "kind": "checkpoint",
            "task_id": other.id,
            "checkpoint_id": await _checkpoint_id(store, task.id),
            "sha256": sha256_of(saved.latest_checkpoint),
        }
    ]
    done = await verbs.return_result(store, CODER, other.id, result(context=context))
    assert done.result["provenance_status"] == "claimed"


def test_no_declared_context_is_attested() -> None:
    assert provenance_status([], {}) == "attested"


def test_an_unknown_checkpoint_is_only_claimed() -> None:
    item = {"kind": "checkpoint", "task_id": "T", "checkpoint_id": "C", "sha256": "0" * 64}
    assert provenance_status([item], {}) == "claimed"
    assert provenance_status([item], {("checkpoint", "C"): "0" * 64}) == "attested"
