"""Mutations: the creating verbs, the task verbs (built from their declarations) and the
owners' own (rules, members, tokens, schedules, erasure, webhooks), in that order. Each
calls its service function with the caller and its input (the service's own input types,
as GraphQL inputs), and returns the result.

Refusals are the service's ProtocolErrors; the API's error mapping turns them into GraphQL
errors.
"""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.types.field import StrawberryField

from app.api import verbs
from app.api.inputs import (
    CapabilityInput,
    GateRuleInput,
    HandoffInput,
    RequestCapabilityInput,
    ResultRuleInput,
    ScheduleInput,
)
from app.api.principal_types import AgentRegistration, Erasure, NewToken, TokenInfo
from app.api.remote_agents import RemoteAgent
from app.api.rule_types import GateRule, ResultRule
from app.api.schedule_types import Schedule
from app.api.task_types import Task
from app.api.webhooks import NewWebhook, Webhook, WebhookInput
from app.service import admin, creation, credentials, erasure, remote_agents, schedules, webhooks

Info = strawberry.Info


class _Creating:
    @strawberry.mutation(description="Hand a task to a named agent; its owner's gate decides.")
    async def handoff(self, info: Info, input: HandoffInput) -> Task:
        ctx = info.context
        return Task.from_domain(await creation.handoff(ctx.store, await ctx.viewer(), input))

    @strawberry.mutation(description="Hand a task to an agent offering the capability.")
    async def request_capability(self, info: Info, input: RequestCapabilityInput) -> Task:
        ctx = info.context
        task = await creation.request_capability(ctx.store, await ctx.viewer(), input)
        return Task.from_domain(task)


class _Owning:
    @strawberry.mutation(
        description="Register (or re-register) `<caller>/<name>`; returns a new token."
    )
    async def register_agent(
        self, info: Info, name: str, capabilities: list[CapabilityInput] | None = None
    ) -> AgentRegistration:
        ctx = info.context
        done = await admin.register_agent(ctx.store, await ctx.viewer(), name, capabilities)
        return AgentRegistration(agent_id=done.agent_id, token=done.token)

    @strawberry.mutation(
        description="Register (or change) `<caller>/<name>` as a remote A2A agent: its agent "
        "card's URL (or its base URL) and the credential sent to it as a bearer token. Tasks "
        "routed to it are sent to it by A2A, and its moves are made on its behalf."
    )
    async def register_remote_agent(
        self,
        info: Info,
        name: str,
        card_url: str,
        credential: str | None = None,
        capabilities: list[CapabilityInput] | None = None,
    ) -> RemoteAgent:
        ctx = info.context
        made = await remote_agents.register_remote_agent(
            ctx.store, await ctx.viewer(), name, card_url, credential, capabilities
        )
        return RemoteAgent.from_domain(made)

    @strawberry.mutation(
        description="Stop sending tasks to the remote agent; it stays an agent of the caller's."
    )
    async def remove_remote_agent(self, info: Info, agent: str) -> bool:
        ctx = info.context
        return await remote_agents.remove_remote_agent(ctx.store, await ctx.viewer(), agent)

    @strawberry.mutation(
        description="Serve the agent's A2A card (`/a2a/{owner}/{agent}/.well-known/"
        "agent-card.json`) without a token (`public: true`), or only with one (the default); "
        "by the agent's owner. Returns the value set."
    )
    async def set_agent_card_public(self, info: Info, agent_id: str, public: bool) -> bool:
        ctx = info.context
        return await admin.set_agent_card_public(ctx.store, await ctx.viewer(), agent_id, public)

    @strawberry.mutation
    async def set_gate_rule(self, info: Info, input: GateRuleInput) -> GateRule:
        ctx = info.context
        return GateRule.from_domain(await admin.set_gate_rule(ctx.store, await ctx.viewer(), input))

    @strawberry.mutation
    async def delete_gate_rule(self, info: Info, id: strawberry.ID) -> bool:
        ctx = info.context
        return await admin.delete_gate_rule(ctx.store, await ctx.viewer(), id)

    @strawberry.mutation
    async def set_result_rule(self, info: Info, input: ResultRuleInput) -> ResultRule:
        ctx = info.context
        rule = await admin.set_result_rule(ctx.store, await ctx.viewer(), input)
        return ResultRule.from_domain(rule)

    @strawberry.mutation
    async def delete_result_rule(self, info: Info, id: strawberry.ID) -> bool:
        ctx = info.context
        return await admin.delete_result_rule(ctx.store, await ctx.viewer(), id)

    @strawberry.mutation(description="Administrators of a project add members, who see its tasks.")
    async def add_project_member(self, info: Info, project: str, handle: str) -> bool:
        ctx = info.context
        return await admin.add_project_member(ctx.store, await ctx.viewer(), project, handle)

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
        made = await credentials.create_token(
            ctx.store, await ctx.viewer(), agent, label, expires_in_seconds
        )
        return NewToken(token_info=TokenInfo.from_domain(made.token_info), token=made.token)

    @strawberry.mutation(
        description="Revoke a token (by its principal, or its agent's owner): refused at once "
        "on every server process; its WebSocket connections close (4403)."
    )
    async def revoke_token(self, info: Info, id: strawberry.ID) -> TokenInfo:
        ctx = info.context
        return TokenInfo.from_domain(
            await credentials.revoke_token(ctx.store, await ctx.viewer(), id)
        )

    @strawberry.mutation(
        description="Administrators of a project remove members (never its last administrator)."
    )
    async def remove_project_member(self, info: Info, project: str, handle: str) -> bool:
        ctx = info.context
        return await admin.remove_project_member(ctx.store, await ctx.viewer(), project, handle)

    @strawberry.mutation(description="A schedule of the caller's: a task at each due time.")
    async def create_schedule(self, info: Info, input: ScheduleInput) -> Schedule:
        ctx = info.context
        made = await schedules.create_schedule(ctx.store, await ctx.viewer(), input)
        return Schedule.from_domain(made)

    @strawberry.mutation(description="The whole input again; version + 1, next_run_at anew.")
    async def update_schedule(
        self, info: Info, id: strawberry.ID, input: ScheduleInput
    ) -> Schedule:
        ctx = info.context
        changed = await schedules.update_schedule(ctx.store, await ctx.viewer(), id, input)
        return Schedule.from_domain(changed)

    @strawberry.mutation(description="Nothing is due until resume_schedule.")
    async def pause_schedule(self, info: Info, id: strawberry.ID) -> Schedule:
        ctx = info.context
        return Schedule.from_domain(
            await schedules.pause_schedule(ctx.store, await ctx.viewer(), id)
        )

    @strawberry.mutation(description="Due again from now; times missed while paused do not run.")
    async def resume_schedule(self, info: Info, id: strawberry.ID) -> Schedule:
        ctx = info.context
        going = await schedules.resume_schedule(ctx.store, await ctx.viewer(), id)
        return Schedule.from_domain(going)

    @strawberry.mutation(description="Delete the schedule; the tasks it handed off stay.")
    async def delete_schedule(self, info: Info, id: strawberry.ID) -> bool:
        ctx = info.context
        return await schedules.delete_schedule(ctx.store, await ctx.viewer(), id)

    @strawberry.mutation(description="Run the schedule once now; next_run_at stays.")
    async def run_schedule_now(self, info: Info, id: strawberry.ID) -> Task:
        ctx = info.context
        return Task.from_domain(await schedules.run_schedule_now(ctx.store, await ctx.viewer(), id))

    @strawberry.mutation(
        description="Erase an agent (by its owner): its tokens revoked, its id kept but never "
        "usable again; refused with conflict while it is assigned a task not ended."
    )
    async def erase_agent(self, info: Info, agent_id: str) -> Erasure:
        ctx = info.context
        return Erasure.from_domain(
            await erasure.erase_agent(ctx.store, await ctx.viewer(), agent_id)
        )

    @strawberry.mutation(
        description="Erase the caller (a person) and its agents; refused with conflict while "
        "any of them is assigned a task not ended."
    )
    async def erase_person(self, info: Info, handle: str) -> Erasure:
        ctx = info.context
        return Erasure.from_domain(
            await erasure.erase_person(ctx.store, await ctx.viewer(), handle)
        )

    # webhooks

    @strawberry.mutation(
        description="A webhook of the caller's, sent the events it may see from now on; its "
        "secret is shown only in this answer."
    )
    async def create_webhook(self, info: Info, input: WebhookInput) -> NewWebhook:
        ctx = info.context
        made = await webhooks.create_webhook(ctx.store, await ctx.viewer(), input)
        return NewWebhook.from_domain(made)

    @strawberry.mutation(description="Delete the webhook and its record of deliveries.")
    async def delete_webhook(self, info: Info, id: strawberry.ID) -> bool:
        ctx = info.context
        return await webhooks.delete_webhook(ctx.store, await ctx.viewer(), id)

    @strawberry.mutation(
        description="Enable the webhook again; it continues from the first undelivered event."
    )
    async def enable_webhook(self, info: Info, id: strawberry.ID) -> Webhook:
        ctx = info.context
        return Webhook.from_domain(await webhooks.enable_webhook(ctx.store, await ctx.viewer(), id))

    @strawberry.mutation(description="A new secret, shown only in this answer.")
    async def rotate_webhook_secret(self, info: Info, id: strawberry.ID) -> NewWebhook:
        ctx = info.context
        rotated = await webhooks.rotate_webhook_secret(ctx.store, await ctx.viewer(), id)
        return NewWebhook.from_domain(rotated)


def _fields(cls: type) -> dict[str, Any]:
    return {name: f for name, f in vars(cls).items() if isinstance(f, StrawberryField)}


Mutation = strawberry.type(
    type(
        "Mutation",
        (),
        {"__module__": __name__, **_fields(_Creating), **verbs.fields(), **_fields(_Owning)},
    )
)
