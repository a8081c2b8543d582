"""The compiled page of tasks (storage's `task_page_json`), in a read transaction."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.domain.principals import Principal
from app.domain.reads import TaskFilters
from app.storage.fast import compiled as sql
from app.storage.fast.compiled import (
    CHECKPOINT,
    CHECKPOINT_BODY,
    EVENT,
    LISTS,
    MAX_KEYS,
    RELATIONS,
    RESULT,
    RESULT_LISTS,
    SCALARS,
    Selection,
)
from app.storage.store import Store

__all__ = [
    "CHECKPOINT",
    "CHECKPOINT_BODY",
    "EVENT",
    "LISTS",
    "MAX_KEYS",
    "RELATIONS",
    "RESULT",
    "RESULT_LISTS",
    "SCALARS",
    "Selection",
    "task_page_json",
]


async def task_page_json(
    store: Store,
    viewer: Principal,
    filters: TaskFilters,
    first: int,
    after: str | None,
    selection: Selection,
) -> Mapping[str, Any]:
    """A page of the tasks the viewer sees, as the JSON of a TaskConnection with this
    selection, by one statement (PostgreSQL only)."""
    async with store.read() as tx:
        return await sql.task_page_json(tx, viewer, filters, first, after, selection)
