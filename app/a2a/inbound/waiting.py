"""A blocking SendMessage's wait (A2A v1.0 section 3.2.2): until its task settles (ends, or
waits on input or on its owner's gate), at most `prickle serve --a2a-send-wait` seconds
(PRICKLE_A2A_SEND_WAIT, default 60), and no longer than the client stays.

The wait is a subscription to the event log, read as every stream is (`events_for`:
the task's state now, then its events as the hub hands them over): nothing polls the
database, and a waiting request holds no connection, only its place among the hub's
subscribers (docs/performance.md measures 1,000 of them against 1,000 idle GraphQL
subscriptions)."""

from __future__ import annotations

import asyncio
import contextlib

from starlette.types import Receive

from app.a2a.inbound import tasks
from app.a2a.inbound.call import Call
from app.events.hub import FellBehind
from app.events.stream import Filters, events_for, task_of
from app.settings import current


async def settled(call: Call, task_id: str) -> bool:
    """Return once the task has settled, the bound has passed, or the client has gone;
    whether the client is still there (to read the answer)."""
    waits = [asyncio.ensure_future(_settles(call, task_id))]
    if call.disconnected is not None:
        waits.append(asyncio.ensure_future(_gone(call.disconnected)))
    try:
        await asyncio.wait(
            waits, timeout=current().a2a_send_wait, return_when=asyncio.FIRST_COMPLETED
        )
        return not (len(waits) > 1 and waits[1].done())
    finally:
        for wait in waits:
            wait.cancel()
        for wait in waits:
            with contextlib.suppress(asyncio.CancelledError):
                await wait


async def _settles(call: Call, task_id: str) -> None:
    while True:  # a subscriber that fell behind reads the task's state again
        stream = events_for(call.hub, call.store, call.caller, Filters(task_id=task_id), None)
        try:
            async for event in stream:
                if tasks.settled(task_of(event)):
                    return
            return  # the stream ended (the server stops): answer the task as it stands
        except FellBehind:
            continue
        finally:
            await stream.aclose()


async def _gone(receive: Receive) -> None:
    """Return when the client has gone away (its request read whole, what the server
    receives next is its disconnect)."""
    while (await receive())["type"] != "http.disconnect":
        pass
