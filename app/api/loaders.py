"""Batch loaders, created per request: each nested list costs one statement per level,
however many tasks a query returns. Visibility is applied in every query they make."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from strawberry.dataloader import DataLoader

from app.domain.events import Event
from app.domain.principals import Principal
from app.domain.task import JSON, Task
from app.storage import reads
from app.storage.reads import StoredCheckpoint
from app.storage.store import Store, Tx

Query = Callable[[Tx, Principal, Sequence[str]], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class Loaders:
    tasks: DataLoader[str, Task | None]
    children: DataLoader[str, list[Task]]
    results: DataLoader[str, list[JSON]]
    checkpoints: DataLoader[str, list[StoredCheckpoint]]
    events: DataLoader[str, list[Event]]


def create_loaders(store: Store, principal: Principal, cache: bool = True) -> Loaders:
    """`cache=False` for a WebSocket connection, whose context outlives any one operation."""

    def loader(query: Query, missing: Callable[[], Any]) -> DataLoader[str, Any]:
        async def load(keys: list[str]) -> list[Any]:
            async with store.read() as tx:
                found = await query(tx, principal, list(dict.fromkeys(keys)))
            return [found[k] if k in found else missing() for k in keys]

        return DataLoader(load_fn=load, cache=cache)

    return Loaders(
        tasks=loader(reads.tasks_by_id, lambda: None),
        children=loader(reads.children_of, list),
        results=loader(reads.results_of, list),
        checkpoints=loader(reads.checkpoints_of, list),
        events=loader(reads.events_of, list),
    )
