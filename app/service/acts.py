"""The acts of the assignee's run and of the owners around it: what each verb does beyond
its move (declared in the verbs' registry)."""

from __future__ import annotations

from app.domain import moves
from app.domain.clock import new_id, sha256_of
from app.domain.errors import InvalidInput, NotFound, TurnBudgetExhausted
from app.domain.task import Task
from app.domain.types import JSON
from app.service.arguments import (
    AnswerArgs,
    Args,
    CheckpointArgs,
    HandBackArgs,
    Reason,
    WaitOnArgs,
)
from app.service.erasure import refuse_erased
from app.service.unit import Moves, Step, resume_by_subtasks, subtasks_ended
from app.storage.tx import Tx


async def approve(step: Step[Reason]) -> None:
    task, reason = step.task, step.args.reason
    task.gate.basis = "approval"
    task.gate.rule_id = None
    await step.tx.approvals.close(task.gate.approval_id or "", "approved", reason, step.recorded.at)
    step.move(note=reason)


async def deny(step: Step[Reason]) -> None:
    task, reason = step.task, step.args.reason
    if task.state == "waiting" and task.gate.approval_id:
        await step.tx.approvals.close(task.gate.approval_id, "denied", reason, step.recorded.at)
    step.move(note=reason)


async def wait(step: Step[WaitOnArgs]) -> None:
    task, args = step.task, step.args
    if args.agent is not None:
        await _awaitable_agent(step.tx, task, args.agent)
    elif args.on == "agent" and not await step.tx.tasks.child_states(task.id):
        # nobody could answer: no agent named, and no subtask whose end would resume it
        raise InvalidInput(
            "agent: wait_on(on: agent) names the agent to wait on (owner/name);"
            " only a task with subtasks may leave it out, to wait for their ends"
        )
    # set before the move, so that its event names the agent waited on
    task.resume_to, task.wait_agent, task.question = task.state, args.agent, args.question
    step.move(waiting_on=args.on, note=args.question)
    if args.on == "agent" and await subtasks_ended(step.tx, task.id):
        # it would wait for an end that has already come: it resumes at once
        resume_by_subtasks(task, step.verb, step.recorded, "every subtask has already ended")


async def _awaitable_agent(tx: Tx, task: Task, agent: str) -> None:
    """Refuse an agent nobody else would answer for: unknown, erased, or the assignee."""
    if not await tx.principals.agent_exists(agent):
        raise NotFound(f"no agent {agent}")
    await refuse_erased(tx, agent, "agent")
    if agent == task.assignee:
        raise InvalidInput(f"agent: {agent} is the task's assignee; it cannot wait on itself")


async def stop(step: Step[Reason]) -> None:
    """The run stopped (stop_run: by its owner): waiting on `stopped`, to resume where it was."""
    resume_to = step.task.state
    step.move(waiting_on="stopped", note=step.args.reason)
    step.task.resume_to = resume_to


async def answer(step: Step[AnswerArgs]) -> None:
    step.move(moves.resume_target(step.task), kind="answered", note=step.args.answer)


async def resume(step: Step[Args]) -> None:
    step.move(moves.resume_target(step.task))


async def cancel(step: Step[Reason]) -> None:
    task, tx, reason = step.task, step.tx, step.args.reason
    if task.result is not None and task.result.get("status") == "submitted":
        task.result = {**task.result, "status": "cancelled"}
        await tx.results.set(task.id, task.result["revision"], "cancelled", task.result)
    if task.state == "waiting" and task.waiting_on == "owner_approval" and task.gate.approval_id:
        await tx.approvals.close(task.gate.approval_id, "cancelled", reason, step.recorded.at)
    step.move(note=reason)


async def hand_back(step: Step[HandBackArgs]) -> None:
    if step.args.body is not None:
        await _keep_checkpoint(step.tx, step.task, step.args.body, step.recorded, handed_back=True)
    step.move(note=step.args.reason)


async def save_checkpoint(step: Step[CheckpointArgs]) -> None:
    """Not a move: replaces latest_checkpoint, spends one turn, records `checkpointed`."""
    task = step.task
    if task.turn_budget is not None:
        if task.turn_budget <= 0:
            raise TurnBudgetExhausted(f"task {task.id} has no turns left for checkpoints")
        task.turn_budget -= 1
    await _keep_checkpoint(step.tx, task, step.args.body, step.recorded, handed_back=False)
    step.recorded.record(task, "checkpointed", step.verb, task.state)


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
