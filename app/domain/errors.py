"""The server's errors: one tree, under PrickleError.

    PrickleError
    ├── ProtocolError             a refused call; `code` names the refusal
    │   ├── InvalidState          invalid_state; carries verb, state and waiting_on
    │   ├── Forbidden             forbidden
    │   ├── NotFound              not_found
    │   ├── InvalidInput          invalid_input
    │   ├── Unauthenticated       unauthenticated
    │   ├── Conflict              conflict
    │   ├── TurnBudgetExhausted   turn_budget_exhausted
    │   ├── RateLimited           rate_limited        (the API's own: app/api/errors.py)
    │   └── QueryTooComplex       query_too_complex   (the API's own: app/api/errors.py)
    ├── TableError                a transition table that breaks an invariant (app/domain/table.py)
    └── FellBehind                a subscriber whose queue overflowed; carries the cursor
                                  `after` to resume from (app/events/hub.py)

A refused call changes nothing: every ProtocolError is raised before the transaction
commits. How an error reaches a client (its GraphQL `extensions`, the HTTP answer) is
decided in one place, app/api/errors.py.
"""

from __future__ import annotations


class PrickleError(Exception):
    """The root of every error the server raises on purpose."""


class ProtocolError(PrickleError):
    code = "internal"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidState(ProtocolError):
    code = "invalid_state"

    def __init__(self, verb: str, state: str, waiting_on: str | None = None) -> None:
        where = f"{state} (waiting_on {waiting_on})" if waiting_on else state
        super().__init__(f"Can't {verb} when in {where}")
        self.verb = verb
        self.state = state
        self.waiting_on = waiting_on


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


class ChangedConcurrently(Conflict):
    """The task changed between this command's read and its write: read again and retry."""


class TurnBudgetExhausted(ProtocolError):
    code = "turn_budget_exhausted"
