"""Each error code of the server raises its own exception class, with its details."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
from conftest import Cast, packet, result
from harness import running
from prickle_client import (
    Client,
    Conflict,
    Forbidden,
    Internal,
    InvalidInput,
    InvalidState,
    NotFound,
    PrickleError,
    QueryTooComplex,
    RateLimited,
    TurnBudgetExhausted,
    Unauthenticated,
)
from prickle_client.errors import from_graphql


@pytest.fixture(scope="module")
def planner(cast: Cast) -> Iterator[Client]:
    with cast.client("alice/planner") as client:
        yield client


@pytest.fixture(scope="module")
def coder(cast: Cast) -> Iterator[Client]:
    with cast.client("bob/coder") as client:
        yield client


def test_invalid_state_carries_the_state(planner: Client, coder: Client) -> None:
    task = coder.accept_task(planner.handoff("apps", "bob/coder", packet()).id)
    coder.return_result(task.id, result())
    with pytest.raises(InvalidState) as refused:
        coder.accept_task(task.id)
    assert refused.value.state == "completed" and refused.value.code == "invalid_state"


def test_forbidden_when_the_caller_may_see_but_not_move(planner: Client) -> None:
    task = planner.handoff("apps", "bob/coder", packet())
    with pytest.raises(Forbidden):
        planner.accept_task(task.id)


def test_not_found_for_a_task_the_caller_cannot_see(cast: Cast, planner: Client) -> None:
    task = planner.handoff("apps", "bob/coder", packet())
    with cast.client("carol/spy") as spy, pytest.raises(NotFound):
        spy.cancel_task(task.id)


def test_invalid_input(planner: Client) -> None:
    with pytest.raises(InvalidInput):
        planner.handoff("apps", "bob/coder", packet(acceptance_criteria=[]))


def test_invalid_input_found_before_sending(planner: Client, coder: Client) -> None:
    task = planner.handoff("apps", "bob/coder", packet())
    with pytest.raises(InvalidInput):
        planner.handoff("apps", "bob/coder", {"task": "no deliverable_type, no criteria"})
    with pytest.raises(InvalidInput):
        coder.wait_on(task.id, "someone")
    with pytest.raises(InvalidInput):
        next(iter(planner.tasks(state="nonsense")))
    after = planner.task(task.id)
    assert after is not None and after.version == task.version  # nothing was sent


def test_unauthenticated(cast: Cast) -> None:
    with Client(cast.url, "not-a-token") as stranger, pytest.raises(Unauthenticated):
        stranger.me()


def test_conflict_on_a_stale_expected_version(planner: Client, coder: Client) -> None:
    task = planner.handoff("apps", "bob/coder", packet())
    with pytest.raises(Conflict):
        coder.accept_task(task.id, expected_version=task.version - 1)
    assert planner.task(task.id) is not None


def test_turn_budget_exhausted(planner: Client, coder: Client) -> None:
    task = planner.handoff("apps", "bob/coder", packet(), turn_budget=1)
    coder.accept_task(task.id)
    with pytest.raises(TurnBudgetExhausted):
        for step in range(5):
            coder.save_checkpoint(task.id, {"progress": f"step {step}"})


def test_query_too_complex_for_too_many_aliases(planner: Client) -> None:
    document = "{ " + " ".join(f"a{n}: me {{ id }}" for n in range(31)) + " }"
    with pytest.raises(QueryTooComplex):
        planner.execute(document)
    assert planner.execute("{ me { id } }") == {"me": {"id": "alice/planner"}}


def test_internal_for_an_answer_that_is_no_graphql(cast: Cast) -> None:
    lost = Client(cast.url.replace("/graphql", "/board/nothing"), "t")
    with lost, pytest.raises(Internal):
        lost.me()
    unknown = from_graphql({"message": "?", "extensions": {"code": "something_new"}})
    assert type(unknown) is Internal and isinstance(unknown, PrickleError)


def test_rate_limited_carries_retry_after(tmp_path_factory: pytest.TempPathFactory) -> None:
    with running(tmp_path_factory.mktemp("limited"), "--rate-limit", "1") as server:
        tokens = {who: server.token(who) for who in ("alice", "bob")}
        alice = Client(server.url, tokens["alice"])
        with alice, pytest.raises(RateLimited) as refused:
            for _ in range(10):
                try_handoff(alice)
    assert refused.value.retry_after is not None and refused.value.retry_after > 0


def try_handoff(client: Client) -> None:
    """A mutation that counts against the limit (refused with not_found when it runs)."""
    with contextlib.suppress(NotFound):
        client.handoff("apps", "bob/nobody", packet())
