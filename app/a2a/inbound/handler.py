"""The A2A methods of one agent's server, each answered through the service layer: the task
store is Prickle's (its log and its tables), never the SDK's.

The caller is authenticated before a method runs (server.py), and rides with the agent in
the call's `state` as a `Call` (call.py). Whether the agent is registered and not erased is
read with what each method reads. A task is this server's when its assignee is the agent and
the caller may see it; any other task is TaskNotFound, as if absent.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any

from a2a.server.context import ServerCallContext
from a2a.server.request_handlers import RequestHandler
from a2a.types import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
)
from a2a.utils.errors import (
    ExtendedAgentCardNotConfiguredError,
    TaskNotFoundError,
    UnsupportedOperationError,
)

from app.a2a.inbound import listing, messages, push, tasks, waiting
from app.a2a.inbound.call import Call, call_of
from app.a2a.inbound.errors import shielded
from app.a2a.inbound.streams import slot
from app.domain.events import Said
from app.domain.task import Task as PrickleTask
from app.domain.webhooks import Webhook
from app.events.hub import FellBehind
from app.events.stream import Filters, events_for, task_of
from app.service import reads, verbs
from app.service.creation import handoff
from app.service.holders import until_revoked
from app.service.webhook_urls import check_url, private_allowed
from app.service.webhooks import WebhookInput, create_webhook, delete_webhook, webhooks_of

PUSH = "an A2A push notification config"


class Handler(RequestHandler):
    @shielded
    async def on_message_send(self, params: SendMessageRequest, context: ServerCallContext) -> Task:
        """The task once it has settled (A2A v1.0 section 3.2.2: ended, or waiting on input
        or on its owner's gate), or as it stands after the wait's bound or when the client
        goes away; `returnImmediately`: as the message left it, at once."""
        call = call_of(context)
        configuration = params.configuration
        length = configuration.history_length if configuration.HasField("history_length") else None
        length = tasks.history_length(length)
        task = await _send(call, params)
        waits = not configuration.return_immediately and not tasks.settled(task)
        if waits and not await waiting.settled(call, task.id):  # gone: nothing read for it
            return tasks.a2a_task(task, call.caller)
        task, said = await _read(call, task.id, said=True)
        return _shown(call, task, said, length)

    @shielded
    async def on_message_send_stream(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Any]:
        call = call_of(context)
        with slot(call.caller):  # refused past the limit before the message is sent
            task = await _send(call, params)
            async with aclosing(_followed(call, task.id)) as items:
                async for item in items:
                    yield item

    @shielded
    async def on_subscribe_to_task(
        self, params: SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncGenerator[Any]:
        call = call_of(context)
        with slot(call.caller):
            task = await _task(call, params.id)
            if call.after is None and task.state in tasks.TERMINAL:
                raise UnsupportedOperationError(message=f"task {task.id} has ended ({task.state})")
            async with aclosing(_followed(call, task.id)) as items:
                async for item in items:
                    yield item

    @shielded
    async def on_get_task(self, params: GetTaskRequest, context: ServerCallContext) -> Task:
        call = call_of(context)
        # unset: the whole history; 0: none (A2A's historyLength)
        length = params.history_length if params.HasField("history_length") else None
        async with call.store.reading():  # a query's reads (the store chooses where)
            task, said = await _read(call, params.id, said=True)
        return _shown(call, task, said, tasks.history_length(length))

    @shielded
    async def on_list_tasks(
        self, params: ListTasksRequest, context: ServerCallContext
    ) -> ListTasksResponse:
        call = call_of(context)
        async with call.store.reading():  # a query's reads (the store chooses where)
            return await listing.page(call, params)

    @shielded
    async def on_cancel_task(self, params: CancelTaskRequest, context: ServerCallContext) -> Task:
        call = call_of(context)
        call.spend()
        await _task(call, params.id)
        cancelled = await verbs.cancel_task(call.store, call.caller, params.id)
        return tasks.a2a_task(cancelled, call.caller)

    @shielded
    async def on_create_task_push_notification_config(
        self, params: TaskPushNotificationConfig, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        call = call_of(context)
        call.spend()
        await _task(call, params.task_id)
        return await _push_to(call, params.task_id, params)

    @shielded
    async def on_get_task_push_notification_config(
        self, params: GetTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        call = call_of(context)
        return push.config(await _push_config(call, params.task_id, params.id))

    @shielded
    async def on_list_task_push_notification_configs(
        self, params: ListTaskPushNotificationConfigsRequest, context: ServerCallContext
    ) -> ListTaskPushNotificationConfigsResponse:
        call = call_of(context)
        await _task(call, params.task_id)
        found = [
            push.config(w)
            for w in await webhooks_of(call.store, call.caller)
            if w.payload == push.PAYLOAD and w.filters.task_id == params.task_id
        ]
        return ListTaskPushNotificationConfigsResponse(configs=found)

    @shielded
    async def on_delete_task_push_notification_config(
        self, params: DeleteTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> None:
        call = call_of(context)
        await _push_config(call, params.task_id, params.id)
        await delete_webhook(call.store, call.caller, params.id)

    @shielded
    async def on_get_extended_agent_card(
        self, params: GetExtendedAgentCardRequest, context: ServerCallContext
    ) -> AgentCard:
        raise ExtendedAgentCardNotConfiguredError(message="the agent card is the whole card")


def _shown(call: Call, task: PrickleTask, said: list[Said], length: int | None) -> Task:
    """The task with the last `length` messages of its history (None: all of them) and the
    note of the move that brought it to its state."""
    history = tasks.last(tasks.history_of(task, said), length)
    note = next((s.note for s in reversed(said) if s.to_state == task.state), None)
    return tasks.a2a_task(task, call.caller, history, note)


async def _send(call: Call, params: SendMessageRequest) -> PrickleTask:
    """A message naming a task answers it; any other hands a new task to the agent. With a
    push notification config in its configuration, that config is set on the task too."""
    call.spend()
    message = params.message
    inline = params.configuration.HasField("task_push_notification_config")
    if inline:  # refused before anything is done, as create_webhook would refuse it
        await _check_push(call, params.configuration.task_push_notification_config)
    if message.task_id:
        await _task(call, message.task_id)
        answer = messages.text_of(message)
        task = await verbs.answer(call.store, call.caller, message.task_id, answer=answer)
    else:
        inp = messages.handoff_input(message, call.caller, call.agent)
        task = await handoff(call.store, call.caller, inp)
    if inline:
        wanted = params.configuration.task_push_notification_config
        if not await _pushed_to(call, task.id, wanted.url):  # not again on a resend
            await _push_to(call, task.id, wanted)
    return task


async def _push_to(
    call: Call, task_id: str, wanted: TaskPushNotificationConfig
) -> TaskPushNotificationConfig:
    """A push notification config of the caller's on the task: a webhook sending the
    config's `authentication` as `Authorization`, signed with the secret the client asked
    for (push.py) or one made now (answered once, in a header: `Call.secret_made`)."""
    asked = push.asked(wanted, call.secret_asked)
    made = await create_webhook(
        call.store,
        call.caller,
        WebhookInput(url=wanted.url, task_id=task_id, description=PUSH),
        payload=push.PAYLOAD,
        push_token=wanted.token or None,
        secret=asked.secret,
        push_auth=asked.authorization,
    )
    if asked.secret is None:
        call.secret_made = made.secret
    return push.config(made.webhook)


async def _check_push(call: Call, wanted: TaskPushNotificationConfig) -> None:
    push.asked(wanted, call.secret_asked)
    await check_url(wanted.url, private_allowed())


async def _pushed_to(call: Call, task_id: str, url: str) -> bool:
    """Whether the caller has a push notification config on the task for `url` already."""
    return any(
        w.payload == push.PAYLOAD and w.filters.task_id == task_id and w.url == url
        for w in await webhooks_of(call.store, call.caller)
    )


async def _task(call: Call, task_id: str) -> PrickleTask:
    """The task, if it is this agent's and the caller may see it; TaskNotFound if not."""
    task, _ = await _read(call, task_id)
    return task


async def _read(call: Call, task_id: str, said: bool = False) -> tuple[PrickleTask, list[Said]]:
    """The agent's task (TaskNotFound unless the agent serves and the caller sees it), and
    with `said` what its events said, in one read."""
    found = await reads.agent_task(call.store, call.caller, call.agent, task_id, said)
    if not found.serves:
        raise TaskNotFoundError(message=f"no agent {call.agent[:80]!r} here")
    if found.task is None:
        raise TaskNotFoundError(message=f"no task {task_id[:80]!r} at {call.agent}")
    return found.task, found.said


async def _push_config(call: Call, task_id: str, config_id: str) -> Webhook:
    """The caller's push notification config of the task; TaskNotFound if none."""
    await _task(call, task_id)
    for webhook in await webhooks_of(call.store, call.caller):
        ours = webhook.payload == push.PAYLOAD and webhook.filters.task_id == task_id
        if webhook.id == config_id and ours:
            return webhook
    raise TaskNotFoundError(message=f"no push notification config {config_id[:80]!r} of yours")


def _followed(call: Call, task_id: str) -> AsyncGenerator[Any, None]:
    """`_follow` after the request's Last-Event-ID, until the caller's token is revoked."""
    stream = _follow(call, task_id, call.after)
    return until_revoked(stream, call.store, call.credential, refuse=False)


async def _follow(call: Call, task_id: str, after: int | None) -> AsyncGenerator[Any, None]:
    """The task's events after `after` (none: its state now first, as a Task), each as an
    A2A stream event whose cursor is noted for its SSE `id:`; until the task ends."""
    stream = events_for(call.hub, call.store, call.caller, Filters(task_id=task_id), after)
    try:
        async for event in stream:
            task = task_of(event)
            if event.kind == "snapshot":  # read whole: an event's task has no question
                task = await _same(call, task)
                items = [tasks.a2a_task(task, call.caller, cursor=event.cursor)]
            else:
                items = tasks.stream_events(event, task, call.caller)
            for item in items:
                call.cursors.append(event.cursor)
                yield item
            if task.state in tasks.TERMINAL:
                return
    except FellBehind:
        return  # the client resumes with its Last-Event-ID
    finally:
        await stream.aclose()


async def _same(call: Call, task: PrickleTask) -> PrickleTask:
    """The task read whole, if it is still at the version in hand; else as it is in hand."""
    whole = await reads.task(call.store, call.caller, task.id)
    return whole if whole is not None and whole.version == task.version else task
