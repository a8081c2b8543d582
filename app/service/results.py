"""The acts of results: return_result (checked at once by the result policy) and
decide_result (declared in the verbs' registry)."""

from __future__ import annotations

from app.domain import evidence, lineage, policy
from app.domain.actors import is_actor
from app.domain.clock import new_id, now, sha256_of
from app.domain.errors import Conflict, Forbidden, InvalidInput
from app.domain.principals import Principal
from app.domain.task import Task
from app.domain.types import JSON
from app.service.arguments import DecisionArgs, ResultArgs
from app.service.inputs import Submission
from app.service.unit import Moves, Step, can_see, visible_task
from app.storage.store import Store
from app.storage.tx import Tx

DECISIONS = {  # where each decision takes the task (one of the table's targets), the status
    "accept": ("completed", "accepted"),
    "request_changes": ("working", "rejected"),
    "reject": ("rejected", "rejected"),
}


async def return_result(step: Step[ResultArgs]) -> None:
    """Move to verifying, judge the evidence by the requester's owner's policy, move on."""
    tx, task, recorded, submission = step.tx, step.task, step.recorded, step.args.submission
    criteria = len(task.packet["acceptance_criteria"])
    evidence.check_indexes(submission.evidence, criteria, len(submission.artifacts))
    step.move(kind="result")
    previous = task.result
    body = await _result_body(tx, step.actor, task, submission, recorded, previous)
    rule = policy.pick(await tx.result_rules.of(task.requester_owner), task)
    verdict = policy.judge(rule, body["evidence_report"])
    body.update(
        status=verdict.status,
        verdicts=verdict.verdicts,
        reason=verdict.reason,
        decided_by=verdict.decided_by,
        decided_by_policy=verdict.decided_by_policy,
    )
    task.result = body
    if previous is not None:  # a first result has no earlier revision to supersede
        await tx.results.supersede(task.id, body["revision"])
    tx.results.insert_with_move(
        {
            "id": new_id(),
            "task_id": task.id,
            "revision": body["revision"],
            "status": body["status"],
            "submission_id": submission.submission_id,
            "submission_sha256": submission.fingerprint(),
            "body": body,
            "created_at": recorded.at,
        }
    )
    step.move(verdict.to_state, by_system=True, note=verdict.reason)


async def repeated_result(
    store: Store, actor: Principal, task_id: str, args: ResultArgs
) -> Task | None:
    """The task, if this result repeats an earlier one's submission_id (the same result)."""
    result = args.submission
    if result.submission_id is None:
        return None
    async with store.read() as tx:
        task = await visible_task(tx, actor, task_id)
        earlier = await tx.results.find_submission(task_id, result.submission_id)
    if earlier is None:
        return None
    if not is_actor("assignee", actor, task):
        raise Forbidden(f"{actor.id} may not return_result on this task")
    if earlier._mapping["submission_sha256"] != result.fingerprint():
        raise Conflict(
            f"submission {result.submission_id} was already used with a different result"
        )
    return task


async def _result_body(
    tx: Tx, actor: Principal, task: Task, result: Submission, recorded: Moves, previous: JSON | None
) -> JSON:
    previous_at = previous["returned_at"] if previous else None
    report = evidence.report(
        result.evidence, len(task.packet["acceptance_criteria"]), now(), previous_at
    )
    body: JSON = {
        "summary": result.summary,
        "evidence": result.evidence,
        "provenance": result.provenance,
        "returned_by": task.assignee,
        "returned_at": recorded.at,
        "revision": (previous["revision"] + 1) if previous else 1,
        "artifacts": result.artifacts,
        "verified_by": {"kind": "system"},
        "evidence_report": report,
        "lineage": {
            "cause": lineage.cause(task),
            "context": result.context,
            "recorded_at": recorded.at,
        },
        "provenance_status": lineage.provenance_status(
            result.context, await _held_hashes(tx, actor, result.context)
        ),
    }
    if result.submission_id is not None:
        body["submission_id"] = result.submission_id
    return body


async def _held_hashes(
    tx: Tx, caller: Principal, context: list[JSON]
) -> dict[tuple[str, str], str]:
    """The hashes the server holds for the context's items, only of tasks the caller (who
    returns the result and declares its context) may see: an item of any other task stays
    `claimed` whether its hash matches or not, so a result reveals nothing about it."""
    checkpoint_items = [c for c in context if c["kind"] == "checkpoint"]
    stored = await tx.checkpoints.hashes([c["checkpoint_id"] for c in checkpoint_items])
    task_ids = {c["task_id"] for c in context if c["kind"] == "packet"}
    task_ids |= {task_id for task_id, _ in stored.values()}
    seen = {t.id: t for t in await tx.tasks.get_many(sorted(task_ids))}
    seen = {i: t for i, t in seen.items() if await can_see(tx, caller, t)}
    held: dict[tuple[str, str], str] = {}
    for item in context:
        if item["kind"] == "packet" and item["task_id"] in seen:
            held[("packet", item["task_id"])] = sha256_of(seen[item["task_id"]].packet)
    for item in checkpoint_items:
        task_id, digest = stored.get(item["checkpoint_id"], ("", ""))
        if task_id == item["task_id"] and task_id in seen:
            held[("checkpoint", item["checkpoint_id"])] = digest
    return held


async def decide_result(step: Step[DecisionArgs]) -> None:
    """The requester's owner decides a result held for approval."""
    task, checked, reason = step.task, step.args.checked, step.args.reason
    to_state, status = DECISIONS[step.args.decision]
    criteria = len(task.packet["acceptance_criteria"])
    for v in checked:
        if v["criterion"] >= criteria:
            raise InvalidInput(
                f"verdicts: criterion {v['criterion']} is out of range ({criteria} criteria)"
            )
    body = {
        **(task.result or {}),
        "status": status,
        "verdicts": checked,
        "reason": reason,
        "decided_by": step.actor.as_reference(),
        "decided_by_policy": None,
    }
    task.result = body
    await step.tx.results.set(task.id, body["revision"], status, body)
    step.move(to_state, note=reason)
