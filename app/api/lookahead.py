"""What a query's selection reads of the tasks it returns, worked out from the document
before anything is read, so that the list resolvers read it all ahead in a few batch
statements and the nested fields answer from memory (the service's `Want`).

It reads the selection as Strawberry gives it to a resolver (`info.selected_fields`, its
public API). Reading ahead never changes an answer: a field that was not read ahead (a
selection this does not follow) falls back to its loader. Directives are not followed: a
field under `@skip` is read ahead all the same, which costs a statement and no more.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from strawberry.types.nodes import SelectedField, Selection

from app.api.task_types import TASK_FIELDS
from app.service.reads import Want

RELATIONS = ("parent", "children", "dependencies")
LISTS = frozenset({"results", "checkpoints", "events"})
# The task columns a field reads, where not the column of its own name.
COLUMNS: dict[str, tuple[str, ...]] = {
    "parent": ("parent_task_id",),
    "dependencies": ("packet",),
    "children": (),
    "__typename": (),
    **{name: () for name in LISTS},
}
KNOWN = frozenset({*TASK_FIELDS, *COLUMNS})  # any other field reads the whole task


def fields_of(nodes: Iterable[Selection]) -> Iterator[SelectedField]:
    """The fields selected under `nodes`, through fragments and inline fragments."""
    for node in nodes:
        yield from _flatten(node.selections)


def _flatten(selections: Iterable[Selection]) -> Iterator[SelectedField]:
    for selection in selections:
        if isinstance(selection, SelectedField):
            yield selection
        else:  # a fragment spread or an inline fragment
            yield from _flatten(selection.selections)


def want_of(nodes: Iterable[Selection]) -> Want:
    """What the selections of these Task fields read of each task."""
    by_name: dict[str, list[SelectedField]] = {}
    for node in fields_of(nodes):
        by_name.setdefault(node.name, []).append(node)
    columns: set[str] | None = {"id"}
    want = Want()
    for name, found in by_name.items():
        if name not in KNOWN:
            columns = None
        elif columns is not None:
            columns.update(COLUMNS.get(name, (name,)))
        if name in RELATIONS:
            setattr(want, name, want_of(found))
    want.columns = None if columns is None else tuple(sorted(columns))
    want.lists = LISTS.intersection(by_name)
    return want


def page_want(nodes: Iterable[Selection]) -> Want:
    """What a TaskConnection selection reads of its nodes (`edges { node { ... } }`)."""
    edges = [e for e in fields_of(nodes) if e.name == "edges"]
    return want_of([n for n in fields_of(edges) if n.name == "node"])
