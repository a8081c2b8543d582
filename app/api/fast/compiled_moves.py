"""The hot mutation, executed directly: a document that is one mutation returning a Task,
with a selection of the Task's scalar fields, runs its field's resolver (Strawberry's, with
the argument conversion and the field extensions, `SpendsAToken` included) and builds the
answer from the task it returns, instead of graphql-core executing the selection.

The document has been parsed, validated and held to the limits as any other; only the
execution is replaced, and only for a mutation exactly within this subset (anything else
runs as usual):

- the operation selects one mutation field (aliased or not), with no directive anywhere;
- the field returns `Task!`;
- under it: the Task's scalar fields and `__typename`, with no argument, directive or
  fragment, and no response key twice.

The answer is the one graphql-core gives: each scalar serialized by its GraphQL type, a
null in a non-null field an error, and a refusal located at the field with `data` null.
Schema extensions that resolve fields (field middleware) send every document the usual way.
The compiled moves' tests hold the two paths to the same answers.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graphql import (
    FieldNode,
    GraphQLField,
    GraphQLLeafType,
    GraphQLObjectType,
    GraphQLSchema,
    OperationDefinitionNode,
    OperationType,
    get_argument_values,
    get_nullable_type,
    is_leaf_type,
    is_non_null_type,
    located_error,
)
from graphql.pyutils import Path

from app.api.fast.plans import Plans
from app.service.fast.compiled import SCALARS


@dataclass(frozen=True, slots=True)
class Leaf:
    key: str
    node: FieldNode
    type: GraphQLLeafType | None  # None: __typename
    non_null: bool


@dataclass(frozen=True, slots=True)
class MovePlan:
    key: str  # the mutation's response key
    node: FieldNode
    field: GraphQLField
    resolve: Callable[..., Any]  # Strawberry's: arguments converted, field extensions run
    parent: GraphQLObjectType  # Mutation
    task_type: GraphQLObjectType
    leaves: tuple[Leaf, ...]


def plan_of(schema: GraphQLSchema, operation: OperationDefinitionNode) -> MovePlan | None:
    """The plan of the operation, or None when it is outside the subset."""
    parent = schema.mutation_type
    if operation.operation != OperationType.MUTATION or parent is None or operation.directives:
        return None
    roots = operation.selection_set.selections
    if len(roots) != 1 or not isinstance(roots[0], FieldNode) or roots[0].directives:
        return None
    node = roots[0]
    field = parent.fields.get(node.name.value)
    if field is None or field.resolve is None or not is_non_null_type(field.type):
        return None
    task_type = get_nullable_type(field.type)
    if not isinstance(task_type, GraphQLObjectType) or task_type.name != "Task":
        return None
    leaves = _leaves(task_type, node)
    if leaves is None:
        return None
    key = node.alias.value if node.alias else node.name.value
    return MovePlan(key, node, field, field.resolve, parent, task_type, leaves)


def _leaves(task_type: GraphQLObjectType, node: FieldNode) -> tuple[Leaf, ...] | None:
    """The selection under the mutation, when it is only the Task's scalars."""
    if node.selection_set is None:
        return None
    leaves: list[Leaf] = []
    for selected in node.selection_set.selections:
        if not isinstance(selected, FieldNode) or selected.directives or selected.arguments:
            return None
        name = selected.name.value
        key = selected.alias.value if selected.alias else name
        if selected.selection_set is not None or any(leaf.key == key for leaf in leaves):
            return None
        if name == "__typename":
            leaves.append(Leaf(key, selected, None, True))
            continue
        if name not in SCALARS or name not in task_type.fields:
            return None
        of = task_type.fields[name].type
        leaf_type = get_nullable_type(of)
        if not is_leaf_type(leaf_type):
            return None
        leaves.append(Leaf(key, selected, leaf_type, is_non_null_type(of)))
    return tuple(leaves)


_plans: dict[GraphQLSchema, Plans[MovePlan]] = {}


def cached_plan(schema: GraphQLSchema, operation: OperationDefinitionNode) -> MovePlan | None:
    """`plan_of`, worked out once per document and operation (`Plans`)."""
    plans = _plans.get(schema)
    if plans is None:
        plans = _plans[schema] = Plans(lambda o: plan_of(schema, o))
    return plans.of(operation)


def _completed(plan: MovePlan, task: Any) -> dict[str, Any]:
    """The task's selected fields, as graphql-core completes them: a field that cannot be
    completed is an error located at it."""
    answer: dict[str, Any] = {}
    for leaf in plan.leaves:
        try:
            answer[leaf.key] = _leaf(plan, leaf, task)
        except Exception as raw:
            raise located_error(raw, [leaf.node], [plan.key, leaf.key]) from raw
    return answer


def _leaf(plan: MovePlan, leaf: Leaf, task: Any) -> Any:
    if leaf.type is None:
        return plan.task_type.name
    value = getattr(task, leaf.node.name.value)
    if value is None:
        if leaf.non_null:
            raise TypeError(
                f"Cannot return null for non-nullable field"
                f" {plan.task_type.name}.{leaf.node.name.value}."
            )
        return None
    return leaf.type.serialize(value)


async def execute(executor: Any, plan: MovePlan) -> Any:
    """The result of the mutation: its data, or its one located error with `data` null
    (the field is non-null: an error in it nulls the whole answer)."""
    path = Path(None, plan.key, plan.parent.name)
    info = executor.build_resolve_info(plan.field, [plan.node], plan.parent, path)
    try:
        args = get_argument_values(plan.field, plan.node, executor.variable_values)
        task = plan.resolve(executor.root_value, info, **args)
        if inspect.isawaitable(task):
            task = await task
        if task is None:
            name = f"{plan.parent.name}.{plan.node.name.value}"
            raise TypeError(f"Cannot return null for non-nullable field {name}.")
        data: dict[str, Any] | None = {plan.key: _completed(plan, task)}
    except Exception as raw:  # an error already located (a leaf's) stays where it is
        executor.collected_errors.add(located_error(raw, [plan.node], path.as_list()), None)
        data = None
    return executor.build_response(data)
