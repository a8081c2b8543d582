"""One exception per error code of the server (`extensions.code`), under `PrickleError`."""

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


class QueryTooComplex(PrickleError):
    code = "query_too_complex"


class Internal(PrickleError):
    """A fault of the server (logged there, never detailed)."""

    code = "internal"


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
        QueryTooComplex,
        Internal,
    )
}


def from_graphql(error: dict[str, Any]) -> PrickleError:
    """The exception for one entry of a response's `errors`."""
    extensions = error.get("extensions") or {}
    cls = BY_CODE.get(str(extensions.get("code")), Internal)
    return cls(str(error.get("message", "")), extensions)
