"""The task_events subscription as an async iterator that survives lost connections.

Each event is yielded once, in order: the stream remembers the cursor and seq of the last
event it yielded, reconnects with backoff (0.1 s doubling to 5 s, reset by each event) when
the connection drops or the server restarts, and resubscribes `after` that cursor, so the
server replays what came in between from its log; an event at or below the last seq (a
replay's overlap) is skipped. A subscriber that fell behind (`rate_limited`) resumes the
same way, and one the server ended with `unavailable` (its database away, the WebSocket
closed with 1013) after the wait it asks for. Refusals that a reconnection cannot cure
(unauthenticated, forbidden, invalid_input, ...) end the stream with their exception.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Generic, Protocol, TypeVar

import httpx
from websockets.exceptions import ConnectionClosedError, InvalidHandshake, InvalidStatus

from ._transport import Transport, subscription_error
from .errors import PrickleError, RateLimited, Unauthenticated, Unavailable
from .generated.exceptions import GraphQLClientError, GraphQLClientGraphQLMultiError
from .generated.on_task_event_batches import OnTaskEventBatchesTaskEventBatches
from .generated.on_task_events import OnTaskEventsTaskEvents

FIRST_DELAY = 0.1
LONGEST_DELAY = 5.0
REFUSED_CLOSES = {4401, 4403}  # the token was refused or revoked


class _Event(Protocol):
    @property
    def cursor(self) -> str: ...
    @property
    def seq(self) -> int: ...


Item = TypeVar("Item")
E = TypeVar("E", bound=_Event)


class _Resuming(Generic[Item]):
    """The reconnecting loop shared by `EventStream` and `EventBatchStream`."""

    def __init__(
        self,
        api: Transport,
        project: str | None,
        task_id: str | None,
        assignee: str | None,
        after: str | None,
    ) -> None:
        self._api = api
        self._filters = {"project": project, "task_id": task_id, "assignee": assignee}
        self.cursor = after
        self.last_seq: int | None = None
        self.reconnections = 0

    def __aiter__(self) -> AsyncIterator[Item]:
        return self._events()

    async def _events(self) -> AsyncIterator[Item]:
        delay = FIRST_DELAY
        while True:
            try:
                async for item in self._connection():
                    delay = FIRST_DELAY
                    yield item
            except RateLimited:
                pass  # fell behind: resume from our own cursor at once
            except Unavailable as refused:  # the server's database is away: resume after it
                await asyncio.sleep(refused.retry_after or delay)
            except (OSError, ConnectionClosedError, InvalidHandshake, httpx.TransportError):
                await asyncio.sleep(delay)
                delay = min(delay * 2, LONGEST_DELAY)
            else:
                await asyncio.sleep(delay)  # the server ended the connection (e.g. restart)
                delay = min(delay * 2, LONGEST_DELAY)
            self.reconnections += 1

    def _items(self) -> AsyncIterator[Item]:
        raise NotImplementedError

    def _new(self, events: list[E]) -> list[E]:
        """The events past the last one yielded; the cursor and seq move to the last."""
        fresh = [e for e in events if self.last_seq is None or e.seq > self.last_seq]
        if fresh:
            self.cursor, self.last_seq = fresh[-1].cursor, fresh[-1].seq
        return fresh

    async def _connection(self) -> AsyncIterator[Item]:
        """One subscription on one connection, from `cursor`; what was not yet yielded."""
        try:
            async for item in self._items():
                yield item
        except GraphQLClientGraphQLMultiError as error:
            raise subscription_error(error) from error
        except ConnectionClosedError as closed:
            if closed.rcvd is not None and closed.rcvd.code in REFUSED_CLOSES:
                raise Unauthenticated(f"the server closed the connection: {closed}") from closed
            raise
        except InvalidStatus as refused:
            if refused.response.status_code in (401, 403):
                raise Unauthenticated(str(refused)) from refused
            raise
        except PrickleError:
            raise
        except GraphQLClientError as error:  # e.g. no connection_ack in time
            raise ConnectionClosedError(None, None) from error


class EventStream(_Resuming[OnTaskEventsTaskEvents]):
    """`async for event in client.events(project=...)`; `cursor` is the last one yielded."""

    async def _items(self) -> AsyncIterator[OnTaskEventsTaskEvents]:
        async for message in self._api.on_task_events(after=self.cursor, **self._filters):
            for event in self._new([message.task_events]):
                yield event


class EventBatchStream(_Resuming[list[OnTaskEventBatchesTaskEventBatches]]):
    """`async for events in client.event_batches(...)`: the task_event_batches
    subscription, lists of at most `batch_size` events, resumed the same way."""

    def __init__(self, api: Transport, *args: str | None, batch_size: int) -> None:
        super().__init__(api, *args)
        self.batch_size = batch_size

    async def _items(self) -> AsyncIterator[list[OnTaskEventBatchesTaskEventBatches]]:
        messages = self._api.on_task_event_batches(
            after=self.cursor, batch_size=self.batch_size, **self._filters
        )
        async for message in messages:
            if fresh := self._new(message.task_event_batches):
                yield fresh
