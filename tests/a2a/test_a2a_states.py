"""A2A's ListTasks filters by A2A state in SQL, through the (state, waiting_on) pairs each
A2A state stands for: they must take exactly the tasks that the one mapping shows so."""

from __future__ import annotations

import pytest
from a2a.types import TaskState

from app.a2a.inbound.tasks import a2a_state, prickle_states
from app.domain.table import table

pytestmark = pytest.mark.once  # the mapping alone: no database

WAITING_ON = ("owner_approval", "human", "agent", "stopped")


def _taken(pairs: tuple[tuple[str, str | None], ...], state: str, on: str | None) -> bool:
    return any(s == state and w in (None, on) for s, w in pairs)


@pytest.mark.parametrize("wanted", [TaskState.Name(s) for s in TaskState.values() if s])
def test_the_pairs_of_an_a2a_state_take_exactly_the_tasks_shown_in_it(wanted: str) -> None:
    pairs = prickle_states(TaskState.Value(wanted))
    for state in table().states:
        for on in WAITING_ON if state == "waiting" else (None,):
            shown = a2a_state(state, on) == TaskState.Value(wanted)
            assert _taken(pairs, state, on) == shown, (wanted, state, on)
