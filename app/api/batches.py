"""Lists of events sent straight to a graphql-transport-ws subscriber, without executing
the selection for each event, when the selection allows it.

`task_event_batches` exists for subscribers far behind: ten thousand events in lists of
a thousand. Executing a selection costs graphql-core about 100 µs an event, more than the
rest of the catch-up together (docs/performance.md). When every field the subscription
selects is a scalar of `TaskEvent` (the event's own fields, no `task { … }`, no arguments
or directives; fragments on `TaskEvent` allowed), the value of each is the event's own
attribute, so the list is built as plain data here and sent with Strawberry's
`Operation.send_next`: the message is the one Strawberry would send. Any other selection
goes through Strawberry as usual.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import strawberry
from graphql import (
    ExecutionResult,
    FieldNode,
    FragmentSpreadNode,
    GraphQLResolveInfo,
    InlineFragmentNode,
    SelectionSetNode,
)

from app.api.delivery import running
from app.domain.events import Event

SendBatch = Callable[[list[Event]], Awaitable[None]]

_SCALARS = {
    "seq",
    "kind",
    "task_id",
    "project",
    "from_state",
    "to_state",
    "waiting_on",
    "verb",
    "actor",
    "at",
    "version",
    "note",
}


def batch_sender(info: strawberry.Info) -> SendBatch | None:
    """A sender of whole lists for this operation, or None where Strawberry must execute."""
    operation, raw = running.get(), info._raw_info
    if operation is None or len(raw.field_nodes) != 1:
        return None
    keys: list[tuple[str, str]] = []
    if not _plain(raw.field_nodes[0].selection_set, raw, keys):
        return None
    field = raw.field_nodes[0].alias or raw.field_nodes[0].name
    handler = operation.handler

    async def send(batch: list[Event]) -> None:
        if handler.operations.get(operation.id) is not operation:
            return  # completed: Strawberry is cancelling this task
        items = [_item(event, keys) for event in batch]
        await operation.send_next(ExecutionResult(data={field.value: items}))

    return send


def _item(event: Event, keys: list[tuple[str, str]]) -> dict[str, Any]:
    item: dict[str, Any] = {}
    for key, name in keys:
        if name == "cursor":
            item[key] = event.cursor
        elif name == "__typename":
            item[key] = "TaskEvent"
        else:
            item[key] = getattr(event, name)
    return item


def _plain(
    selection: SelectionSetNode | None,
    info: GraphQLResolveInfo[Any],
    keys: list[tuple[str, str]],
) -> bool:
    """Whether the selection is scalar fields of TaskEvent only; their (key, field) pairs in
    `keys`, in order, each key once."""
    if selection is None:
        return False
    for node in selection.selections:
        if node.directives:
            return False
        if isinstance(node, FieldNode):
            name = node.name.value
            if node.arguments or node.selection_set is not None:
                return False
            if name not in _SCALARS and name not in ("cursor", "__typename"):
                return False
            key = (node.alias or node.name).value
            if any(k == key and n != name for k, n in keys):
                return False
            if (key, name) not in keys:
                keys.append((key, name))
        elif isinstance(node, FragmentSpreadNode):
            fragment = info.fragments.get(node.name.value)
            if fragment is None or fragment.type_condition.name.value != "TaskEvent":
                return False
            if not _plain(fragment.selection_set, info, keys):
                return False
        elif isinstance(node, InlineFragmentNode):
            condition = node.type_condition
            if condition is not None and condition.name.value != "TaskEvent":
                return False
            if not _plain(node.selection_set, info, keys):
                return False
        else:
            return False
    return True
