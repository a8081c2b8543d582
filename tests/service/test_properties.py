"""Property: whatever principals call whatever verbs, a task is the replay of its event log."""

from __future__ import annotations

import contextlib
import random

import pytest
from factory import (
    ALICE,
    ALLOWED,
    BOB,
    CAROL,
    CODER,
    PLANNER,
    TASK_VERBS,
    assert_valid,
    call,
    events_of,
    evidence,
    give,
    load,
    result,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.domain.errors import ProtocolError
from app.domain.events import Event
from app.domain.table import table
from app.domain.task import Task
from app.storage.store import Store

pytestmark = pytest.mark.cast

PRINCIPALS = [ALICE, PLANNER, BOB, CODER, CAROL]

# Argument variants per verb; the step's variant index picks one (modulo the list's length).
VARIANTS: dict[str, list[dict]] = {
    "wait_on": [{"on": "human"}, {"on": "agent", "agent": "alice/planner"}],
    "decide_result": [{"decision": d} for d in ("accept", "request_changes", "reject")],
    "return_result": [{"result": result()}, {"result": result([evidence([0])])}],
    "reroute": [
        {"assignee": "bob/coder"},
        {"assignee": "carol/spy"},
        {"assignee": None, "capability": {"kind": "data", "name": "warehouse"}},
        {"assignee": None, "capability": {"kind": "deploy", "name": "prod"}},
    ],
}


def actor(verb: str, task: Task):  # type: ignore[no-untyped-def]
    """The principal the table names for this verb where the task stands now."""
    if verb == "answer":
        return PLANNER if task.waiting_on == "agent" else ALICE
    if verb == "hand_back" and task.waiting_on == "stopped":
        return BOB
    if verb in ("stop_run", "resume_run", "approve_handoff", "deny_task"):
        return CAROL if task.assignee == "carol/spy" else BOB
    if verb in ("cancel_task", "reroute"):
        return PLANNER
    if verb == "decide_result":
        return ALICE
    return CODER if task.assignee == "bob/coder" else None


# A walk is a seeded random sequence of (verb, principal) steps: mostly a verb the table
# allows where the task stands (seldom one that ends it at once, so walks go deep), now and
# then any verb at all; mostly the principal the table names as the actor, now and then anyone.
ENDING = {"cancel_task", "deny_task"}


def step(rng: random.Random, task: Task):  # type: ignore[no-untyped-def]
    allowed = ALLOWED[(task.state, task.waiting_on)]
    roll = rng.random()
    if roll < 0.7 and allowed - ENDING:
        verb = rng.choice(sorted(allowed - ENDING))
    elif roll < 0.8 and allowed:
        verb = rng.choice(sorted(allowed))
    else:
        verb = rng.choice(TASK_VERBS)
    named = actor(verb, task)
    who = named if named is not None and rng.random() < 0.75 else rng.choice(PRINCIPALS)
    return verb, who, rng.choice(VARIANTS.get(verb, [{}]))


def replay(events: list[Event]) -> tuple[str, str | None]:
    """Fold the log through the table; every step must start where the previous one ended."""
    first = events[0]
    assert (first.kind, first.from_state, first.to_state, first.version) == (
        "created",
        None,
        "requested",
        1,
    )
    state, waiting_on = "requested", None
    for number, event in enumerate(events[1:], start=2):
        assert event.version == number
        assert event.from_state == state, (
            f"event {number} starts at {event.from_state}, not {state}"
        )
        if event.kind == "checkpointed":
            assert (event.verb, event.to_state) == ("save_checkpoint", state)
            assert event.waiting_on == waiting_on
        else:
            assert table().find(state, event.to_state, event.verb), (
                state,
                event.to_state,
                event.verb,
            )
        state, waiting_on = event.to_state, event.waiting_on
        assert (waiting_on is not None) == (state == "waiting")
    return state, waiting_on


async def check_invariants(store: Store, task_id: str) -> None:
    task = await load(store, task_id)
    events = await events_of(store, task_id)
    assert replay(events) == (task.state, task.waiting_on)
    assert task.version == len(events)
    assert events[-1].task == task.to_protocol()
    assert_valid(task)


@settings(
    max_examples=50,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    project=st.sampled_from(["work", "held", "review", "strict", "easy"]),
    budget=st.sampled_from([None, 0, 1, 3]),
    seed=st.integers(min_value=0, max_value=2**32),
    length=st.integers(min_value=8, max_value=20),
)
async def test_a_task_is_always_the_replay_of_its_event_log_and_valid_against_the_schema(
    store, project: str, budget: int | None, seed: int, length: int
) -> None:
    rng = random.Random(seed)
    task = await give(store, project=project, turn_budget=budget)
    await check_invariants(store, task.id)
    for _ in range(length):
        verb, who, args = step(rng, await load(store, task.id))
        with contextlib.suppress(ProtocolError):  # a refused step is part of the walk
            await call(store, verb, who, task.id, **args)
        await check_invariants(store, task.id)
