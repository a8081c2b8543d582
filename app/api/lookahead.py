"""What a query's selection reads of the tasks it returns, worked out from the document
before anything is read, so that the list resolvers read it all ahead in a few batch
statements and the nested fields answer from memory (`app.service.reads.Want`).

Reading ahead never changes an answer: a field that was not read ahead (a selection this
does not follow) falls back to its loader. Directives are not followed: a field under
`@skip` is read ahead all the same, which costs a statement and no more.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from graphql import FieldNode, FragmentDefinitionNode, FragmentSpreadNode, InlineFragmentNode

from app.api.types import TASK_FIELDS
from app.service.reads import Want

Fragments = Mapping[str, FragmentDefinitionNode]

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


def fields_of(nodes: Iterable[FieldNode], fragments: Fragments) -> Iterator[FieldNode]:
    """The fields selected under `nodes`, through fragments and inline fragments."""
    for node in nodes:
        if node.selection_set is not None:
            yield from _flatten(node.selection_set.selections, fragments)


def _flatten(selections: Iterable[Any], fragments: Fragments) -> Iterator[FieldNode]:
    for selection in selections:
        if isinstance(selection, FieldNode):
            yield selection
        elif isinstance(selection, InlineFragmentNode):
            yield from _flatten(selection.selection_set.selections, fragments)
        elif isinstance(selection, FragmentSpreadNode):
            fragment = fragments.get(selection.name.value)
            if fragment is not None:
                yield from _flatten(fragment.selection_set.selections, fragments)


def want_of(nodes: Iterable[FieldNode], fragments: Fragments) -> Want:
    """What the selections of these Task fields read of each task."""
    by_name: dict[str, list[FieldNode]] = {}
    for node in fields_of(nodes, fragments):
        by_name.setdefault(node.name.value, []).append(node)
    columns: set[str] | None = {"id"}
    want = Want()
    for name, found in by_name.items():
        if name not in KNOWN:
            columns = None
        elif columns is not None:
            columns.update(COLUMNS.get(name, (name,)))
        if name in RELATIONS:
            setattr(want, name, want_of(found, fragments))
    want.columns = None if columns is None else tuple(sorted(columns))
    want.lists = LISTS.intersection(by_name)
    return want


def page_want(nodes: Iterable[FieldNode], fragments: Fragments) -> Want:
    """What a TaskConnection selection reads of its nodes (`edges { node { ... } }`)."""
    edges = [e for e in fields_of(nodes, fragments) if e.name.value == "edges"]
    return want_of([n for n in fields_of(edges, fragments) if n.name.value == "node"], fragments)


def of_field(info: Any) -> tuple[list[FieldNode], Fragments]:
    """The resolver's field nodes and the document's fragments (graphql-core's info)."""
    raw = info._raw_info
    return list(raw.field_nodes), raw.fragments
