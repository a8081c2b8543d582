"""What every A2A stream of this process keeps to, as the GraphQL streams over SSE do: at
most PRICKLE_STREAMS_PER_PRINCIPAL open at once per principal (the next is refused before
it opens), and each ends when the token that opened it is revoked or expires (its client
reconnects, and is refused, 401, without a live token), or the server drains: the SSE
streams' `until_revoked` (the service's token holders), told to end quietly."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from a2a.utils.errors import UnsupportedOperationError

from app.domain.principals import Principal
from app.service.holders import Places

_places = Places(  # open A2A streams, by principal
    lambda limit: UnsupportedOperationError(
        message=f"at most {limit} streams at once per principal: close one first",
        data={"prickle_code": "rate_limited"},
    )
)


@contextmanager
def slot(principal: Principal) -> Iterator[None]:
    """One of the principal's open streams, for as long as the block lasts; refused
    (UnsupportedOperation, `rate_limited`) past the limit, before anything is done."""
    with _places.held(principal):
        yield
