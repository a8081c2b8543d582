"""The task verbs' mutations, built from their declarations in the service, and the
declarations themselves as the API serves them (`TaskVerb`, the `task_verbs` query).

Each declared verb is one field: `task_id`, the fields of its arguments' type in their
order (each with its GraphQL type: `GRAPHQL_TYPES` below for those whose Python type is
not already one, and its doc as its description), then `expected_version`; its resolver
builds the arguments, calls the verb with the caller and returns the task.

Two documents per verb derive from the same: `operation_document`, the one graphql/mutations/
holds (`prickle schema --documents graphql/mutations` writes them; a test holds them fresh),
and `form_document`, the one a form sends (`TaskVerb.document`), which the server always
trusts (`Documents`).
"""

from __future__ import annotations

import dataclasses
import inspect
import types
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import strawberry

from app.api import enums
from app.api import inputs as graphql_inputs
from app.api.task_types import Task
from app.domain.table import table
from app.service import arguments, inputs
from app.service.verbs import Argument, Declared, FormField, registry

Version = Annotated[
    int | None,
    strawberry.argument(description="Refuse with conflict unless the task is at this version."),
]

# the GraphQL type of each Python type of an argument that is not one already
GRAPHQL_TYPES: dict[Any, Any] = {
    arguments.WaitFor: enums.WaitOn,
    arguments.Decision: enums.Decision,
    inputs.CheckpointInput: graphql_inputs.CheckpointInput,
    inputs.ResultInput: graphql_inputs.ResultInput,
    inputs.VerdictInput: graphql_inputs.VerdictInput,
    inputs.CapabilityInput: graphql_inputs.CapabilityInput,
}

_KEYWORD = inspect.Parameter.KEYWORD_ONLY


def fields() -> dict[str, Any]:
    """Each declared verb's mutation field, by name, in the order declared."""
    return {verb.name: _field(verb) for verb in registry()}


def _field(verb: Declared[Any]) -> Any:
    async def resolve(
        self: Any, info: strawberry.Info, task_id: str, expected_version: int | None, **given: Any
    ) -> Task:
        ctx = info.context
        args = verb.args(**given)
        return Task.from_domain(
            await verb.run(ctx.store, await ctx.viewer(), task_id, args, expected_version)
        )

    resolve.__name__ = resolve.__qualname__ = verb.name
    vars(resolve)["__signature__"] = _signature(verb)  # what Strawberry reads the arguments from
    return strawberry.mutation(resolve, description=verb.description)


def _signature(verb: Declared[Any]) -> inspect.Signature:
    defaults = {f.name: _default(f) for f in dataclasses.fields(verb.args)}
    given = [
        inspect.Parameter(a.name, _KEYWORD, annotation=_annotated(a), default=defaults[a.name])
        for a in verb.arguments()
    ]
    return inspect.Signature(
        [
            inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
            inspect.Parameter("info", _KEYWORD, annotation=strawberry.Info),
            inspect.Parameter("task_id", _KEYWORD, annotation=strawberry.ID),
            *given,
            inspect.Parameter("expected_version", _KEYWORD, annotation=Version, default=None),
        ],
        return_annotation=Task,
    )


def _annotated(argument: Argument) -> Any:
    graphql = _graphql(argument.python)
    if argument.doc is None:
        return graphql
    return Annotated[graphql, strawberry.argument(description=argument.doc)]


def _default(field: dataclasses.Field[Any]) -> Any:
    return inspect.Parameter.empty if field.default is dataclasses.MISSING else field.default


def _graphql(python: Any) -> Any:
    """The GraphQL type of an argument's Python type: optional and list types kept."""
    if get_origin(python) in (Union, types.UnionType):
        (inner,) = [a for a in get_args(python) if a is not type(None)]
        return _graphql(inner) | None
    if get_origin(python) is list:
        return types.GenericAlias(list, (_graphql(get_args(python)[0]),))
    return GRAPHQL_TYPES.get(python, python)


_SCALARS: dict[Any, str] = {str: "String", int: "Int", bool: "Boolean", float: "Float"}


def graphql_type(argument: Argument) -> str:
    """The argument's GraphQL type as a document declares it: `String`, `WaitOn!`, …"""
    python = argument.python
    if get_origin(python) in (Union, types.UnionType):
        (python,) = [a for a in get_args(python) if a is not type(None)]
    return _type_name(python) + ("!" if argument.required else "")


def _type_name(python: Any) -> str:
    if get_origin(python) is list:
        return f"[{_type_name(get_args(python)[0])}!]"
    graphql = GRAPHQL_TYPES.get(python, python)
    return _SCALARS.get(graphql) or str(graphql.__name__)


def _options(argument: Argument) -> list[str] | None:
    python = argument.python
    if get_origin(python) in (Union, types.UnionType):
        (python,) = [a for a in get_args(python) if a is not type(None)]
    return [str(v) for v in get_args(python)] if get_origin(python) is Literal else None


def _operation_name(verb: str) -> str:
    return "".join(part.capitalize() for part in verb.split("_"))


WIDTH = 100  # graphql/'s documents are wrapped as prettier wraps them at this width


def operation_document(verb: Declared[Any]) -> str:
    """graphql/mutations/<verb>.graphql: the verb with every argument, answering TaskDetail."""
    arguments = [(a.name, graphql_type(a)) for a in verb.arguments()]
    declared = ["$task_id: ID!", *(f"${n}: {t}" for n, t in arguments), "$expected_version: Int"]
    passed = ["task_id: $task_id", *(f"{n}: ${n}" for n, _ in arguments)]
    passed.append("expected_version: $expected_version")
    lines = [f"# {verb.description}"] if verb.description else []
    head = f"mutation {_operation_name(verb.name)}({', '.join(declared)}) {{"
    if len(head) <= WIDTH:
        lines.append(head)
    else:
        lines += [f"mutation {_operation_name(verb.name)}(", *(f"  {d}" for d in declared), ") {"]
    call = f"  {verb.name}({', '.join(passed)})"
    if len(call + " { ...TaskDetail }") <= WIDTH:
        lines.append(call + " { ...TaskDetail }")
    else:
        if len(call + " {") <= WIDTH:
            lines.append(call + " {")
        else:
            lines += [f"  {verb.name}(", *(f"    {p}" for p in passed), "  ) {"]
        lines += ["    ...TaskDetail", "  }"]
    return "\n".join([*lines, "}", ""])


FORM_SELECTION = "id version state"


def form_document(verb: Declared[Any]) -> str:
    """The document a form sends for the verb: every argument a variable (one left out of
    the variables is null), answering the task's id, version and state."""
    arguments = [(a.name, graphql_type(a)) for a in verb.arguments()]
    declared = ["$task_id: ID!", *(f"${n}: {t}" for n, t in arguments), "$expected_version: Int"]
    passed = ["task_id: $task_id", *(f"{n}: ${n}" for n, _ in arguments)]
    passed.append("expected_version: $expected_version")
    return (
        f"mutation TaskVerb_{verb.name}({', '.join(declared)}) "
        f"{{ {verb.name}({', '.join(passed)}) {{ {FORM_SELECTION} }} }}"
    )


def form_documents() -> list[str]:
    """Every declared verb's form document (the server trusts each)."""
    return [form_document(verb) for verb in registry()]


@strawberry.type(description="An argument of a task verb's mutation.")
class VerbArgument:
    name: str
    type: str = strawberry.field(
        description="Its GraphQL type as a document declares it: String, WaitOn!, [VerdictInput!]."
    )
    required: bool
    description: str | None
    options: list[str] | None = strawberry.field(
        description="The values it may take, when it is an enum."
    )


@strawberry.type(description="A field of a task verb's form (the board's).")
class VerbFormField:
    name: str = strawberry.field(
        description="The argument it fills; `a.b`: the field b of the input argument a."
    )
    label: str
    kind: str = strawberry.field(
        description="text (one line), textarea, select (of `options`), verdicts (one per "
        "acceptance criterion: criterion, accepted, note) or notes (one evidence note a line: "
        "{kind: note, summary})."
    )
    required: bool
    options: list[str]
    placeholder: str | None
    none: str | None = strawberry.field(description="A select's empty first choice, if any.")

    @classmethod
    def from_domain(cls, field: FormField) -> VerbFormField:
        return cls(
            name=field.name,
            label=field.label,
            kind=field.kind,
            required=field.required,
            options=list(field.options),
            placeholder=field.placeholder,
            none=field.none,
        )


@strawberry.type(
    description="A task verb as the server declares it: its mutation's arguments, what it is "
    "for, and its form."
)
class TaskVerb:
    name: str
    description: str | None = strawberry.field(description="Its mutation's description.")
    guide: str = strawberry.field(description="What it is for and what it does, for an agent.")
    destructive: bool = strawberry.field(description="Whether it may undo or end work.")
    ends_task: bool = strawberry.field(description="Whether every move it makes ends the task.")
    label: str = strawberry.field(description="Its form's title and button.")
    rank: int = strawberry.field(description="Its form's place among the forms: lower first.")
    arguments: list[VerbArgument] = strawberry.field(
        description="Its arguments besides task_id and expected_version, in their order."
    )
    form: list[VerbFormField]
    document: str = strawberry.field(
        description="A mutation of the verb, every argument a variable, answering the task's "
        "id, version and state; the server always trusts it."
    )

    @classmethod
    def from_domain(cls, verb: Declared[Any]) -> TaskVerb:
        moves = [m for m in table().moves if verb.name in m.verbs]
        return cls(
            name=verb.name,
            description=verb.description,
            guide=verb.guide or verb.description or f"The verb {verb.name}.",
            destructive=verb.destructive,
            ends_task=bool(moves) and all(table().states[m.to_state].terminal for m in moves),
            label=verb.label,
            rank=verb.rank,
            arguments=[
                VerbArgument(
                    name=a.name,
                    type=graphql_type(a),
                    required=a.required,
                    description=a.doc,
                    options=_options(a),
                )
                for a in verb.arguments()
            ],
            form=[VerbFormField.from_domain(f) for f in verb.fields()],
            document=form_document(verb),
        )


def task_verbs() -> list[TaskVerb]:
    return [TaskVerb.from_domain(verb) for verb in registry()]
