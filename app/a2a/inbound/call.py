"""What one A2A request's methods act with (made by server.py's `guarded`, read by the
handler from the SDK's call context)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Protocol

from a2a.server.context import ServerCallContext
from a2a.utils.errors import UnsupportedOperationError
from starlette.types import Receive

from app.domain.principals import Principal
from app.events.hub import Hub
from app.service.auth import Credential
from app.service.database import Store


class Refusal(Protocol):
    """The limit's refusal of a mutation (the API's rate limit's `Refusal`)."""

    @property
    def message(self) -> str: ...

    @property
    def retry_after(self) -> float: ...


class Limit(Protocol):
    """The per-principal mutation rate limit the app holds (`app.state.rate_limit`,
    `rate_limit`)."""

    def refused(self, principal: Principal) -> Refusal | None: ...


@dataclass
class Call:
    """What one request's methods act with: the store, the hub, the caller, the agent whose
    server this is, and the cursors of the stream events yielded (each event's SSE `id:`)."""

    store: Store
    hub: Hub
    credential: Credential  # the caller's token
    agent: str
    after: int | None = None  # Last-Event-ID
    cursors: deque[str] = field(default_factory=deque)
    limit: Limit | None = None  # None: no limit
    secret_asked: str | None = None  # a push config's signing secret, asked for by header
    secret_made: str | None = None  # one made for a push config: answered once, by header
    disconnected: Receive | None = None  # what tells when the client went away

    @property
    def caller(self) -> Principal:
        return self.credential.principal

    def spend(self) -> None:
        """One of the caller's mutations, from the same budget as its GraphQL mutations;
        refused (`rate_limited`, nothing done) when it has none left."""
        refused = self.limit.refused(self.caller) if self.limit is not None else None
        if refused is not None:
            raise UnsupportedOperationError(
                message=refused.message,
                data={"prickle_code": "rate_limited", "retry_after": refused.retry_after},
            )


def call_of(context: ServerCallContext) -> Call:
    call: Call = context.state["prickle"]
    return call
