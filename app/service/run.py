"""Verbs of the assignee's run and of the owners around it."""

from __future__ import annotations

from app.domain import moves, shapes
from app.domain.clock import new_id, sha256_of
from app.domain.errors import InvalidInput, NotFound, TurnBudgetExhausted
from app.domain.principals import Principal, check_agent_id
from app.domain.task import Task
from app.domain.types import JSON
from app.service.erasure import refuse_erased
from app.service.inputs import CheckpointInput, checkpoint_body
from app.service.unit import Moves, resume_by_subtasks, run_verb, subtasks_ended
from app.storage.store import Store
from app.storage.tx import Tx


def _reason(reason: str | None) -> str | None:
    return shapes.check("reason", reason)


async def accept_task(
    store: Store, actor: Principal, task_id: str, expected_version: int | None = None
) -> Task:
    return await _simple(store, actor, task_id, "accept_task", "accepted", expected_version)


async def start_task(
    store: Store, actor: Principal, task_id: str, expected_version: int | None = None
) -> Task:
    return await _simple(store, actor, task_id, "start_task", "working", expected_version)


async def _simple(
    store: Store,
    actor: Principal,
    task_id: str,
    verb: str,
    to_state: str,
    expected_version: int | None,
    note: str | None = None,
) -> Task:
    async def act(tx: Tx, task: Task, recorded: Moves) -> None:
        recorded.move(task, verb, to_state, note=note)

    return await run_verb(store, actor, task_id, verb, expected_version, act, alone=True)


async def approve_handoff(
    store: Store,
    actor: Principal,
    task_id: str,
    reason: str | None = None,
    expected_version: int | None = None,
) -> Task:
    _reason(reason)

    async def act(tx: Tx, task: Task, recorded: Moves) -> None:
        task.gate.basis = "approval"
        task.gate.rule_id = None
        await tx.approvals.close(task.gate.approval_id or "", "approved", reason, recorded.at)
        recorded.move(task, "approve_handoff", "routed", note=reason)

    return await run_verb(store, actor, task_id, "approve_handoff", expected_version, act)


async def deny_task(
    store: Store,
    actor: Principal,
    task_id: str,
    reason: str | None = None,
    expected_version: int | None = None,
) -> Task:
    _reason(reason)

    async def act(tx: Tx, task: Task, recorded: Moves) -> None:
        if task.state == "waiting" and task.gate.approval_id:
            await tx.approvals.close(task.gate.approval_id, "denied", reason, recorded.at)
        recorded.move(task, "deny_task", "rejected", note=reason)

    return await run_verb(store, actor, task_id, "deny_task", expected_version, act)


async def wait_on(
    store: Store,
    actor: Principal,
    task_id: str,
    on: str,
    question: str | None = None,
    agent: str | None = None,
    expected_version: int | None = None,
) -> Task:
    if on not in ("human", "agent"):
        raise InvalidInput(f"on: {on!r} is not one of human, agent")
    if agent is not None:
        if on != "agent":
            raise InvalidInput("agent: only wait_on(on: agent) names an agent")
        check_agent_id(agent, "agent")
    if question is not None:
        shapes.check("text", question, "question")

    async def act(tx: Tx, task: Task, recorded: Moves) -> None:
        if agent is not None and not await tx.principals.agent_exists(agent):
            raise NotFound(f"no agent {agent}")
        await refuse_erased(tx, agent, "agent")
        # set before the move, so that its event names the agent waited on
        task.resume_to, task.wait_agent, task.question = task.state, agent, question
        recorded.move(task, "wait_on", "waiting", waiting_on=on, note=question)
        if on == "agent" and await subtasks_ended(tx, task.id):
            # it would wait for an end that has already come: it resumes at once
            resume_by_subtasks(task, "wait_on", recorded, "every subtask has already ended")

    return await run_verb(store, actor, task_id, "wait_on", expected_version, act)


async def stop_run(
    store: Store,
    actor: Principal,
    task_id: str,
    reason: str | None = None,
    expected_version: int | None = None,
) -> Task:
    _reason(reason)

    async def act(tx: Tx, task: Task, recorded: Moves) -> None:
        resume_to = task.state
        recorded.move(task, "stop_run", "waiting", waiting_on="stopped", note=reason)
        task.resume_to = resume_to

    return await run_verb(store, actor, task_id, "stop_run", expected_version, act, alone=True)


async def answer(
    store: Store, actor: Principal, task_id: str, answer: str, expected_version: int | None = None
) -> Task:
    shapes.check("text", answer, "answer")

    async def act(tx: Tx, task: Task, recorded: Moves) -> None:
        recorded.move(task, "answer", moves.resume_target(task), kind="answered", note=answer)

    return await run_verb(store, actor, task_id, "answer", expected_version, act, alone=True)


async def resume_run(
    store: Store, actor: Principal, task_id: str, expected_version: int | None = None
) -> Task:
    async def act(tx: Tx, task: Task, recorded: Moves) -> None:
        recorded.move(task, "resume_run", moves.resume_target(task))

    return await run_verb(store, actor, task_id, "resume_run", expected_version, act, alone=True)


async def cancel_task(
    store: Store,
    actor: Principal,
    task_id: str,
    reason: str | None = None,
    expected_version: int | None = None,
) -> Task:
    _reason(reason)

    async def act(tx: Tx, task: Task, recorded: Moves) -> None:
        if task.result is not None and task.result.get("status") == "submitted":
            task.result = {**task.result, "status": "cancelled"}
            await tx.results.set(task.id, task.result["revision"], "cancelled", task.result)
        if (
            task.state == "waiting"
            and task.waiting_on == "owner_approval"
            and task.gate.approval_id
        ):
            await tx.approvals.close(task.gate.approval_id, "cancelled", reason, recorded.at)
        recorded.move(task, "cancel_task", "cancelled", note=reason)

    return await run_verb(store, actor, task_id, "cancel_task", expected_version, act)


async def hand_back(
    store: Store,
    actor: Principal,
    task_id: str,
    reason: str | None = None,
    checkpoint: CheckpointInput | JSON | None = None,
    expected_version: int | None = None,
) -> Task:
    _reason(reason)
    body = checkpoint_body(checkpoint) if checkpoint is not None else None

    async def act(tx: Tx, task: Task, recorded: Moves) -> None:
        if body is not None:
            await _keep_checkpoint(tx, task, body, recorded, handed_back=True)
        recorded.move(task, "hand_back", "returned", note=reason)

    return await run_verb(store, actor, task_id, "hand_back", expected_version, act)


async def save_checkpoint(
    store: Store,
    actor: Principal,
    task_id: str,
    checkpoint: CheckpointInput | JSON,
    expected_version: int | None = None,
) -> Task:
    """Not a move: replaces latest_checkpoint, spends one turn, records `checkpointed`."""
    body = checkpoint_body(checkpoint)

    async def act(tx: Tx, task: Task, recorded: Moves) -> None:
        if task.turn_budget is not None:
            if task.turn_budget <= 0:
                raise TurnBudgetExhausted(f"task {task.id} has no turns left for checkpoints")
            task.turn_budget -= 1
        await _keep_checkpoint(tx, task, body, recorded, handed_back=False)
        recorded.record(task, "checkpointed", "save_checkpoint", task.state)

    return await run_verb(store, actor, task_id, "save_checkpoint", expected_version, act)


async def _keep_checkpoint(
    tx: Tx, task: Task, body: JSON, recorded: Moves, handed_back: bool
) -> None:
    await tx.checkpoints.insert(
        {
            "id": new_id(),
            "task_id": task.id,
            "body": body,
            "sha256": sha256_of(body),
            "agent": task.assignee,
            "handed_back": handed_back,
            "created_at": recorded.at,
        }
    )
    task.latest_checkpoint = body
    task.latest_checkpoint_by = {
        "agent": task.assignee,
        "provenance": "agent_generated",
        "handed_back": handed_back,
    }
