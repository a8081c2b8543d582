"""What the generated `Client` (_sync.py) stands on: an `AsyncClient` run on a loop of its own,
and its live streams made blocking (`events`, `event_batches`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Coroutine, Iterator
from typing import Any, Generic, TypeVar

from ._async import AsyncClient
from .events import EventBatchStream, EventStream, _Resuming
from .generated.on_task_event_batches import OnTaskEventBatchesTaskEventBatches
from .generated.on_task_events import OnTaskEventsTaskEvents

T = TypeVar("T")


class SyncBase:
    def __init__(self, url: str, token: str, *, timeout: float = 30.0) -> None:
        self._runner = asyncio.Runner()
        self._client = AsyncClient(url, token, timeout=timeout)

    def __enter__(self) -> SyncBase:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._runner.run(self._client.aclose())
        self._runner.close()

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
        return Blocking(self._runner, stream)

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
        return Blocking(self._runner, stream)

    def _run(self, call: Coroutine[Any, Any, T]) -> T:
        return self._runner.run(call)

    def _iterate(self, items: AsyncIterator[T]) -> Iterator[T]:
        while True:
            try:
                yield self._runner.run(anext(items))  # type: ignore[arg-type]
            except StopAsyncIteration:
                return


class Blocking(Generic[T]):
    """A live stream of the `AsyncClient`, iterated on the blocking client's loop. `cursor`
    is the last item's (pass it as `after` to resume elsewhere); `reconnections` counts
    the reconnections; `close()` ends the subscription (the client's `close` does too)."""

    def __init__(self, runner: asyncio.Runner, stream: _Resuming[T]) -> None:
        self._runner = runner
        self._stream = stream
        self._items = aiter(stream)

    def __iter__(self) -> Blocking[T]:
        return self

    def __next__(self) -> T:
        try:
            return self._runner.run(anext(self._items))  # type: ignore[arg-type]
        except StopAsyncIteration:
            raise StopIteration from None

    @property
    def cursor(self) -> str | None:
        return self._stream.cursor

    @property
    def reconnections(self) -> int:
        return self._stream.reconnections

    def close(self) -> None:
        self._runner.run(self._items.aclose())  # type: ignore[attr-defined]
