"""`AsyncClient`: the server's verbs and queries as typed methods over the generated layer.

Each verb returns the task as the server left it (`Task`, with `version` and
`allowed_verbs`); each refusal raises the exception of its code (prickle_client.errors).
A call that failed in transport is retried only when repeating it cannot move a task twice:
queries, and the verbs that carry an idempotency key (handoff and request_capability with
`idempotency_key`, return_result with the result's `submission_id`).

A call the server answered `unavailable` (its database is down) is retried after the
`retry_after` it says, for at most `OUTAGE_SECONDS`, when nothing changed (`outcome: none`)
or repeating it is safe. When the outcome is unknown (the commit's answer was lost), a verb
on a task reads the task's newest event first: if it is this verb by this principal, the
move was made and its task is returned; otherwise the verb is sent again. Past that,
`Unavailable` is raised.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from functools import partial
from typing import Any, TypeVar, cast

import httpx

from ._base import Shape, Task, _enum, _shape
from ._transport import Transport, http_client, ws_url
from ._verbs import TaskVerbs
from .errors import TransportFailed, Unavailable
from .events import EventBatchStream, EventStream
from .generated.allowed_moves import AllowedMovesAllowedMoves
from .generated.async_base_client import HttpClient
from .generated.create_token import CreateTokenCreateToken
from .generated.create_webhook import CreateWebhookCreateWebhook
from .generated.enums import TaskState
from .generated.erase_agent import EraseAgentEraseAgent
from .generated.erase_person import ErasePersonErasePerson
from .generated.fragments import EventFields, ScheduleFields, WebhookFields
from .generated.input_types import (
    CapabilityInput,
    GateRuleInput,
    HandoffInput,
    PacketInput,
    RequestCapabilityInput,
    ResultInput,
    ResultRuleInput,
    ScheduleInput,
    WebhookInput,
)
from .generated.me import MeMe
from .generated.on_task_events import OnTaskEventsTaskEvents
from .generated.principal import PrincipalPrincipal
from .generated.register_agent import RegisterAgentRegisterAgent
from .generated.revoke_token import RevokeTokenRevokeToken
from .generated.rotate_webhook_secret import RotateWebhookSecretRotateWebhookSecret
from .generated.set_gate_rule import SetGateRuleSetGateRule
from .generated.set_result_rule import SetResultRuleSetResultRule
from .generated.task_graph import TaskGraphTaskGraph
from .generated.task_states import TaskStatesTaskStates
from .generated.task_verbs import TaskVerbsTaskVerbs
from .generated.tasks import TasksTasks
from .generated.tokens import TokensTokens
from .generated.webhook_deliveries import WebhookDeliveriesWebhookDeliveries

T = TypeVar("T")
Event = OnTaskEventsTaskEvents
Principal = MeMe
TaskPage = TasksTasks
RETRIES = 3
OUTAGE_SECONDS = 30.0  # how long calls are retried through a database outage


def _same(task: Any) -> Task:
    return cast(Task, task)


def _return_result(done: Any) -> Task:
    return cast(Task, done.return_result)


def _failed(error: httpx.TransportError, attempts: int, retried: bool) -> TransportFailed:
    what = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    if retried:
        return TransportFailed(f"no answer after {attempts} attempts ({what})", error, attempts)
    text = f"no answer ({what}); not retried: the move may have been made, read the task"
    return TransportFailed(text, error, attempts)


class AsyncClient(TaskVerbs):
    """A client of one server (`url`: its /graphql endpoint) as the principal of `token`.
    Each task verb is a method (`TaskVerbs`, generated from the server's schema)."""

    def __init__(self, url: str, token: str, *, timeout: float = 30.0) -> None:
        self.url = url
        self.token = token
        self._http = http_client(token, timeout)
        self._api = Transport(
            url=url,
            http_client=cast(HttpClient, self._http),
            ws_url=ws_url(url),
            ws_connection_init_payload={"Authorization": f"Bearer {token}"},
        )

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _call(self, call: Callable[[], Awaitable[T]], idempotent: bool) -> T:
        """`call()`, retried with backoff on transport failures when it is idempotent, and
        through a database outage when nothing changed or it is idempotent."""
        attempt = 0
        deadline = time.monotonic() + OUTAGE_SECONDS
        while True:
            try:
                return await call()
            except httpx.TransportError as error:
                attempt += 1
                if not idempotent or attempt > RETRIES:
                    raise _failed(error, attempt, idempotent) from error
                await asyncio.sleep(0.2 * 2**attempt)
            except Unavailable as error:
                wait = error.retry_after or 1.0
                safe = idempotent or error.outcome == "none"
                if not safe or time.monotonic() + wait > deadline:
                    raise
                await asyncio.sleep(wait)

    async def _verb(
        self,
        task_id: str,
        verb: str,
        call: Callable[[], Awaitable[Any]],
        pick: Callable[[Any], Task] | None = None,
    ) -> Task:
        """A verb on a task; when the server lost the answer to its commit, the task's newest
        event says whether it was made before it is sent again. `pick`: the task from the
        answer, by default the answer itself."""
        pick = pick or _same
        try:
            return pick(await self._call(call, False))
        except Unavailable as error:
            if error.outcome != "unknown":
                raise
            await asyncio.sleep(error.retry_after or 1.0)
            made = await self._made(task_id, verb)
            if made is not None:
                return made
            return pick(await self._call(call, False))

    async def _made(self, task_id: str, verb: str) -> Task | None:
        """The task, if its newest event is `verb` made by this principal; else None."""
        newest, after = None, None
        while True:
            page = await self.task_events(task_id=task_id, after=after, first=100)
            if not page:
                break
            newest, after = page[-1], page[-1].cursor
        me = await self.me()
        if newest is None or newest.verb != verb or newest.actor != me.id:
            return None
        return await self.task(task_id)

    # creating tasks

    async def handoff(
        self,
        project: str,
        assignee: str,
        packet: PacketInput | Shape,
        *,
        parent_task_id: str | None = None,
        display_title: str | None = None,
        turn_budget: int | None = None,
        origin_message_id: str | None = None,
        idempotency_key: str | None = None,
    ) -> Task:
        """Hand a task to a named agent; its owner's gate routes, holds or rejects it."""
        given = HandoffInput(
            project=project,
            assignee=assignee,
            packet=_shape(PacketInput, packet),
            parent_task_id=parent_task_id,
            display_title=display_title,
            turn_budget=turn_budget,
            origin_message_id=origin_message_id,
            idempotency_key=idempotency_key,
        )
        done = await self._call(partial(self._api.handoff, given), idempotency_key is not None)
        return done.handoff

    async def request_capability(
        self,
        project: str,
        capability: CapabilityInput | Shape,
        packet: PacketInput | Shape,
        *,
        parent_task_id: str | None = None,
        display_title: str | None = None,
        turn_budget: int | None = None,
        origin_message_id: str | None = None,
        idempotency_key: str | None = None,
    ) -> Task:
        """Hand a task to an agent offering the capability."""
        given = RequestCapabilityInput(
            project=project,
            capability=_shape(CapabilityInput, capability),
            packet=_shape(PacketInput, packet),
            parent_task_id=parent_task_id,
            display_title=display_title,
            turn_budget=turn_budget,
            origin_message_id=origin_message_id,
            idempotency_key=idempotency_key,
        )
        call = partial(self._api.request_capability, given)
        return (await self._call(call, idempotency_key is not None)).request_capability

    # the task verbs are TaskVerbs' (generated); return_result, retried when repeating it
    # cannot return it twice, is written here

    async def return_result(
        self,
        task_id: str,
        result: ResultInput | Shape,
        *,
        expected_version: int | None = None,
    ) -> Task:
        """Return a result with evidence; the requester's owner's result policy judges it.
        Retried on transport failures only when the result has a `submission_id`."""
        given = _shape(ResultInput, result)
        call = partial(self._api.return_result, task_id, given, expected_version)
        pick = _return_result
        if given.submission_id is not None:  # repeating it cannot return it twice
            return pick(await self._call(call, True))
        return await self._verb(task_id, "return_result", call, pick)

    # any document

    async def execute(self, document: str, variables: dict[str, Any] | None = None) -> Any:
        """`data` of any GraphQL document (e.g. a selection of fields of your own); errors
        raise as for the methods. Never retried."""
        response = await self._api.execute(document, variables=variables)
        return self._api.get_data(response)

    # queries

    async def me(self) -> Principal:
        return (await self._call(self._api.me, True)).me

    async def task(self, task_id: str) -> Task | None:
        """The task, or None when it does not exist or is not visible."""
        return (await self._call(partial(self._api.task, task_id), True)).task

    async def tasks_page(
        self,
        *,
        project: str | None = None,
        state: TaskState | str | None = None,
        assignee: str | None = None,
        requester: str | None = None,
        parent_task_id: str | None = None,
        first: int = 50,
        after: str | None = None,
    ) -> TaskPage:
        """One page of visible tasks, oldest first (`page_info.end_cursor` for the next)."""
        which = None if state is None else _enum(TaskState, state)
        call = partial(
            self._api.tasks, project, which, assignee, requester, parent_task_id, first, after
        )
        return (await self._call(call, True)).tasks

    async def tasks(
        self,
        *,
        project: str | None = None,
        state: TaskState | str | None = None,
        assignee: str | None = None,
        requester: str | None = None,
        parent_task_id: str | None = None,
        page_size: int = 100,
    ) -> AsyncIterator[Task]:
        """Every visible task that matches, oldest first, fetched a page at a time."""
        after: str | None = None
        while True:
            page = await self.tasks_page(
                project=project,
                state=state,
                assignee=assignee,
                requester=requester,
                parent_task_id=parent_task_id,
                first=page_size,
                after=after,
            )
            for edge in page.edges:
                yield edge.node
            if not page.page_info.has_next_page:
                return
            after = page.page_info.end_cursor

    async def task_events(
        self,
        *,
        task_id: str | None = None,
        project: str | None = None,
        after: str | None = None,
        first: int = 50,
    ) -> list[EventFields]:
        """One page of the history of visible tasks, oldest first."""
        call = partial(self._api.task_events, task_id, project, after, first)
        page = (await self._call(call, True)).task_events
        return [edge.node for edge in page.edges]

    async def task_graph(self, task_id: str, depth: int = 4) -> TaskGraphTaskGraph | None:
        """The task's graph (parents, subtasks, dependencies) to `depth` hops; None when
        the task is not visible."""
        call = partial(self._api.task_graph, task_id, depth)
        return (await self._call(call, True)).task_graph

    async def task_states(self) -> list[TaskStatesTaskStates]:
        """Every task state: what it means, whether it is final, where it moves."""
        return (await self._call(self._api.task_states, True)).task_states

    async def task_verbs(self) -> list[TaskVerbsTaskVerbs]:
        """Every task verb as the server declares it: arguments, guide, form."""
        return (await self._call(self._api.task_verbs, True)).task_verbs

    async def allowed_moves(self) -> list[AllowedMovesAllowedMoves]:
        """The transition table: each allowed move, its verbs and who may make it."""
        return (await self._call(self._api.allowed_moves, True)).allowed_moves

    async def principal(self, id: str) -> PrincipalPrincipal | None:
        """A person or agent by handle or agent id; None when unknown."""
        return (await self._call(partial(self._api.principal, id), True)).principal

    async def tokens(self) -> list[TokensTokens]:
        """The caller's tokens (an owner's: its agents' too), never their secrets."""
        return (await self._call(self._api.tokens, True)).tokens

    async def schedules(self, *, project: str | None = None) -> list[ScheduleFields]:
        return (await self._call(partial(self._api.schedules, project), True)).schedules

    async def webhooks(self) -> list[WebhookFields]:
        return (await self._call(self._api.webhooks, True)).webhooks

    async def webhook_deliveries(
        self, webhook_id: str, *, first: int = 50, after: str | None = None
    ) -> list[WebhookDeliveriesWebhookDeliveries]:
        """One page of a webhook's delivery attempts, newest first."""
        call = partial(self._api.webhook_deliveries, webhook_id, first, after)
        return (await self._call(call, True)).webhook_deliveries

    # the owner's administration (never retried)

    async def register_agent(
        self, name: str, capabilities: list[CapabilityInput | Shape] | None = None
    ) -> RegisterAgentRegisterAgent:
        """Register an agent of the calling owner: its id and its first token."""
        given = None if capabilities is None else [_shape(CapabilityInput, c) for c in capabilities]
        call = partial(self._api.register_agent, name, given)
        return (await self._call(call, False)).register_agent

    async def set_gate_rule(self, rule: GateRuleInput | Shape) -> SetGateRuleSetGateRule:
        call = partial(self._api.set_gate_rule, _shape(GateRuleInput, rule))
        return (await self._call(call, False)).set_gate_rule

    async def delete_gate_rule(self, id: str) -> bool:
        return (await self._call(partial(self._api.delete_gate_rule, id), False)).delete_gate_rule

    async def set_result_rule(self, rule: ResultRuleInput | Shape) -> SetResultRuleSetResultRule:
        call = partial(self._api.set_result_rule, _shape(ResultRuleInput, rule))
        return (await self._call(call, False)).set_result_rule

    async def delete_result_rule(self, id: str) -> bool:
        call = partial(self._api.delete_result_rule, id)
        return (await self._call(call, False)).delete_result_rule

    async def add_project_member(self, project: str, handle: str) -> bool:
        call = partial(self._api.add_project_member, project, handle)
        return (await self._call(call, False)).add_project_member

    async def remove_project_member(self, project: str, handle: str) -> bool:
        call = partial(self._api.remove_project_member, project, handle)
        return (await self._call(call, False)).remove_project_member

    async def create_token(
        self,
        *,
        agent: str | None = None,
        label: str | None = None,
        expires_in_seconds: int | None = None,
    ) -> CreateTokenCreateToken:
        """A new token for the caller, or for one of its agents (`agent`)."""
        call = partial(self._api.create_token, agent, label, expires_in_seconds)
        return (await self._call(call, False)).create_token

    async def revoke_token(self, id: str) -> RevokeTokenRevokeToken:
        return (await self._call(partial(self._api.revoke_token, id), False)).revoke_token

    async def create_schedule(self, schedule: ScheduleInput | Shape) -> ScheduleFields:
        call = partial(self._api.create_schedule, _shape(ScheduleInput, schedule))
        return (await self._call(call, False)).create_schedule

    async def update_schedule(self, id: str, schedule: ScheduleInput | Shape) -> ScheduleFields:
        call = partial(self._api.update_schedule, id, _shape(ScheduleInput, schedule))
        return (await self._call(call, False)).update_schedule

    async def pause_schedule(self, id: str) -> ScheduleFields:
        return (await self._call(partial(self._api.pause_schedule, id), False)).pause_schedule

    async def resume_schedule(self, id: str) -> ScheduleFields:
        return (await self._call(partial(self._api.resume_schedule, id), False)).resume_schedule

    async def delete_schedule(self, id: str) -> bool:
        return (await self._call(partial(self._api.delete_schedule, id), False)).delete_schedule

    async def run_schedule_now(self, id: str) -> Task:
        """Make the schedule's task now; the task made."""
        return (await self._call(partial(self._api.run_schedule_now, id), False)).run_schedule_now

    async def erase_agent(self, agent_id: str) -> EraseAgentEraseAgent:
        return (await self._call(partial(self._api.erase_agent, agent_id), False)).erase_agent

    async def erase_person(self, handle: str) -> ErasePersonErasePerson:
        return (await self._call(partial(self._api.erase_person, handle), False)).erase_person

    async def create_webhook(self, webhook: WebhookInput | Shape) -> CreateWebhookCreateWebhook:
        """A webhook and its signing secret (shown this once)."""
        call = partial(self._api.create_webhook, _shape(WebhookInput, webhook))
        return (await self._call(call, False)).create_webhook

    async def delete_webhook(self, id: str) -> bool:
        return (await self._call(partial(self._api.delete_webhook, id), False)).delete_webhook

    async def enable_webhook(self, id: str) -> WebhookFields:
        return (await self._call(partial(self._api.enable_webhook, id), False)).enable_webhook

    async def rotate_webhook_secret(self, id: str) -> RotateWebhookSecretRotateWebhookSecret:
        call = partial(self._api.rotate_webhook_secret, id)
        return (await self._call(call, False)).rotate_webhook_secret

    def events(
        self,
        *,
        project: str | None = None,
        task_id: str | None = None,
        assignee: str | None = None,
        after: str | None = None,
    ) -> EventStream:
        """Every event the caller may see, live; reconnects and resumes by itself."""
        return EventStream(self._api, project, task_id, assignee, after)

    def event_batches(
        self,
        *,
        project: str | None = None,
        task_id: str | None = None,
        assignee: str | None = None,
        after: str | None = None,
        batch_size: int = 100,
    ) -> EventBatchStream:
        """`events` in lists of at most `batch_size` (the task_event_batches subscription):
        a subscriber far behind catches up in full lists; reconnects and resumes alike."""
        return EventBatchStream(self._api, project, task_id, assignee, after, batch_size=batch_size)
