"""Prickle's refusals as A2A errors: the one place they are turned (the SDK's dispatchers
then give each its JSON-RPC code or HTTP status). Every one keeps Prickle's own code in its
`data` (`{"prickle_code": ...}`, which A2A sends as its ErrorInfo's `metadata`), and a
refused call has changed nothing, as everywhere.

    not_found       → TaskNotFound (-32001): also a task the caller may not see
    invalid_state   → TaskNotCancelable (-32002) for CancelTask, else UnsupportedOperation (-32004)
    invalid_input   → InvalidParams (-32602)
    conflict        → InvalidParams (-32602): a messageId used for another message
    forbidden       → UnsupportedOperation (-32004): not this caller's move
    turn_budget_exhausted → UnsupportedOperation (-32004)
    cursor_archived → InvalidParams (-32602): a Last-Event-ID before the archived events
    unavailable     → InternalError (-32603) with `retry_after` and `outcome` in its data:
                      the database could not be used (nothing changed, or unknown: read back)
    any other fault → InternalError (-32603), "internal error" and nothing more (logged)
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable
from typing import Any, TypeVar, cast

from a2a.utils.errors import (
    A2AError,
    InternalError,
    InvalidParamsError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)

from app.domain.errors import (
    Conflict,
    CursorArchived,
    InvalidInput,
    InvalidState,
    NotFound,
    ProtocolError,
    Unavailable,
)
from app.storage.outage import fault

log = logging.getLogger(__name__)
F = TypeVar("F", bound=Callable[..., Any])


def a2a_error(error: ProtocolError, method: str = "") -> A2AError:
    """The A2A error for a Prickle refusal, in the method `method`."""
    data: dict[str, object] = {"prickle_code": error.code}
    if isinstance(error, InvalidState):
        data["state"] = error.state
    kind: type[A2AError]
    if isinstance(error, Unavailable):
        data.update(retry_after=error.retry_after, outcome=error.outcome)
        kind = InternalError
    elif isinstance(error, NotFound):
        kind = TaskNotFoundError
    elif isinstance(error, InvalidState):
        kind = TaskNotCancelableError if method == "cancel" else UnsupportedOperationError
    elif isinstance(error, InvalidInput | Conflict | CursorArchived):
        kind = InvalidParamsError
    else:
        kind = UnsupportedOperationError
    return kind(message=str(error), data=data)


def shielded(method: F) -> F:
    """The handler method with Prickle's refusals as A2A errors, and any other fault as
    A2A's internal error with no detail (logged here with its traceback): a driver's message
    may name what a client has no business seeing."""
    cancel = "cancel" if method.__name__ == "on_cancel_task" else ""
    if inspect.isasyncgenfunction(method):

        @functools.wraps(method)
        async def streamed(*args: Any, **kwargs: Any) -> Any:
            inner = method(*args, **kwargs)
            try:
                async for item in inner:
                    yield item
            except Exception as error:
                raise _shown(error, cancel) from None
            finally:  # at once, also when the client went away: it holds a subscription
                await inner.aclose()

        return cast(F, streamed)

    @functools.wraps(method)
    async def answered(*args: Any, **kwargs: Any) -> Any:
        try:
            return await method(*args, **kwargs)
        except Exception as error:
            raise _shown(error, cancel) from None

    return cast(F, answered)


def _shown(error: Exception, method: str) -> A2AError:
    if isinstance(error, A2AError):
        return error
    if isinstance(error, ProtocolError):
        return a2a_error(error, method)
    unavailable = fault(error)  # a driver's error the store did not turn (logged once there)
    if unavailable is not None:
        return a2a_error(unavailable, method)
    log.error("an A2A request failed", exc_info=error)
    return InternalError(message="internal error")
