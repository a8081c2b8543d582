"""A call lost in transport is retried only when repeating it cannot move a task twice."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from conftest import Cast, packet, result
from prickle_client import AsyncClient, TransportFailed, Unavailable


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
        with pytest.raises(TransportFailed, match="not retried") as lost:
            await coder.accept_task(task.id)
        assert isinstance(lost.value.cause, httpx.ReadError)
        assert sent == ["AcceptTask"]
        after = await coder.task(task.id)  # the move was made, once
        assert after is not None and after.state.value == "accepted"


def unavailable_first(
    monkeypatch: pytest.MonkeyPatch, client: AsyncClient, outcome: str, made: bool
) -> list[str]:
    """Answer the next request `unavailable` with `outcome`, as a server whose database went
    away answers it: after handling it (`made`) or not; the operation names sent."""
    sent: list[str] = []
    execute = client._api.execute

    async def failing(*args: Any, **kwargs: Any) -> Any:
        sent.append(str(kwargs.get("operation_name")))
        if len(sent) > 1:
            return await execute(*args, **kwargs)
        if made:
            await execute(*args, **kwargs)
        extensions = {"code": "unavailable", "retry_after": 0.05, "outcome": outcome}
        body = {"data": None, "errors": [{"message": "unavailable", "extensions": extensions}]}
        return httpx.Response(503, json=body, headers={"retry-after": "1"})

    monkeypatch.setattr(client._api, "execute", failing)
    return sent


async def test_a_move_whose_outcome_is_unknown_is_read_back_and_not_made_twice(
    cast: Cast, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with (
        AsyncClient(cast.url, cast.tokens["alice/planner"]) as planner,
        AsyncClient(cast.url, cast.tokens["bob/coder"]) as coder,
    ):
        task = await planner.handoff("outage", "bob/coder", packet())
        sent = unavailable_first(monkeypatch, coder, "unknown", made=True)
        accepted = await coder.accept_task(task.id)
        assert accepted.state.value == "accepted"
        assert sent.count("AcceptTask") == 1 and "TaskEvents" in sent
        events = await coder.task_events(task_id=task.id)
        assert [e.verb for e in events].count("accept_task") == 1


async def test_a_move_whose_outcome_is_unknown_and_was_not_made_is_sent_again(
    cast: Cast, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with (
        AsyncClient(cast.url, cast.tokens["alice/planner"]) as planner,
        AsyncClient(cast.url, cast.tokens["bob/coder"]) as coder,
    ):
        task = await planner.handoff("outage", "bob/coder", packet())
        sent = unavailable_first(monkeypatch, coder, "unknown", made=False)
        accepted = await coder.accept_task(task.id)
        assert accepted.state.value == "accepted" and sent.count("AcceptTask") == 2


async def test_a_refusal_that_changed_nothing_is_retried_and_raised_past_the_outage(
    cast: Cast, monkeypatch: pytest.MonkeyPatch
) -> None:
    import prickle_client._async as client_module

    async with AsyncClient(cast.url, cast.tokens["bob/coder"]) as coder:
        sent = unavailable_first(monkeypatch, coder, "none", made=False)
        assert (await coder.me()).id == "bob/coder" and sent == ["Me", "Me"]
        monkeypatch.setattr(client_module, "OUTAGE_SECONDS", 0.01)
        unavailable_first(monkeypatch, coder, "none", made=False)
        with pytest.raises(Unavailable, match="unavailable") as refused:
            await coder.me()
        assert refused.value.outcome == "none" and refused.value.retry_after == 0.05
