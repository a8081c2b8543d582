"""What holds a token open beyond one request, and its end when the token is revoked.

A WebSocket connection (the API's WebSocket handlers), a subscription over SSE (`EventStream`)
and an A2A stream (app/a2a/inbound) each stay open on the token that opened them. `Holders`
registers them by that token's id, per database: it listens to the revocations this process
hears of (`Credentials`) and closes the holders of a revoked token at once, of an expired one
on time; told only that some token may have been revoked (None: another
process on SQLite, a LISTEN connection back), it asks the database about the tokens held.
Draining (the server stopping) closes every holder too.

`until_revoked` is the streams' part: a stream's items until its token is revoked or expires
(then `unauthenticated`, or the stream just ends) or the server drains (it just ends).
`Places` counts a kind of stream's open ones by principal, up to its limit.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import AsyncGenerator, Callable, Coroutine, Iterator
from contextlib import contextmanager
from typing import Any, Protocol, TypeVar

from app.domain.clock import now
from app.domain.errors import Unauthenticated
from app.domain.principals import Principal
from app.service.auth import Credential, Revoked, credentials_of, revoked_among
from app.service.database import Store, fault
from app.settings import current

log = logging.getLogger(__name__)

T = TypeVar("T")


class Places:
    """This process's open streams of one kind (subscriptions over SSE, A2A streams), by
    principal: at most PRICKLE_STREAMS_PER_PRINCIPAL at once each. The next is refused
    before it opens, with the error its surface answers (`rate_limited`) for the limit."""

    def __init__(self, refusal: Callable[[int], Exception]) -> None:
        self.refusal = refusal
        self._open: Counter[tuple[str, str]] = Counter()

    @contextmanager
    def held(self, principal: Principal) -> Iterator[None]:
        """One of the principal's places, for as long as the block lasts."""
        key, limit = (principal.kind, principal.id), current().streams_per_principal
        if self._open[key] >= limit:
            raise self.refusal(limit)
        self._open[key] += 1
        try:
            yield
        finally:
            self._open[key] -= 1
            if self._open[key] <= 0:
                del self._open[key]


class Revocable(Protocol):
    async def close_revoked(self, reason: str, draining: bool = ...) -> None:
        """Close: the token is no longer good (`reason`), or the server drains."""


class Holders:
    """This process's holders of tokens on one database, by the id of the token each holds."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.by_token: dict[str, set[Revocable]] = {}
        self._expiries: dict[Revocable, asyncio.TimerHandle] = {}
        self._closing: set[asyncio.Task[None]] = set()
        credentials_of(store).listeners.append(self.revoked)

    def add(self, holder: Revocable, credential: Credential) -> None:
        self.by_token.setdefault(credential.token_id, set()).add(holder)
        if credential.expires_at is not None:
            delay = (credential.expires_at - now()).total_seconds()
            self._expiries[holder] = asyncio.get_running_loop().call_later(
                max(delay, 0.0), self._close, holder, "the token expired"
            )
        if not credentials_of(self.store).unchanged_since(credential):
            self._spawn(self._recheck([credential.token_id]))  # revoked while it connected?

    def discard(self, holder: Revocable, token_id: str) -> None:
        held = self.by_token.get(token_id)
        if held is not None:
            held.discard(holder)
            if not held:
                del self.by_token[token_id]
        timer = self._expiries.pop(holder, None)
        if timer is not None:
            timer.cancel()

    def revoked(self, token_ids: Revoked) -> None:
        if token_ids is None:  # which is unknown: ask the database about the held ones
            if self.by_token:
                self._spawn(self._recheck(list(self.by_token)))
            return
        for token_id in token_ids & self.by_token.keys():
            for holder in self.by_token.pop(token_id):
                self._close(holder, "the token was revoked")

    async def close_all(self, reason: str) -> None:
        """Close every holder: the server drains."""
        everyone = [holder for held in self.by_token.values() for holder in held]
        await asyncio.gather(*(h.close_revoked(reason, draining=True) for h in everyone))

    async def _recheck(self, token_ids: list[str]) -> None:
        try:
            gone = await revoked_among(self.store, token_ids)
        except Exception as error:  # the database may be away; the next announcement retries
            if fault(error) is None:  # (an outage is logged once, by the store)
                log.exception("re-checking the tokens of open connections failed")
            return
        self.revoked(frozenset(gone))

    def _close(self, holder: Revocable, reason: str) -> None:
        timer = self._expiries.pop(holder, None)
        if timer is not None:
            timer.cancel()
        self._spawn(holder.close_revoked(reason))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)


_holders: dict[str, Holders] = {}


def holders_of(store: Store) -> Holders:
    """The process's registry of token holders on the store's database."""
    found = _holders.get(store.url)
    if found is None:
        found = _holders[store.url] = Holders(store)
    return found


class _Stream:
    """One stream, as `Holders` sees it."""

    def __init__(self) -> None:
        self.ended = asyncio.Event()
        self.reason = ""
        self.draining = False

    async def close_revoked(self, reason: str, draining: bool = False) -> None:
        self.reason, self.draining = reason, draining
        self.ended.set()


async def until_revoked(
    stream: AsyncGenerator[T, None], store: Store, credential: Credential, refuse: bool = True
) -> AsyncGenerator[T, None]:
    """`stream`'s items until `credential` is revoked or expires: then `unauthenticated`
    (`refuse`), or the stream just ends; it just ends when the server drains (its client
    resumes elsewhere from its last event). Each item is awaited in a task of its own,
    raced against that end."""
    end = _Stream()
    holders = holders_of(store)
    holders.add(end, credential)
    stop = asyncio.ensure_future(end.ended.wait())
    step: asyncio.Task[tuple[T] | None] | None = None
    try:
        while True:
            step = asyncio.create_task(_next(stream))
            await asyncio.wait((step, stop), return_when=asyncio.FIRST_COMPLETED)
            if not step.done():
                if end.draining or not refuse:
                    return
                raise Unauthenticated(f"{end.reason}: the stream is closed")
            item, step = step.result(), None
            if item is None:
                return
            yield item[0]
    finally:
        holders.discard(end, credential.token_id)
        stop.cancel()
        if step is not None:  # the stream runs in it: cancelled there, then closed here
            step.cancel()
            await asyncio.wait((step,))
        await stream.aclose()


async def _next(stream: AsyncGenerator[T, None]) -> tuple[T] | None:
    """The stream's next item (in a tuple), or None at its end."""
    try:
        return (await anext(stream),)
    except StopAsyncIteration:
        return None
