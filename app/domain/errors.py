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
    │   ├── Unavailable           unavailable; carries retry_after and outcome (none |
    │   │                         unknown): the database could not be used (storage's `Health`)
    │   ├── CursorArchived        cursor_archived; carries the oldest cursor still served
    │   ├── RateLimited           rate_limited        (the API's own)
    │   └── QueryTooComplex       query_too_complex   (the API's own)
    ├── TableError                a transition table that breaks an invariant (`Table`)
    └── FellBehind                a subscriber whose queue overflowed; carries the cursor
                                  `after` to resume from (the event hub)

A refused call changes nothing: every ProtocolError is raised before the transaction
commits, but for an Unavailable whose outcome is `unknown` (the database's answer to the
commit was lost: the change may have been made). How an error reaches a client (its
GraphQL `extensions`, the HTTP answer) is decided in one place, the API's errors (`app.api.errors`).
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


class Unavailable(ProtocolError):
    """The database could not be used: unreachable, shutting down, a connection dropped, no
    pooled connection in time, a statement past its timeout, a SQLite file that is full or
    read-only. `outcome` says what a write did: `none` (nothing changed) or `unknown` (it
    failed at its commit, which may have been made: read before retrying)."""

    code = "unavailable"

    def __init__(self, reason: str, outcome: str = "none", retry_after: float = 1.0) -> None:
        if outcome == "unknown":
            told = "the outcome is unknown (the commit's answer was lost): read before retrying"
        else:
            told = "nothing changed"
        super().__init__(f"the database is unavailable ({reason}); {told}")
        self.reason = reason
        self.outcome = outcome
        self.retry_after = retry_after


class CursorArchived(ProtocolError):
    """A cursor from before the events moved out of the log (`prickle events archive`):
    reading on from it would skip them. `oldest` is the oldest cursor still served."""

    code = "cursor_archived"

    def __init__(self, cursor: int, oldest: int) -> None:
        super().__init__(
            f"cursor {cursor} is before the archived events: the oldest cursor still served is"
            f" {oldest!s} (a task's own history, task_events(task_id:), is still whole)"
        )
        self.cursor = cursor
        self.oldest = oldest
