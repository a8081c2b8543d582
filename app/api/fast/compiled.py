"""The hot read, compiled: a query that is one `tasks` page of scalar fields and related
tasks is answered by one SQL statement that builds the JSON itself (storage's `task_page_json`),
instead of graphql-core executing every field of every task.

The document has been parsed, validated and held to the limits as any other; only the
execution is replaced, and only for a query exactly within this subset (anything else runs
as usual):

- the operation selects `tasks` alone (aliased or not), with no directive anywhere;
- under it: `edges { cursor node { ... } }`, `pageInfo { hasNextPage hasPreviousPage
  startCursor endCursor }` (and the deprecated `page_info { has_next_page end_cursor }`),
  `total_count` and `__typename`, with no fragment and no response key twice at a level;
- the page is read forward (`first`, `after`); `last` or `before` runs as usual;
- a node selects the Task's scalar fields, `__typename`, and `parent`, `children` and
  `dependencies` with selections of the same kind, to any depth; and its lists: `results`
  (their scalar fields and `evidence`, `artifacts`, `verdicts`; not the actor and lineage
  unions), `checkpoints` (with `checkpoint`) and `events` (not their `task`).

The arguments (literals or variables) are checked as the resolver checks them; when one
would be refused, when the caller is not authenticated, or on SQLite, the query runs as
usual so that the answer, errors included, is the usual one. The statement runs in the
query's read transaction (`OneReadTransaction`). The compiled page's tests hold the
compiled answer equal to the general one for random selections and viewers.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from graphql import FieldNode, OperationDefinitionNode, OperationType, get_argument_values

from app.api.enums import plain
from app.api.fast import compiled_moves as moves
from app.api.fast.plans import Plans
from app.api.fast.sharing import SharingExecutor
from app.api.queries import paging, task_id
from app.domain.reads import TaskFilters
from app.service.fast import compiled as service
from app.service.fast.compiled import (
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

CONNECTION = frozenset({"edges", "pageInfo", "page_info", "total_count", "__typename"})
EDGE = frozenset({"cursor", "node", "__typename"})
PAGE_INFO = frozenset(
    {
        "hasNextPage",
        "hasPreviousPage",
        "startCursor",
        "endCursor",
        "has_next_page",
        "end_cursor",
        "__typename",
    }
)
TASK = SCALARS | RELATIONS | LISTS | {"__typename"}
TYPENAME = frozenset({"__typename"})


class Refused(Exception):
    """The document is outside the compiled subset."""


@dataclass(frozen=True)
class Plan:
    key: str  # the response key of `tasks`
    node: FieldNode
    selection: Selection


def _fields(node: FieldNode | OperationDefinitionNode) -> Sequence[FieldNode]:
    if node.directives or node.selection_set is None:
        raise Refused
    found = node.selection_set.selections
    if not all(isinstance(f, FieldNode) for f in found) or len(found) > MAX_KEYS:
        raise Refused
    return [f for f in found if isinstance(f, FieldNode)]


def _selection(node: FieldNode, names: frozenset[str], below: dict[str, Any]) -> Selection:
    """The selection under `node`, each field one of `names`; `below` says how to read
    the selection under a field (by name) that has one."""
    keys: list[tuple[str, str, Selection | None]] = []
    for field in _fields(node):
        name = field.name.value
        if name not in names or field.arguments or field.directives:
            raise Refused
        key = field.alias.value if field.alias else name
        if any(key == k for k, _, _ in keys):
            raise Refused
        if (field.selection_set is None) == (name in below):
            raise Refused
        keys.append((key, name, below[name](field) if name in below else None))
    return tuple(keys)


def _task(node: FieldNode) -> Selection:
    below = {**dict.fromkeys(RELATIONS, _task), **_LISTS}
    return _selection(node, TASK, below)


def _flat(names: frozenset[str]) -> Any:
    return lambda node: _selection(node, names | TYPENAME, {})


_LISTS: dict[str, Any] = {
    "results": lambda node: _selection(
        node,
        RESULT | TYPENAME | set(RESULT_LISTS),
        {name: _flat(fields) for name, (_, fields) in RESULT_LISTS.items()},
    ),
    "checkpoints": lambda node: _selection(
        node, CHECKPOINT | TYPENAME | {"checkpoint"}, {"checkpoint": _flat(CHECKPOINT_BODY)}
    ),
    "events": _flat(EVENT),
}


def _edge(node: FieldNode) -> Selection:
    return _selection(node, EDGE, {"node": _task})


def _page_info(node: FieldNode) -> Selection:
    return _selection(node, PAGE_INFO, {})


def _connection(node: FieldNode) -> Selection:
    below = {"edges": _edge, "pageInfo": _page_info, "page_info": _page_info}
    return _selection(node, CONNECTION, below)


def plan_of(operation: OperationDefinitionNode) -> Plan | None:
    """The compiled plan of the operation, or None when it is outside the subset."""
    if operation.operation != OperationType.QUERY:
        return None
    try:
        fields = _fields(operation)
        if len(fields) != 1 or fields[0].name.value != "tasks":
            return None
        node = fields[0]
        key = node.alias.value if node.alias else "tasks"
        return Plan(key, node, _connection(node))
    except Refused:
        return None


_plans = Plans(plan_of)


def _arguments(executor: SharingExecutor, plan: Plan) -> tuple[TaskFilters, int, str | None]:
    """The `tasks` arguments as the resolver reads them; raises where it would refuse."""
    query = executor.schema.query_type
    assert query is not None
    args = get_argument_values(query.fields["tasks"], plan.node, executor.variable_values)
    filters = TaskFilters(
        args.get("project"),
        plain(args.get("state")),
        args.get("assignee"),
        args.get("requester"),
        args.get("parent_task_id"),
    )
    if any(isinstance(v, str) and "\x00" in v for v in vars(filters).values()):
        raise Refused  # the database refuses it: the general path says so
    first, last = args.get("first"), args.get("last")
    pages = paging(first, args.get("after"), last, args.get("before"), task_id)
    if pages.backward or pages.before is not None:
        raise Refused  # forward pages only: the general path reads the others
    return filters, pages.size, pages.after


async def answer(executor: SharingExecutor, plan: Plan) -> dict[str, Any] | None:
    """The data of the query by the compiled statement; None where the general path answers."""
    context = executor.context_value
    store = getattr(context, "store", None)
    if store is None or store.sqlite:
        return None
    try:
        viewer = await context.viewer()
        filters, first, after = _arguments(executor, plan)
    except Exception:  # refused as the general path refuses it, with its error
        return None
    page = await service.task_page_json(store, viewer, filters, first, after, plan.selection)
    return {plan.key: page}


def _resolving(manager: Any) -> bool:
    """Whether schema extensions resolve fields (field middleware)."""
    return manager is not None and bool(manager.middlewares)


class CompilingExecutor(SharingExecutor):
    """Executes a query within the compiled subset by its one statement; any other as usual."""

    def execute_operation(self, serially: bool | None = None) -> Any:
        if self._share_key is not None:
            return super().execute_operation(serially)
        if self.operation.operation == OperationType.MUTATION:
            move = moves.cached_plan(self.schema, self.operation)
            if move is None or _resolving(self.middleware_manager):
                return super().execute_operation(serially)
            return moves.execute(self, move)
        plan = _plans.of(self.operation)
        if plan is None:
            return super().execute_operation(serially)
        return self._compiled(plan, serially)

    async def _compiled(self, plan: Plan, serially: bool | None) -> Any:
        data = await answer(self, plan)
        if data is not None:
            return self.build_response(data)
        result = super().execute_operation(serially)
        return await result if inspect.isawaitable(result) else result
