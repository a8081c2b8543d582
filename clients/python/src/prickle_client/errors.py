"""One exception per error code of the server (`extensions.code`), under `PrickleError`,
and the client's own: `TransportFailed` (no answer came), `ClientClosed`."""

from __future__ import annotations

from typing import Any


class PrickleError(Exception):
    """A refusal or fault the server reported; `code` is its `extensions.code`."""

    code = "internal"

    def __init__(self, message: str, extensions: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.extensions = extensions or {}


class InvalidState(PrickleError):
    """The move is not allowed from the task's state; `state` is that state."""

    code = "invalid_state"

    @property
    def state(self) -> str | None:
        state = self.extensions.get("state")
        return str(state) if state is not None else None


class Forbidden(PrickleError):
    code = "forbidden"


class NotFound(PrickleError):
    code = "not_found"


class InvalidInput(PrickleError):
    code = "invalid_input"


class Unauthenticated(PrickleError):
    code = "unauthenticated"


class Conflict(PrickleError):
    """The task is not at the `expected_version` given."""

    code = "conflict"


class TurnBudgetExhausted(PrickleError):
    code = "turn_budget_exhausted"


class RateLimited(PrickleError):
    """Past the mutation rate limit; nothing changed. Retry after `retry_after` seconds."""

    code = "rate_limited"

    @property
    def retry_after(self) -> float | None:
        value = self.extensions.get("retry_after")
        return float(value) if value is not None else None

    @property
    def cursor(self) -> str | None:
        """On a subscription that fell behind: the cursor to resume after."""
        value = self.extensions.get("cursor")
        return str(value) if value is not None else None


class Unavailable(PrickleError):
    """The server's database could not be used (down, restarting, full, timed out). `outcome`
    is `none` (nothing changed: retry after `retry_after` seconds) or `unknown` (the commit's
    answer was lost: the change may have been made; read before retrying)."""

    code = "unavailable"

    @property
    def retry_after(self) -> float | None:
        value = self.extensions.get("retry_after")
        return float(value) if value is not None else None

    @property
    def outcome(self) -> str:
        return str(self.extensions.get("outcome", "unknown"))


class QueryTooComplex(PrickleError):
    code = "query_too_complex"


class Internal(PrickleError):
    """A fault of the server (logged there, never detailed)."""

    code = "internal"


class TransportFailed(PrickleError):
    """No answer came: the server could not be reached, or its answer was lost on the way
    (after the retries of a call that is safe to repeat; a move that is not may have been
    made: read the task before making it again). `cause` is the transport's exception."""

    code = "transport"

    def __init__(self, message: str, cause: BaseException, attempts: int) -> None:
        super().__init__(message, {"code": self.code, "attempts": attempts})
        self.cause = cause
        self.attempts = attempts


class ClientClosed(PrickleError):
    """A call on a blocking `Client` after its `close()`."""

    code = "client_closed"


BY_CODE: dict[str, type[PrickleError]] = {
    cls.code: cls
    for cls in (
        InvalidState,
        Forbidden,
        NotFound,
        InvalidInput,
        Unauthenticated,
        Conflict,
        TurnBudgetExhausted,
        RateLimited,
        Unavailable,
        QueryTooComplex,
        Internal,
    )
}


def from_graphql(error: dict[str, Any]) -> PrickleError:
    """The exception for one entry of a response's `errors`."""
    extensions = error.get("extensions") or {}
    cls = BY_CODE.get(str(extensions.get("code")), Internal)
    return cls(str(error.get("message", "")), extensions)
