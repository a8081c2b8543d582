"""The task_events subscriptions: replay from a cursor (or a snapshot), then live; one event
a message (`task_events`) or lists of them (`task_event_batches`)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

import strawberry

from app.api import sse
from app.api.queries import task_id as checked_task_id
from app.api.task_types import TaskEvent
from app.domain.errors import InvalidInput
from app.events.stream import Filters, Rows, batches_for, events_for
from app.service.holders import until_revoked

DEFAULT_BATCH_SIZE = 100
MAX_BATCH_SIZE = 1000

Send = Callable[[TaskEvent], Awaitable[bool]]


class Senders:
    """How an operation's events may be sent past Strawberry's stream: on the plain path,
    never (each is None). The API's fast paths put theirs here when the schema is built
    with them (app/api/fast: `wire`); this module does not know them."""

    # this operation's sender of single events (False: left to Strawberry), or None
    direct: Callable[[], Send | None] = staticmethod(lambda: None)
    # this operation's sender of whole lists (with the fields it reads), or None
    batches: Callable[[strawberry.Info], Any] = staticmethod(lambda info: None)


def batch_size_checked(batch_size: int) -> int:
    if not 1 <= batch_size <= MAX_BATCH_SIZE:
        raise InvalidInput(f"batch_size: must be between 1 and {MAX_BATCH_SIZE}, not {batch_size}")
    return batch_size


@strawberry.type
class Subscription:
    @strawberry.subscription(
        description="Every event the caller may see, in order. With `after` (an event cursor), "
        "what came after it first; with `task_id` and no `after`, a `snapshot` event first."
    )
    async def task_events(
        self,
        info: strawberry.Info,
        project: str | None = None,
        task_id: strawberry.ID | None = None,
        assignee: str | None = None,
        after: str | None = None,
    ) -> AsyncGenerator[TaskEvent, None]:
        ctx = info.context
        viewer = await ctx.viewer()
        filters = Filters(project, checked_task_id(task_id, "task_id"), assignee)
        start = sse.resumes_after(ctx.request, after)
        with sse.stream_place(ctx.request, viewer):
            stream = events_for(ctx.hub, ctx.store, viewer, filters, start)
            if sse.is_event_stream(ctx.request):
                assert ctx.credential is not None  # authenticated before it opened (by the app)
                stream = until_revoked(stream, ctx.store, ctx.credential)
            send = Senders.direct()
            try:
                async for event in stream:
                    payload = TaskEvent.from_domain(event)
                    if send is None or not await send(payload):
                        sse.sending(ctx.request, payload.cursor)
                        yield payload
            finally:
                await stream.aclose()

    @strawberry.subscription(
        description="The events of `task_events`, in lists of at most `batch_size` (1 to "
        f"{MAX_BATCH_SIZE}): a subscriber far behind catches up in full lists, then each list "
        "holds what arrived meanwhile. The same order, visibility and cursors; resume after "
        "the last event's cursor."
    )
    async def task_event_batches(
        self,
        info: strawberry.Info,
        project: str | None = None,
        task_id: strawberry.ID | None = None,
        assignee: str | None = None,
        after: str | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
    ) -> AsyncGenerator[list[TaskEvent], None]:
        ctx = info.context
        viewer = await ctx.viewer()
        filters = Filters(project, checked_task_id(task_id, "task_id"), assignee)
        size = batch_size_checked(batch_size)
        start = sse.resumes_after(ctx.request, after)
        sender = Senders.batches(info)
        fields = sender.fields if sender is not None else None
        with sse.stream_place(ctx.request, viewer):
            stream = batches_for(ctx.hub, ctx.store, viewer, filters, start, size, fields)
            if sse.is_event_stream(ctx.request):
                assert ctx.credential is not None  # authenticated before it opened (by the app)
                stream = until_revoked(stream, ctx.store, ctx.credential)
            try:
                async for batch in stream:
                    if sender is not None:
                        await sender.send(batch)
                        continue
                    assert not isinstance(batch, Rows)  # rows only where `fields` were given
                    payload = [TaskEvent.from_domain(e) for e in batch]
                    sse.sending(ctx.request, payload[-1].cursor)
                    yield payload
            finally:
                await stream.aclose()
