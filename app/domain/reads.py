"""What the read side is asked for and answers with: filters, a page, a saved checkpoint."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from app.domain.task import JSON

Item = TypeVar("Item")


@dataclass(frozen=True)
class TaskFilters:
    """Each field given narrows the tasks: the first five to those with that value;
    `state_in` to those in any of its (state, waiting_on) pairs (a waiting_on of None takes
    any); `updated_after` to those updated after that RFC 3339 time (A2A's ListTasks)."""

    project: str | None = None
    state: str | None = None
    assignee: str | None = None
    requester: str | None = None
    parent_task_id: str | None = None
    state_in: tuple[tuple[str, str | None], ...] | None = None
    updated_after: str | None = None


@dataclass(frozen=True)
class EventFilters:
    task_id: str | None = None
    project: str | None = None


@dataclass(frozen=True)
class Page(Generic[Item]):
    items: list[Item]
    has_next: bool


@dataclass(frozen=True)
class SavedCheckpoint:
    """A checkpoint as the server keeps it: the body the assignee saved, and who, when."""

    id: str
    task_id: str
    body: JSON
    sha256: str
    agent: str
    handed_back: bool
    created_at: str
