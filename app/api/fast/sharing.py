"""Subscription events executed once per document, variables, viewer and event, then shared.

graphql-core executes a subscription's selection set for every subscriber and every event.
A live board is many subscribers of one document: 1,000 of them watching one project made
1,000 identical executions of each move's event, which was half of the time until the last
of them heard of it (docs/performance.md). Here the first subscriber to reach an event
executes it; the others with the same document, variables and viewer take its result.

The viewer is part of the key because fields below an event (a task's `allowed_verbs`,
its children) answer differently to different principals. Anything this cannot key
safely (no document text, variables that are not hashable, another root value) is
executed as usual.
"""

from __future__ import annotations

import asyncio
import inspect
from collections import OrderedDict
from collections.abc import Hashable
from contextvars import ContextVar
from typing import Any

from graphql import OperationType

from app.api.task_types import TaskEvent
from app.compat.strawberry import CoreExecutor

SHARED_RESULTS = 1024  # events times (document, variables, viewer) kept; evicted oldest first

_results: OrderedDict[Hashable, Any] = OrderedDict()
_UNKEYED = object()

subscribing: ContextVar[SharingExecutor | None] = ContextVar("subscribing", default=None)
"""The executor of the subscription whose operation runs in this task (each WebSocket
operation has a task of its own), so that its resolver can execute events itself."""


class SharingExecutor(CoreExecutor):
    _share_key: Hashable | None = None
    _subscription_key: Any = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.operation.operation == OperationType.SUBSCRIPTION:
            subscribing.set(self)

    def build_per_event_executor(self, payload: Any) -> SharingExecutor:
        executor = super().build_per_event_executor(payload)
        assert isinstance(executor, SharingExecutor)  # a copy of this one
        executor._share_key = _key(self, payload)
        return executor

    def execute_operation(self, serially: bool | None = None) -> Any:
        key = self._share_key
        if key is None:
            return super().execute_operation(serially)
        if key in _results:
            return _results[key]
        result = super().execute_operation(serially)
        if inspect.isawaitable(result):  # others await the same task instead of executing
            result = asyncio.ensure_future(result)
        _results[key] = result
        if len(_results) > SHARED_RESULTS:
            _results.popitem(last=False)
        return result


def event_result(executor: SharingExecutor, payload: TaskEvent) -> Any:
    """The subscription's result for one event (maybe awaitable): another subscriber's when
    it has one, without building a per-event executor."""
    key = _key(executor, payload)
    if key is not None and key in _results:
        return _results[key]
    return executor.build_per_event_executor(payload).execute_operation(False)


def _key(executor: SharingExecutor, payload: Any) -> Hashable | None:
    if not isinstance(payload, TaskEvent):
        return None
    subscription = executor._subscription_key
    if subscription is None:  # the same for every event: worked out once per subscription
        subscription = executor._subscription_key = _subscription_key(executor)
    if subscription is _UNKEYED:
        return None
    return (subscription, payload.seq, payload.kind, payload.task_id, payload.version)


def _subscription_key(executor: SharingExecutor) -> Hashable:
    viewer = getattr(executor.context_value, "principal", None)
    if executor.operation.loc is None or viewer is None:
        return _UNKEYED
    try:
        variables = tuple(sorted(executor.variable_values.coerced.items()))
        hash(variables)
    except TypeError:
        return _UNKEYED
    return (executor.operation.loc.source.body, executor.operation.loc.start, variables, viewer)
