"""Mutations: each calls its service function by name with the caller and its input (the
service's own input types: app.api.inputs), and returns the result.

Refusals are the service's ProtocolErrors; app.api.errors turns them into GraphQL errors.
"""

from __future__ import annotations

from typing import Annotated

import strawberry

from app import service
from app.api.enums import Decision, WaitOn, plain
from app.api.inputs import (
    CapabilityInput,
    CheckpointInput,
    GateRuleInput,
    HandoffInput,
    RequestCapabilityInput,
    ResultInput,
    ResultRuleInput,
    ScheduleInput,
    VerdictInput,
)
from app.api.types import (
    AgentRegistration,
    Erasure,
    GateRule,
    NewToken,
    ResultRule,
    Schedule,
    Task,
    TokenInfo,
)
from app.api.webhooks import NewWebhook, Webhook, WebhookInput

Info = strawberry.Info
Version = Annotated[
    int | None,
    strawberry.argument(description="Refuse with conflict unless the task is at this version."),
]


@strawberry.type
class Mutation:
    @strawberry.mutation(description="Hand a task to a named agent; its owner's gate decides.")
    async def handoff(self, info: Info, input: HandoffInput) -> Task:
        ctx = info.context
        return Task.from_domain(await service.handoff(ctx.store, await ctx.viewer(), input))

    @strawberry.mutation(description="Hand a task to an agent offering the capability.")
    async def request_capability(self, info: Info, input: RequestCapabilityInput) -> Task:
        ctx = info.context
        task = await service.request_capability(ctx.store, await ctx.viewer(), input)
        return Task.from_domain(task)

    @strawberry.mutation
    async def approve_handoff(
        self,
        info: Info,
        task_id: strawberry.ID,
        reason: str | None = None,
        expected_version: Version = None,
    ) -> Task:
        ctx = info.context
        task = await service.approve_handoff(
            ctx.store, await ctx.viewer(), task_id, reason=reason, expected_version=expected_version
        )
        return Task.from_domain(task)

    @strawberry.mutation
    async def deny_task(
        self,
        info: Info,
        task_id: strawberry.ID,
        reason: str | None = None,
        expected_version: Version = None,
    ) -> Task:
        ctx = info.context
        task = await service.deny_task(
            ctx.store, await ctx.viewer(), task_id, reason=reason, expected_version=expected_version
        )
        return Task.from_domain(task)

    @strawberry.mutation
    async def accept_task(
        self, info: Info, task_id: strawberry.ID, expected_version: Version = None
    ) -> Task:
        ctx = info.context
        task = await service.accept_task(
            ctx.store, await ctx.viewer(), task_id, expected_version=expected_version
        )
        return Task.from_domain(task)

    @strawberry.mutation
    async def start_task(
        self, info: Info, task_id: strawberry.ID, expected_version: Version = None
    ) -> Task:
        ctx = info.context
        task = await service.start_task(
            ctx.store, await ctx.viewer(), task_id, expected_version=expected_version
        )
        return Task.from_domain(task)

    @strawberry.mutation(description="Not a move: replaces latest_checkpoint, spends one turn.")
    async def save_checkpoint(
        self,
        info: Info,
        task_id: strawberry.ID,
        checkpoint: CheckpointInput,
        expected_version: Version = None,
    ) -> Task:
        ctx = info.context
        task = await service.save_checkpoint(
            ctx.store,
            await ctx.viewer(),
            task_id,
            checkpoint=checkpoint,
            expected_version=expected_version,
        )
        return Task.from_domain(task)

    @strawberry.mutation(description="Wait on a human or (with `agent`) on an agent.")
    async def wait_on(
        self,
        info: Info,
        task_id: strawberry.ID,
        on: WaitOn,
        question: str | None = None,
        agent: str | None = None,
        expected_version: Version = None,
    ) -> Task:
        ctx = info.context
        task = await service.wait_on(
            ctx.store,
            await ctx.viewer(),
            task_id,
            on=plain(on),
            question=question,
            agent=agent,
            expected_version=expected_version,
        )
        return Task.from_domain(task)

    @strawberry.mutation
    async def answer(
        self, info: Info, task_id: strawberry.ID, answer: str, expected_version: Version = None
    ) -> Task:
        ctx = info.context
        task = await service.answer(
            ctx.store, await ctx.viewer(), task_id, answer=answer, expected_version=expected_version
        )
        return Task.from_domain(task)

    @strawberry.mutation
    async def stop_run(
        self,
        info: Info,
        task_id: strawberry.ID,
        reason: str | None = None,
        expected_version: Version = None,
    ) -> Task:
        ctx = info.context
        task = await service.stop_run(
            ctx.store, await ctx.viewer(), task_id, reason=reason, expected_version=expected_version
        )
        return Task.from_domain(task)

    @strawberry.mutation
    async def resume_run(
        self, info: Info, task_id: strawberry.ID, expected_version: Version = None
    ) -> Task:
        ctx = info.context
        task = await service.resume_run(
            ctx.store, await ctx.viewer(), task_id, expected_version=expected_version
        )
        return Task.from_domain(task)

    @strawberry.mutation
    async def hand_back(
        self,
        info: Info,
        task_id: strawberry.ID,
        reason: str | None = None,
        checkpoint: CheckpointInput | None = None,
        expected_version: Version = None,
    ) -> Task:
        ctx = info.context
        task = await service.hand_back(
            ctx.store,
            await ctx.viewer(),
            task_id,
            reason=reason,
            checkpoint=checkpoint,
            expected_version=expected_version,
        )
        return Task.from_domain(task)

    @strawberry.mutation(
        description="Return a result; the requester's owner's policy judges it at once."
    )
    async def return_result(
        self,
        info: Info,
        task_id: strawberry.ID,
        result: ResultInput,
        expected_version: Version = None,
    ) -> Task:
        ctx = info.context
        task = await service.return_result(
            ctx.store, await ctx.viewer(), task_id, result=result, expected_version=expected_version
        )
        return Task.from_domain(task)

    @strawberry.mutation
    async def decide_result(
        self,
        info: Info,
        task_id: strawberry.ID,
        decision: Decision,
        verdicts: list[VerdictInput] | None = None,
        reason: str | None = None,
        expected_version: Version = None,
    ) -> Task:
        ctx = info.context
        task = await service.decide_result(
            ctx.store,
            await ctx.viewer(),
            task_id,
            decision=plain(decision),
            verdicts=verdicts,
            reason=reason,
            expected_version=expected_version,
        )
        return Task.from_domain(task)

    @strawberry.mutation
    async def cancel_task(
        self,
        info: Info,
        task_id: strawberry.ID,
        reason: str | None = None,
        expected_version: Version = None,
    ) -> Task:
        ctx = info.context
        task = await service.cancel_task(
            ctx.store, await ctx.viewer(), task_id, reason=reason, expected_version=expected_version
        )
        return Task.from_domain(task)

    @strawberry.mutation(
        description="Send a returned task again: to `assignee` or by `capability`."
    )
    async def reroute(
        self,
        info: Info,
        task_id: strawberry.ID,
        assignee: str | None = None,
        capability: CapabilityInput | None = None,
        expected_version: Version = None,
    ) -> Task:
        ctx = info.context
        task = await service.reroute(
            ctx.store,
            await ctx.viewer(),
            task_id,
            assignee=assignee,
            capability=capability,
            expected_version=expected_version,
        )
        return Task.from_domain(task)

    @strawberry.mutation(
        description="Register (or re-register) `<caller>/<name>`; returns a new token."
    )
    async def register_agent(
        self, info: Info, name: str, capabilities: list[CapabilityInput] | None = None
    ) -> AgentRegistration:
        ctx = info.context
        done = await service.register_agent(ctx.store, await ctx.viewer(), name, capabilities)
        return AgentRegistration(agent_id=done.agent_id, token=done.token)

    @strawberry.mutation
    async def set_gate_rule(self, info: Info, input: GateRuleInput) -> GateRule:
        ctx = info.context
        return GateRule.from_domain(
            await service.set_gate_rule(ctx.store, await ctx.viewer(), input)
        )

    @strawberry.mutation
    async def delete_gate_rule(self, info: Info, id: strawberry.ID) -> bool:
        ctx = info.context
        return await service.delete_gate_rule(ctx.store, await ctx.viewer(), id)

    @strawberry.mutation
    async def set_result_rule(self, info: Info, input: ResultRuleInput) -> ResultRule:
        ctx = info.context
        rule = await service.set_result_rule(ctx.store, await ctx.viewer(), input)
        return ResultRule.from_domain(rule)

    @strawberry.mutation
    async def delete_result_rule(self, info: Info, id: strawberry.ID) -> bool:
        ctx = info.context
        return await service.delete_result_rule(ctx.store, await ctx.viewer(), id)

    @strawberry.mutation(description="Administrators of a project add members, who see its tasks.")
    async def add_project_member(self, info: Info, project: str, handle: str) -> bool:
        ctx = info.context
        return await service.add_project_member(ctx.store, await ctx.viewer(), project, handle)

    @strawberry.mutation(
        description="A new token for the caller, or (by a person) for one of its agents; "
        "the secret is shown once."
    )
    async def create_token(
        self,
        info: Info,
        agent: str | None = None,
        label: str | None = None,
        expires_in_seconds: int | None = None,
    ) -> NewToken:
        ctx = info.context
        made = await service.create_token(
            ctx.store, await ctx.viewer(), agent, label, expires_in_seconds
        )
        return NewToken(token_info=TokenInfo.from_domain(made.token_info), token=made.token)

    @strawberry.mutation(
        description="Revoke a token (by its principal, or its agent's owner): refused at once "
        "on every server process; its WebSocket connections close (4403)."
    )
    async def revoke_token(self, info: Info, id: strawberry.ID) -> TokenInfo:
        ctx = info.context
        return TokenInfo.from_domain(await service.revoke_token(ctx.store, await ctx.viewer(), id))

    @strawberry.mutation(
        description="Administrators of a project remove members (never its last administrator)."
    )
    async def remove_project_member(self, info: Info, project: str, handle: str) -> bool:
        ctx = info.context
        return await service.remove_project_member(ctx.store, await ctx.viewer(), project, handle)

    @strawberry.mutation(description="A schedule of the caller's: a task at each due time.")
    async def create_schedule(self, info: Info, input: ScheduleInput) -> Schedule:
        ctx = info.context
        made = await service.create_schedule(ctx.store, await ctx.viewer(), input)
        return Schedule.from_domain(made)

    @strawberry.mutation(description="The whole input again; version + 1, next_run_at anew.")
    async def update_schedule(
        self, info: Info, id: strawberry.ID, input: ScheduleInput
    ) -> Schedule:
        ctx = info.context
        changed = await service.update_schedule(ctx.store, await ctx.viewer(), id, input)
        return Schedule.from_domain(changed)

    @strawberry.mutation(description="Nothing is due until resume_schedule.")
    async def pause_schedule(self, info: Info, id: strawberry.ID) -> Schedule:
        ctx = info.context
        return Schedule.from_domain(await service.pause_schedule(ctx.store, await ctx.viewer(), id))

    @strawberry.mutation(description="Due again from now; times missed while paused do not run.")
    async def resume_schedule(self, info: Info, id: strawberry.ID) -> Schedule:
        ctx = info.context
        going = await service.resume_schedule(ctx.store, await ctx.viewer(), id)
        return Schedule.from_domain(going)

    @strawberry.mutation(description="Delete the schedule; the tasks it handed off stay.")
    async def delete_schedule(self, info: Info, id: strawberry.ID) -> bool:
        ctx = info.context
        return await service.delete_schedule(ctx.store, await ctx.viewer(), id)

    @strawberry.mutation(description="Run the schedule once now; next_run_at stays.")
    async def run_schedule_now(self, info: Info, id: strawberry.ID) -> Task:
        ctx = info.context
        return Task.from_domain(await service.run_schedule_now(ctx.store, await ctx.viewer(), id))

    @strawberry.mutation(
        description="Erase an agent (by its owner): its tokens revoked, its id kept but never "
        "usable again; refused with conflict while it is assigned a task not ended."
    )
    async def erase_agent(self, info: Info, agent_id: str) -> Erasure:
        ctx = info.context
        return Erasure.from_domain(
            await service.erase_agent(ctx.store, await ctx.viewer(), agent_id)
        )

    @strawberry.mutation(
        description="Erase the caller (a person) and its agents; refused with conflict while "
        "any of them is assigned a task not ended."
    )
    async def erase_person(self, info: Info, handle: str) -> Erasure:
        ctx = info.context
        return Erasure.from_domain(
            await service.erase_person(ctx.store, await ctx.viewer(), handle)
        )

    # webhooks

    @strawberry.mutation(
        description="A webhook of the caller's, sent the events it may see from now on; its "
        "secret is shown only in this answer."
    )
    async def create_webhook(self, info: Info, input: WebhookInput) -> NewWebhook:
        ctx = info.context
        made = await service.create_webhook(ctx.store, await ctx.viewer(), input)
        return NewWebhook.from_domain(made)

    @strawberry.mutation(description="Delete the webhook and its record of deliveries.")
    async def delete_webhook(self, info: Info, id: strawberry.ID) -> bool:
        ctx = info.context
        return await service.delete_webhook(ctx.store, await ctx.viewer(), id)

    @strawberry.mutation(
        description="Enable the webhook again; it continues from the first undelivered event."
    )
    async def enable_webhook(self, info: Info, id: strawberry.ID) -> Webhook:
        ctx = info.context
        return Webhook.from_domain(await service.enable_webhook(ctx.store, await ctx.viewer(), id))

    @strawberry.mutation(description="A new secret, shown only in this answer.")
    async def rotate_webhook_secret(self, info: Info, id: strawberry.ID) -> NewWebhook:
        ctx = info.context
        rotated = await service.rotate_webhook_secret(ctx.store, await ctx.viewer(), id)
        return NewWebhook.from_domain(rotated)
