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

A replay reads only the selected fields (`BatchSender.fields`), as rows in the selection's
order (`cursor` is the seq as text, read as such), so that an item is `dict(zip(keys,
row))`: no event object, no attribute looked up by name (docs/performance.md). Live lists
are the hub's events, built field by field.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
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

from app.api.fast.delivery import running
from app.compat import strawberry as strawberry_compat
from app.domain.events import FIELDS, Event
from app.events.stream import Rows

_SCALARS = frozenset(FIELDS)
_TYPENAME = "TaskEvent"


@dataclass(frozen=True)
class BatchSender:
    """Sends this operation's lists as plain data. The replay reads `fields` alone, as rows
    (the event stream's `Rows`), and each item is built from its row."""

    fields: tuple[str, ...]  # the event fields the selection reads, in order
    send: Callable[[list[Event] | Rows], Awaitable[None]]


def batch_sender(info: strawberry.Info) -> BatchSender | None:
    """A sender of whole lists for this operation, or None where Strawberry must execute."""
    operation = running.get()
    if operation is None:
        return None
    raw = strawberry_compat.raw_info(info)
    if len(raw.field_nodes) != 1:
        return None
    keys: list[tuple[str, str]] = []
    if not _plain(raw.field_nodes[0].selection_set, raw, keys):
        return None
    field = (raw.field_nodes[0].alias or raw.field_nodes[0].name).value
    fields = tuple(dict.fromkeys(name for _, name in keys if name != "__typename"))
    from_row = _from_row(keys, fields)

    async def send(batch: list[Event] | Rows) -> None:
        if not strawberry_compat.operation_is_open(operation):
            return  # completed: Strawberry is cancelling this task
        if isinstance(batch, Rows):
            items = from_row(batch)
        else:
            items = [_item(event, keys) for event in batch]
        await strawberry_compat.send_result(operation, ExecutionResult(data={field: items}))

    return BatchSender(fields, send)


def _from_row(
    keys: list[tuple[str, str]], fields: tuple[str, ...]
) -> Callable[[Rows], list[dict[str, Any]]]:
    """The items of a list of rows of `fields` (then seq and version, left out)."""
    names = [key for key, _ in keys]
    if [name for _, name in keys] == list(fields):  # each field once, no __typename
        # zip stops at the last key: the row's seq and version are left out
        return lambda rows: [dict(zip(names, row, strict=False)) for row in rows]
    # a row's values, then the type name: the value of each key at its place
    at = [len(fields) + 2 if name == "__typename" else fields.index(name) for _, name in keys]

    def items(rows: Rows) -> list[dict[str, Any]]:
        return [
            dict(zip(names, [values[i] for i in at], strict=True))
            for values in ((*row, _TYPENAME) for row in rows)
        ]

    return items


def _item(event: Event, keys: list[tuple[str, str]]) -> dict[str, Any]:
    item: dict[str, Any] = {}
    for key, name in keys:
        if name == "cursor":
            item[key] = event.cursor
        elif name == "__typename":
            item[key] = _TYPENAME
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
