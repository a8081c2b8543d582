"""What every A2A stream of this process keeps to, as the GraphQL streams over SSE do: at
most PRICKLE_STREAMS_PER_PRINCIPAL open at once per principal (the next is refused before
it opens), and each ends when the token that opened it is revoked or expires (its client
reconnects, and is refused, 401, without a live token)."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncGenerator, Iterator
from contextlib import contextmanager
from typing import TypeVar

from a2a.utils.errors import UnsupportedOperationError

from app import tuning
from app.domain.clock import now
from app.domain.principals import Principal
from app.service.auth import Credential, Revoked, credentials_of
from app.service.database import Store

T = TypeVar("T")

_open: Counter[str] = Counter()  # open A2A streams, by principal


@contextmanager
def slot(principal: Principal) -> Iterator[None]:
    """One of the principal's open streams, for as long as the block lasts; refused
    (UnsupportedOperation, `rate_limited`) past the limit, before anything is done."""
    who, limit = principal.id, tuning.STREAMS_PER_PRINCIPAL.value()
    if _open[who] >= limit:
        raise UnsupportedOperationError(
            message=f"at most {limit} streams at once per principal: close one first",
            data={"prickle_code": "rate_limited"},
        )
    _open[who] += 1
    try:
        yield
    finally:
        _open[who] -= 1
        if _open[who] <= 0:
            del _open[who]


async def until_revoked(
    stream: AsyncGenerator[T, None], store: Store, credential: Credential
) -> AsyncGenerator[T, None]:
    """`stream`'s items until the credential is revoked or expires; then it just ends."""
    revoked = asyncio.Event()

    def heard(token_ids: Revoked) -> None:
        if token_ids is None or credential.token_id in token_ids:
            revoked.set()

    listeners = credentials_of(store).listeners
    listeners.append(heard)
    expiry = None
    if credential.expires_at is not None:
        seconds = max(0.0, (credential.expires_at - now()).total_seconds())
        expiry = asyncio.get_running_loop().call_later(seconds, revoked.set)
    stop = asyncio.ensure_future(revoked.wait())
    step: asyncio.Future[tuple[T] | None] | None = None
    try:
        while True:
            step = asyncio.ensure_future(_next(stream))
            await asyncio.wait((step, stop), return_when=asyncio.FIRST_COMPLETED)
            if not step.done():
                return
            got, step = step.result(), None
            if got is None:
                return
            yield got[0]
    finally:
        listeners.remove(heard)
        stop.cancel()
        if expiry is not None:
            expiry.cancel()
        if step is not None:  # the stream runs in it: cancelled there, it closes there
            step.cancel()
        else:  # suspended: closed here (its cleanup does not wait on anything)
            await stream.aclose()


async def _next(stream: AsyncGenerator[T, None]) -> tuple[T] | None:
    """The stream's next item (in a tuple), or None at its end."""
    try:
        return (await anext(stream),)
    except StopAsyncIteration:
        return None
