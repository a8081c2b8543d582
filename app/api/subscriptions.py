"""The task_events subscription: replay from a cursor (or a snapshot), then live."""

from __future__ import annotations

from collections.abc import AsyncGenerator

import strawberry

from app.api import sse
from app.api.delivery import direct_sender
from app.api.queries import event_cursor
from app.api.queries import task_id as checked_task_id
from app.api.types import TaskEvent
from app.events.stream import Filters, events_for


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
        start = event_cursor(sse.resumes_after(ctx.request, after))
        with sse.stream_place(ctx.request, viewer):
            stream = events_for(ctx.hub, ctx.store, viewer, filters, start)
            if sse.is_event_stream(ctx.request):
                stream = sse.until_revoked(stream, ctx)
            send = direct_sender()
            try:
                async for event in stream:
                    payload = TaskEvent.from_domain(event)
                    if send is None or not await send(payload):
                        sse.sending(ctx.request, payload.cursor)
                        yield payload
            finally:
                await stream.aclose()
