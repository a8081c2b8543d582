"""docs/task-states.md is generated from the transition table and committed in step with it."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.docs import task_states_markdown

pytestmark = pytest.mark.once  # the same on either backend: not run on PostgreSQL

COMMITTED = Path(__file__).resolve().parent.parent / "docs" / "task-states.md"


def test_the_committed_task_states_page_is_what_the_table_generates() -> None:
    assert COMMITTED.read_text() == task_states_markdown(), (
        "docs/task-states.md is stale: run `prickle docs` and commit the result"
    )


def test_the_task_states_page_counts_states_moves_and_ends() -> None:
    assert "11 states, 35 allowed moves, 3 end a task" in task_states_markdown()


def test_the_task_states_page_has_a_section_per_state_and_marks_the_final_ones() -> None:
    text = task_states_markdown()
    for name in (
        "requested",
        "routed",
        "accepted",
        "working",
        "waiting",
        "verifying",
        "approval",
        "returned",
    ):
        assert f"## `{name}`\n" in text
    for name in ("completed", "rejected", "cancelled"):
        assert f"## `{name}` (final)\n" in text
