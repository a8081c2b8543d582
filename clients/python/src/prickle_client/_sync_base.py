"""What the generated `Client` (_sync.py) stands on: an `AsyncClient` run on an event loop of
its own, on a thread of its own, and its live streams made blocking (`events`,
`event_batches`).

The loop's thread is why the blocking client works wherever it is called: in a plain
script, and inside a running event loop (Jupyter, an async web framework), whose thread it
blocks for the call as any blocking call does, without nesting loops.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from typing import Any, Generic, Self, TypeVar

from ._async import AsyncClient
from .errors import ClientClosed
from .events import EventBatchStream, EventStream, _Resuming
from .generated.on_task_event_batches import OnTaskEventBatchesTaskEventBatches
from .generated.on_task_events import OnTaskEventsTaskEvents

T = TypeVar("T")


class _Loop:
    """An event loop running on a daemon thread; `run` blocks its caller until a coroutine
    has run there. `close` closes what is still open on it (abandoned streams) quietly."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name="prickle-client", daemon=True)
        self._lock = threading.Lock()
        self._thread.start()

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_forever()

    @property
    def closed(self) -> bool:
        return self._loop.is_closed()

    def run(self, call: Coroutine[Any, Any, T]) -> T:
        if self.closed:
            call.close()
            raise ClientClosed("the client is closed")
        if threading.current_thread() is self._thread:
            call.close()
            raise RuntimeError("a blocking Client call from inside its own loop")
        done = asyncio.run_coroutine_threadsafe(call, self._loop)
        try:
            return done.result()
        except BaseException:
            done.cancel()  # e.g. KeyboardInterrupt: the call does not go on alone
            raise

    def close(self, last: Callable[[], Coroutine[Any, Any, None]] | None = None) -> None:
        """Run `last()` (the client's own close), end what is left on the loop, stop it."""
        with self._lock:
            if self.closed:
                return
            try:
                if last is not None:
                    self.run(last())
                # as asyncio.run ends: the tasks still running (a connection's own), then
                # the generators still open (a stream left open)
                self.run(_cancel_the_others())
                self.run(self._loop.shutdown_asyncgens())
            finally:
                self._loop.call_soon_threadsafe(self._loop.stop)
                self._thread.join()
                self._loop.close()


async def _cancel_the_others() -> None:
    me = asyncio.current_task()
    others = [task for task in asyncio.all_tasks() if task is not me]
    for task in others:
        task.cancel()
    await asyncio.gather(*others, return_exceptions=True)


class SyncBase:
    def __init__(self, url: str, token: str, *, timeout: float = 30.0) -> None:
        self._loop = _Loop()
        self._client = AsyncClient(url, token, timeout=timeout)
        # a client never closed is closed at exit, its streams with it, without a word
        self._closing = weakref.finalize(self, self._loop.close, self._client.aclose)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connections and every stream still open; calling it again does nothing."""
        self._closing.detach()
        self._loop.close(self._client.aclose)

    def events(
        self,
        *,
        project: str | None = None,
        task_id: str | None = None,
        assignee: str | None = None,
        after: str | None = None,
    ) -> Blocking[OnTaskEventsTaskEvents]:
        """Every event the caller may see, live: `for event in client.events(...)`, each
        `next` waiting for the next event. Reconnects and resumes by itself, as
        `AsyncClient.events` does (also when the caller took long over one event)."""
        stream: EventStream = self._client.events(
            project=project, task_id=task_id, assignee=assignee, after=after
        )
        return Blocking(self._loop, stream)

    def event_batches(
        self,
        *,
        project: str | None = None,
        task_id: str | None = None,
        assignee: str | None = None,
        after: str | None = None,
        batch_size: int = 100,
    ) -> Blocking[list[OnTaskEventBatchesTaskEventBatches]]:
        """`events` in lists of at most `batch_size`, as `AsyncClient.event_batches`."""
        stream: EventBatchStream = self._client.event_batches(
            project=project, task_id=task_id, assignee=assignee, after=after, batch_size=batch_size
        )
        return Blocking(self._loop, stream)

    def _run(self, call: Coroutine[Any, Any, T]) -> T:
        return self._loop.run(call)

    def _iterate(self, items: AsyncIterator[T]) -> Iterator[T]:
        while True:
            try:
                yield self._loop.run(_next(items))
            except StopAsyncIteration:
                return


async def _next(items: AsyncIterator[T]) -> T:
    return await anext(items)


async def _close(items: AsyncIterator[Any]) -> None:
    close = getattr(items, "aclose", None)
    if close is not None:
        await close()


class Blocking(Generic[T]):
    """A live stream of the `AsyncClient`, iterated on the blocking client's loop. `cursor`
    is the last item's (pass it as `after` to resume elsewhere); `reconnections` counts
    the reconnections; `close()` ends the subscription (the client's `close` does too, and
    a stream left open is closed quietly with the client, or at exit)."""

    def __init__(self, loop: _Loop, stream: _Resuming[T]) -> None:
        self._loop = loop
        self._stream = stream
        self._items = aiter(stream)

    def __iter__(self) -> Blocking[T]:
        return self

    def __next__(self) -> T:
        try:
            return self._loop.run(_next(self._items))
        except StopAsyncIteration:
            raise StopIteration from None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    @property
    def cursor(self) -> str | None:
        return self._stream.cursor

    @property
    def reconnections(self) -> int:
        return self._stream.reconnections

    def close(self) -> None:
        """End the subscription; calling it again, or after the client's close, does nothing."""
        if not self._loop.closed:
            self._loop.run(_close(self._items))
