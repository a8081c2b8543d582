"""Batch loaders, created per request: each nested list costs one statement per level,
however many tasks a query returns. Visibility is applied in every query they make."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from strawberry.dataloader import DataLoader

from app.domain.events import Event
from app.domain.gate import GateRule
from app.domain.principals import Principal
from app.domain.reads import SavedCheckpoint
from app.domain.task import JSON, Task
from app.service import reads
from app.service.database import Store

Lookup = Callable[[Store, Principal, Sequence[str]], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class Loaders:
    tasks: DataLoader[str, Task | None]
    children: DataLoader[str, list[Task]]
    results: DataLoader[str, list[JSON]]
    checkpoints: DataLoader[str, list[SavedCheckpoint]]
    events: DataLoader[str, list[Event]]
    gate_rules: DataLoader[str, list[GateRule]]  # the viewer's own, by owner


def create_loaders(store: Store, principal: Principal, cache: bool = True) -> Loaders:
    """`cache=False` for a WebSocket connection, whose context outlives any one operation."""

    def loader(lookup: Lookup, missing: Callable[[], Any]) -> DataLoader[str, Any]:
        async def load(keys: list[str]) -> list[Any]:
            found = await lookup(store, principal, list(dict.fromkeys(keys)))
            return [found[k] if k in found else missing() for k in keys]

        return DataLoader(load_fn=load, cache=cache)

    return Loaders(
        tasks=loader(reads.tasks_by_id, lambda: None),
        children=loader(reads.children_of, list),
        results=loader(reads.results_of, list),
        checkpoints=loader(reads.checkpoints_of, list),
        events=loader(reads.events_of, list),
        gate_rules=loader(reads.own_gate_rules, list),
    )
