"""One read transaction shared by every `Store.read()` of a `Store.reading()` block.

A query's fields make many lookups; sharing costs the query one connection checkout and one
BEGIN/COMMIT, however many there are. The transaction opens at the first read, its
statements run one at a time, and it ends with the block. A task started inside the block
that outlives it reads on its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager, suppress
from contextvars import ContextVar
from typing import Any

from app.storage.tx import Tx

Transaction = Callable[[], AbstractAsyncContextManager[Tx]]


class SharedRead:
    """The read transaction of one `reading()` block of `owner`'s, opened by `transaction`."""

    def __init__(self, owner: object, transaction: Transaction) -> None:
        self.owner = owner
        self.transaction = transaction
        self.lock = asyncio.Lock()  # one statement at a time on the connection
        self.stack = AsyncExitStack()
        self.opened: Tx | None = None
        self.holder: asyncio.Task[Any] | None = None  # the task inside a read() block
        self.closed = False  # a task started inside and outliving the block reads on its own

    @asynccontextmanager
    async def tx(self) -> AsyncIterator[Tx]:
        task = asyncio.current_task()
        if self.holder is task and self.opened is not None:  # a read() within a read()
            yield self.opened
            return
        async with self.lock:
            if self.closed:  # waited for the lock while the block ended
                async with self.transaction() as own:
                    yield own
                return
            if self.opened is None:
                self.opened = await self.stack.enter_async_context(self.transaction())
            self.holder = task
            try:
                yield self.opened
            except BaseException:
                # a failed statement leaves the transaction unusable (PostgreSQL aborts it):
                # roll it back; the next read() of the block opens a new one
                self.opened = None
                with suppress(Exception):  # the connection may be gone: the pool drops it
                    await self.stack.aclose()
                raise
            finally:
                self.holder = None

    async def close(self) -> None:
        self.closed = True
        async with self.lock:
            self.opened = None
            await self.stack.aclose()


_current: ContextVar[SharedRead | None] = ContextVar("shared_read", default=None)


def shared_of(owner: object) -> SharedRead | None:
    """The shared read of `owner`'s `reading()` block this task is in, while it is open."""
    shared = _current.get()
    if shared is not None and shared.owner is owner and not shared.closed:
        return shared
    return None


@asynccontextmanager
async def sharing(owner: object, transaction: Transaction) -> AsyncIterator[None]:
    """Every read of `owner`'s inside (in this task and the tasks it starts) shares one."""
    shared = SharedRead(owner, transaction)
    token = _current.set(shared)
    try:
        yield
    finally:
        _current.reset(token)
        await shared.close()
