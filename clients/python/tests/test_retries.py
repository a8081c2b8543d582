"""A call lost in transport is retried only when repeating it cannot move a task twice."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from conftest import Cast, packet, result
from prickle_client import AsyncClient


def lose_first_answers(
    monkeypatch: pytest.MonkeyPatch, client: AsyncClient, losses: int
) -> list[str]:
    """Make the next `losses` requests fail after the server handled them (the answer is
    lost on the way back); the operation names sent, in order."""
    sent: list[str] = []
    execute = client._api.execute

    async def flaky(*args: Any, **kwargs: Any) -> Any:
        sent.append(str(kwargs.get("operation_name")))
        response = await execute(*args, **kwargs)
        if len(sent) <= losses:
            raise httpx.ReadError("the answer was lost")
        return response

    monkeypatch.setattr(client._api, "execute", flaky)
    return sent


async def test_a_handoff_with_an_idempotency_key_is_retried_once_made(
    cast: Cast, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with AsyncClient(cast.url, cast.tokens["alice/planner"]) as planner:
        sent = lose_first_answers(monkeypatch, planner, 1)
        task = await planner.handoff("retry", "bob/coder", packet(), idempotency_key="r-1")
        assert sent == ["Handoff", "Handoff"]
        made = [t.id async for t in planner.tasks(project="retry")]
        assert made == [task.id]


async def test_a_result_with_a_submission_id_is_retried(
    cast: Cast, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with (
        AsyncClient(cast.url, cast.tokens["alice/planner"]) as planner,
        AsyncClient(cast.url, cast.tokens["bob/coder"]) as coder,
    ):
        task = await planner.handoff("retry", "bob/coder", packet())
        await coder.accept_task(task.id)
        sent = lose_first_answers(monkeypatch, coder, 1)
        done = await coder.return_result(task.id, result(submission_id="r-2"))
        assert sent == ["ReturnResult", "ReturnResult"] and done.state.value == "completed"


async def test_a_move_without_a_key_is_not_retried(
    cast: Cast, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with (
        AsyncClient(cast.url, cast.tokens["alice/planner"]) as planner,
        AsyncClient(cast.url, cast.tokens["bob/coder"]) as coder,
    ):
        task = await planner.handoff("retry", "bob/coder", packet())
        sent = lose_first_answers(monkeypatch, coder, 1)
        with pytest.raises(httpx.ReadError):
            await coder.accept_task(task.id)
        assert sent == ["AcceptTask"]
        after = await coder.task(task.id)  # the move was made, once
        assert after is not None and after.state.value == "accepted"
