"""The one place Prickle's refusals and other faults become A2A errors
(app/a2a/inbound/errors.py)."""

from __future__ import annotations

import re

import pytest
from a2a.utils.errors import (
    InternalError,
    InvalidParamsError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)

from app.a2a.inbound.errors import shielded
from app.domain.errors import Conflict, Forbidden, InvalidInput, InvalidState, NotFound

pytestmark = pytest.mark.once


class Failing:
    def __init__(self, error: Exception) -> None:
        self.error = error

    @shielded
    async def on_get_task(self) -> None:
        raise self.error

    @shielded
    async def on_cancel_task(self) -> None:
        raise self.error

    @shielded
    async def on_subscribe_to_task(self):  # type: ignore[no-untyped-def]
        yield 1
        raise self.error


@pytest.mark.parametrize(
    ("error", "shown"),
    [
        (NotFound("no task x"), TaskNotFoundError),
        (InvalidInput("packet.task: too long"), InvalidParamsError),
        (Conflict("idempotency_key 'k' was used for a different request"), InvalidParamsError),
        (InvalidState("answer", "working"), UnsupportedOperationError),
        (Forbidden("not yours"), UnsupportedOperationError),
    ],
)
async def test_each_refusal_is_its_a2a_error_with_prickles_code(
    error: Exception, shown: type[Exception]
) -> None:
    with pytest.raises(shown, match=re.escape(str(error)[:20])) as raised:
        await Failing(error).on_get_task()
    assert raised.value.data["prickle_code"] == error.code  # type: ignore[attr-defined]


async def test_a_task_that_has_ended_is_not_cancelable() -> None:
    with pytest.raises(TaskNotCancelableError, match="Can't cancel_task when in completed"):
        await Failing(InvalidState("cancel_task", "completed")).on_cancel_task()


async def test_any_other_fault_is_internal_and_says_nothing_of_itself() -> None:
    leaking = RuntimeError("password authentication failed for user prickle")
    with pytest.raises(InternalError) as raised:
        await Failing(leaking).on_get_task()
    assert raised.value.message == "internal error"
    stream = Failing(leaking).on_subscribe_to_task()
    assert await anext(stream) == 1
    with pytest.raises(InternalError, match=r"^internal error$"):
        await anext(stream)
