"""What the read side is asked for and answers with: filters, a page, a saved checkpoint."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from app.domain.task import JSON, Task

Item = TypeVar("Item")
Cursor = TypeVar("Cursor")


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
    """Items in their order; `has_next`: whether more lie beyond them in the direction
    they were read (after them, or before them when read backward)."""

    items: list[Item]
    has_next: bool


@dataclass(frozen=True)
class Paging(Generic[Cursor]):
    """Which page: of the items after `after` and before `before` (each None: unbounded),
    the first `size`, or the last `size` when `backward`; in their order either way."""

    size: int
    after: Cursor | None = None
    before: Cursor | None = None
    backward: bool = False


Waiting = tuple[str, str]  # a place in the inbox's order: (moved_at, task id)


@dataclass(frozen=True)
class InboxPage:
    """A page of the inbox: the tasks, and each one's place in its order, by task id."""

    page: Page[Task]
    places: dict[str, Waiting]


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
