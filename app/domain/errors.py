"""The server's errors; each protocol error has the code the API reports as ``extensions.code``.

    PrickleError
    ├── TableError            (the transition table breaks an invariant; app.domain.table)
    └── ProtocolError
        ├── InvalidState      (invalid_state; carries verb and the current state)
        ├── Forbidden         (forbidden)
        ├── NotFound          (not_found)
        ├── InvalidInput      (invalid_input)
        ├── Unauthenticated   (unauthenticated)
        ├── Conflict          (conflict)
        ├── TurnBudgetExhausted (turn_budget_exhausted)
        ├── RateLimited       (rate_limited)
        └── QueryTooComplex   (query_too_complex)

A refused call changes nothing: every error is raised before the transaction commits.
"""

from __future__ import annotations


class PrickleError(Exception):
    """The root of every error the server raises on purpose."""


class ProtocolError(PrickleError):
    code = "internal"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    @property
    def extensions(self) -> dict[str, object]:
        return {"code": self.code}


class InvalidState(ProtocolError):
    code = "invalid_state"

    def __init__(self, verb: str, state: str, waiting_on: str | None = None) -> None:
        where = f"{state} (waiting_on {waiting_on})" if waiting_on else state
        super().__init__(f"Can't {verb} when in {where}")
        self.verb = verb
        self.state = state
        self.waiting_on = waiting_on

    @property
    def extensions(self) -> dict[str, object]:
        return {"code": self.code, "state": self.state, "waiting_on": self.waiting_on}


class Forbidden(ProtocolError):
    code = "forbidden"


class NotFound(ProtocolError):
    code = "not_found"


class InvalidInput(ProtocolError):
    code = "invalid_input"


class Unauthenticated(ProtocolError):
    code = "unauthenticated"


class Conflict(ProtocolError):
    code = "conflict"


class TurnBudgetExhausted(ProtocolError):
    code = "turn_budget_exhausted"


class RateLimited(ProtocolError):
    code = "rate_limited"


class QueryTooComplex(ProtocolError):
    code = "query_too_complex"
