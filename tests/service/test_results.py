"""Results: the requester's owner's result policy, decisions, revisions, idempotent submissions."""

from __future__ import annotations

from datetime import timedelta

import pytest
from factory import (
    ALICE,
    BOB,
    CODER,
    PLANNER,
    assert_valid,
    drive,
    events_of,
    evidence,
    load,
    refused,
    result,
    snapshot,
)
from sqlalchemy import select

from app.domain.clock import now, parse_rfc3339, rfc3339
from app.domain.errors import Conflict, Forbidden, InvalidInput
from app.service import verbs
from app.storage.repositories.records import results

pytestmark = pytest.mark.cast

OLD = rfc3339(now() - timedelta(days=8))
HALF = [evidence([0])]  # cites criterion 0 of 2


async def revisions(store, task_id: str) -> list[tuple[int, str]]:  # type: ignore[no-untyped-def]
    async with store.read() as tx:
        rows = await tx.rows(select(results).where(results.c.task_id == task_id))
    return sorted((r.revision, r.status) for r in rows)


async def returned(store, project: str = "work", items=None, **fields):  # type: ignore[no-untyped-def]
    task = await drive(store, "working", project=project)
    return await verbs.return_result(store, CODER, task.id, result(items, **fields))


async def test_by_default_v0_completes_a_result_of_the_required_shape(store) -> None:
    done = await returned(store, items=HALF)
    assert done.state == "completed"
    body = done.result
    assert (body["status"], body["decided_by"], body["decided_by_policy"]) == (
        "accepted",
        {"kind": "system"},
        "v0",
    )
    assert (body["revision"], body["returned_by"], body["verified_by"]) == (
        1,
        "bob/coder",
        {"kind": "system"},
    )
    assert body["verdicts"] == []
    assert_valid(done)
    assert await revisions(store, done.id) == [(1, "accepted")]


async def test_return_result_moves_through_verifying_in_the_same_call(store) -> None:
    done = await returned(store)
    last_two = (await events_of(store, done.id))[-2:]
    moves = [(e.kind, e.from_state, e.to_state, e.actor) for e in last_two]
    assert moves == [
        ("result", "working", "verifying", "bob/coder"),
        ("moved", "verifying", "completed", None),
    ]


async def test_an_auto_accept_rule_completes_the_result(store) -> None:
    done = await returned(store, project="easy", items=HALF)
    assert done.state == "completed"
    assert (done.result["decided_by"], done.result["decided_by_policy"]) == (
        {"kind": "system"},
        "auto_accept",
    )


async def test_require_complete_evidence_sends_an_incomplete_result_back_to_working(store) -> None:
    back = await returned(store, project="strict", items=HALF)
    assert (back.state, back.result["status"]) == ("working", "rejected")
    assert back.result["verdicts"] == [
        {"criterion": 1, "accepted": False, "note": "no fresh evidence cites this criterion"}
    ]
    assert "uncovered criteria [1]" in back.result["reason"]
    assert_valid(back)
    assert await revisions(store, back.id) == [(1, "rejected")]


async def test_require_complete_evidence_fails_a_criterion_cited_only_by_stale_evidence(
    store,
) -> None:
    items = [evidence([0], observed_at=OLD), evidence([1])]
    back = await returned(store, project="strict", items=items)
    assert back.state == "working"
    assert [(v["criterion"], v["accepted"]) for v in back.result["verdicts"]] == [(0, False)]
    assert back.result["evidence_report"]["uncovered"] == []


async def test_require_complete_evidence_completes_a_complete_result(store) -> None:
    back = await returned(store, project="strict", items=HALF)
    done = await verbs.return_result(store, CODER, back.id, result())
    assert (done.state, done.result["status"], done.result["revision"]) == (
        "completed",
        "accepted",
        2,
    )
    assert done.result["decided_by"] == {"kind": "system"}
    assert await revisions(store, done.id) == [(1, "superseded"), (2, "accepted")]
    assert_valid(done)


async def test_require_approval_holds_the_result_for_the_requesters_owner(store) -> None:
    held = await returned(store, project="review")
    assert (held.state, held.result["status"], held.result["decided_by"]) == (
        "approval",
        "submitted",
        None,
    )
    assert_valid(held)


@pytest.mark.parametrize(
    ("decision", "state"),
    [("accept", "completed"), ("request_changes", "working"), ("reject", "rejected")],
)
async def test_the_requesters_owner_decides_a_held_result(store, decision: str, state: str) -> None:
    held = await returned(store, project="review")
    verdicts = [
        {"criterion": 0, "accepted": True, "note": "seen it"},
        {"criterion": 1, "accepted": decision == "accept"},
    ]
    decided = await verbs.decide_result(store, ALICE, held.id, decision, verdicts, reason="read it")
    status = "accepted" if decision == "accept" else "rejected"
    assert (decided.state, decided.result["status"]) == (state, status)
    assert decided.result["decided_by"] == {"kind": "person", "handle": "alice"}
    assert (decided.result["verdicts"], decided.result["reason"]) == (verdicts, "read it")
    assert await revisions(store, held.id) == [(1, status)]
    assert_valid(decided)


async def test_a_result_after_request_changes_is_a_new_revision(store) -> None:
    held = await returned(store, project="review")
    await verbs.decide_result(store, ALICE, held.id, "request_changes", reason="add docs")
    again = await verbs.return_result(store, CODER, held.id, result(summary="Now documented"))
    assert (again.state, again.result["revision"], again.result["status"]) == (
        "approval",
        2,
        "submitted",
    )
    assert await revisions(store, held.id) == [(1, "superseded"), (2, "submitted")]


async def test_only_the_requesters_owner_decides_and_only_from_approval(store) -> None:
    held = await returned(store, project="review")
    for who in (PLANNER, BOB, CODER):
        await refused(store, held.id, Forbidden, "decide_result", who)


async def test_a_decision_with_a_verdict_on_a_missing_criterion_is_invalid_input(store) -> None:
    held = await returned(store, project="review")
    await refused(
        store,
        held.id,
        InvalidInput,
        "decide_result",
        ALICE,
        verdicts=[{"criterion": 2, "accepted": True}],
    )
    await refused(store, held.id, InvalidInput, "decide_result", ALICE, decision="maybe")


async def test_cancelling_a_task_with_a_pending_result_cancels_the_result(store) -> None:
    held = await returned(store, project="review")
    cancelled = await verbs.cancel_task(store, PLANNER, held.id, reason="moot")
    assert (cancelled.state, cancelled.result["status"]) == ("cancelled", "cancelled")
    assert (await load(store, held.id)).result["status"] == "cancelled"
    assert await revisions(store, held.id) == [(1, "cancelled")]


async def test_cancelling_keeps_a_decided_result_as_it_was(store) -> None:
    back = await returned(store, project="strict", items=HALF)
    cancelled = await verbs.cancel_task(store, PLANNER, back.id)
    assert cancelled.result["status"] == "rejected"


async def test_the_same_submission_id_again_returns_the_task_unchanged(store) -> None:
    task = await drive(store, "working", project="strict")
    first = await verbs.return_result(store, CODER, task.id, result(HALF, submission_id="s-1"))
    before = await snapshot(store, task.id)
    again = await verbs.return_result(store, CODER, task.id, result(HALF, submission_id="s-1"))
    assert await snapshot(store, task.id) == before
    assert (again.state, again.version, again.result) == (first.state, first.version, first.result)
    assert first.result["submission_id"] == "s-1"


async def test_the_same_submission_id_with_a_different_body_is_a_conflict(store) -> None:
    task = await drive(store, "working", project="strict")
    await verbs.return_result(store, CODER, task.id, result(HALF, submission_id="s-1"))
    error = await refused(
        store,
        task.id,
        Conflict,
        "return_result",
        CODER,
        result=result(summary="something else", submission_id="s-1"),
    )
    assert error.code == "conflict"


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param({"evidence_items": []}, id="no-evidence"),
        pytest.param({"evidence_items": [evidence([0])] * 21}, id="21-evidence"),
        pytest.param({"evidence_items": [evidence([2])]}, id="criterion-out-of-range"),
        pytest.param({"evidence_items": [evidence([20])]}, id="criterion-over-schema-max"),
        pytest.param(
            {"evidence_items": [evidence([0], artifact=0)]}, id="artifact-without-artifacts"
        ),
        pytest.param(
            {"evidence_items": [evidence([0], artifact=1)], "artifacts": [{"ref": "dist/app.tar"}]},
            id="artifact-out-of-range",
        ),
        pytest.param({"summary": ""}, id="empty-summary"),
        pytest.param({"summary": "x" * 4001}, id="summary-4001"),
        pytest.param({"provenance": "trust_me"}, id="unknown-provenance"),
        pytest.param(
            {"evidence_items": [{"kind": "note", "summary": "s", "observed_at": "yesterday"}]},
            id="observed-at-not-a-date",
        ),
        pytest.param(
            {
                "evidence_items": [
                    {"kind": "note", "summary": "s", "observed_at": "2026-02-30T00:00:00Z"}
                ]
            },
            id="observed-at-february-30",
        ),
        pytest.param({"evidence_items": [{"kind": "rumour", "summary": "s"}]}, id="unknown-kind"),
        pytest.param({"submission_id": "not valid!"}, id="bad-submission-id"),
        pytest.param(
            {"context": [{"kind": "packet", "task_id": "T1", "sha256": "abc"}]},
            id="bad-context-sha",
        ),
    ],
)
async def test_a_result_that_breaks_the_shape_is_invalid_input_and_no_move_is_made(
    store, bad
) -> None:
    task = await drive(store, "working")
    items = bad.pop("evidence_items", None)
    error = await refused(
        store, task.id, InvalidInput, "return_result", CODER, result=result(items, **bad)
    )
    assert error.code == "invalid_input"


async def test_evidence_observed_before_the_previous_revision_is_stale_in_the_next(store) -> None:
    back = await returned(store, project="strict", items=HALF)
    first_at = parse_rfc3339(back.result["returned_at"])
    earlier = rfc3339(first_at - timedelta(seconds=1))
    items = [evidence([0, 1], observed_at=earlier)]
    again = await verbs.return_result(store, CODER, back.id, result(items))
    report = again.result["evidence_report"]
    assert report["stale"] == [{"evidence": 0, "why": "before_previous_revision"}]
    assert (again.state, again.result["revision"], again.result["status"]) == (
        "working",
        2,
        "rejected",
    )
    assert [v["criterion"] for v in again.result["verdicts"]] == [0, 1]


async def test_only_the_assignee_may_repeat_a_submission(store) -> None:
    task = await drive(store, "working")
    await verbs.return_result(store, CODER, task.id, result(submission_id="s-1"))
    for who in (PLANNER, ALICE):
        await refused(
            store, task.id, Forbidden, "return_result", who, result=result(submission_id="s-1")
        )
        await refused(
            store,
            task.id,
            Forbidden,
            "return_result",
            who,
            result=result(summary="other", submission_id="s-1"),
        )
