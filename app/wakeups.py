"""Waiting for an asyncio.Event, at most so long: the background loops' one way to sleep
until they are woken."""

from __future__ import annotations

import asyncio


async def woken(event: asyncio.Event, seconds: float) -> bool:
    """Whether the event was set within `seconds`. No task is made for the wait (as
    `asyncio.wait_for` makes one on Python 3.11): a loop woken by every commit makes none per
    commit, and the process's tasks are only the ones that live."""
    if event.is_set():
        return True
    try:
        async with asyncio.timeout(seconds):
            await event.wait()
    except TimeoutError:
        return event.is_set()
    return True
