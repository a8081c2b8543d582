"""Events sent straight to a graphql-transport-ws subscriber, past Strawberry's stream.

An event a subscription yields passes through five async generators (the resolver,
graphql-core's mapping, Strawberry's stream, its extensions, the protocol handler) before
it is written, and with 1,000 subscribers that plumbing cost more than the writes
(docs/performance.md). On graphql-transport-ws the resolver sends each event itself:
it takes the subscription's result for the event (shared by the `SharingExecutor`) and
sends it with Strawberry's own `Operation.send_next` (through the Strawberry compat shim), so
the message is the one Strawberry would send. A result with errors, and every subscription
on the legacy graphql-ws protocol, still goes through Strawberry, which shapes the errors.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any

from app.api.fast.sharing import event_result, subscribing
from app.api.task_types import TaskEvent
from app.api.ws import TransportWSHandler
from app.compat import strawberry as strawberry_compat

Send = Callable[[TaskEvent], Awaitable[bool]]

running: ContextVar[Any] = ContextVar("running", default=None)
"""The graphql-transport-ws operation (Strawberry's Operation) whose task this is."""


def direct_sender() -> Send | None:
    """A sender for this task's operation, or None where events must go through Strawberry.
    The sender answers False for an event it left to Strawberry."""
    operation, executor = running.get(), subscribing.get()
    if operation is None or executor is None:
        return None

    async def send(payload: TaskEvent) -> bool:
        if not strawberry_compat.operation_is_open(operation):
            return True  # completed: Strawberry is cancelling this task
        result = event_result(executor, payload)
        if inspect.isawaitable(result):
            result = await result
        if result.errors:
            return False
        await strawberry_compat.send_result(operation, result)
        return True

    return send


class DeliveringHandler(TransportWSHandler):
    """graphql-transport-ws (`TransportWSHandler`) whose operations' events are sent by
    `direct_sender`: each operation's task knows its operation (`running`)."""

    async def run_operation(self, operation: Any) -> None:
        running.set(operation)  # this is the operation's own task
        await super().run_operation(operation)
