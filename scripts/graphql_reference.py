"""The GraphQL reference page, generated from schema.graphql: the root fields, then every type
by kind, each field with its arguments, its type (linked) and its description.

`python scripts/graphql_reference.py [schema.graphql]` prints it; the documentation site
builds it as `graphql-reference.md` (scripts/mkdocs_hooks.py), so it is never stale.
"""

from __future__ import annotations

import sys
from pathlib import Path

from graphql import (
    GraphQLArgument,
    GraphQLEnumType,
    GraphQLField,
    GraphQLInputField,
    GraphQLInputObjectType,
    GraphQLInterfaceType,
    GraphQLNamedType,
    GraphQLObjectType,
    GraphQLScalarType,
    GraphQLUnionType,
    build_schema,
    get_named_type,
)

SCHEMA = Path(__file__).resolve().parent.parent / "schema.graphql"
ROOTS = ("Query", "Mutation", "Subscription")
KINDS: tuple[tuple[str, type], ...] = (
    ("Objects", GraphQLObjectType),
    ("Interfaces", GraphQLInterfaceType),
    ("Unions", GraphQLUnionType),
    ("Inputs", GraphQLInputObjectType),
    ("Enums", GraphQLEnumType),
    ("Scalars", GraphQLScalarType),
)


def markdown(sdl: str) -> str:
    schema = build_schema(sdl)
    types = {n: t for n, t in schema.type_map.items() if not n.startswith("__")}
    lines = [
        "# GraphQL reference",
        "",
        "Generated from `schema.graphql` (`prickle schema`) when the site is built; the",
        "endpoint and its rules are in [The API](api.md).",
        "",
    ]
    for root in ROOTS:
        if root in types:
            lines += _root(types.pop(root))
    for title, kind in KINDS:
        named = [t for _, t in sorted(types.items()) if isinstance(t, kind)]
        if named:
            lines += [f"## {title}", ""]
            for t in named:
                lines += _type(t)
    return "\n".join(lines).rstrip("\n") + "\n"


def _anchor(name: str) -> str:
    return name.lower()


def _link(type_: object) -> str:
    """`[Task!]!` with Task linked to its section."""
    named = get_named_type(type_)  # type: ignore[arg-type]
    shown = str(type_)
    if named.name in ("String", "Int", "Float", "Boolean", "ID"):
        return f"`{shown}`"
    before, _, after = shown.partition(named.name)
    return f"`{before}`[`{named.name}`](#{_anchor(named.name)})`{after}`".replace("``", "")


def _text(description: str | None) -> str:
    return " ".join((description or "").split())


def _arguments(args: dict[str, GraphQLArgument]) -> str:
    """The arguments, for the description's cell."""
    shown = [f"`{n}`: {_link(a.type)}" for n, a in args.items()]
    return ("<br>arguments: " + ", ".join(shown)) if shown else ""


def _root(t: GraphQLNamedType) -> list[str]:
    assert isinstance(t, GraphQLObjectType)
    lines = [f"## {t.name}", "", "| field | answers | what |", "|---|---|---|"]
    for name, field in t.fields.items():
        lines.append(
            f"| `{name}` | {_link(field.type)} | "
            f"{_escaped(_text(field.description))}{_arguments(field.args)} |"
        )
    return [*lines, ""]


def _escaped(text: str) -> str:
    return text.replace("|", "\\|")


def _type(t: GraphQLNamedType) -> list[str]:
    lines = [f"### {t.name}", ""]
    if t.description:
        lines += [_text(t.description), ""]
    if isinstance(t, GraphQLObjectType | GraphQLInterfaceType | GraphQLInputObjectType):
        lines += ["| field | type | what |", "|---|---|---|"]
        fields: dict[str, GraphQLField] | dict[str, GraphQLInputField] = t.fields
        for name, field in fields.items():
            args = _arguments(field.args) if isinstance(field, GraphQLField) else ""
            lines.append(
                f"| `{name}` | {_link(field.type)} | {_escaped(_text(field.description))}{args} |"
            )
    elif isinstance(t, GraphQLUnionType):
        lines.append("One of " + ", ".join(_link(m) for m in t.types) + ".")
    elif isinstance(t, GraphQLEnumType):
        lines += [
            f"- `{name}`" + (f": {_text(value.description)}" if value.description else "")
            for name, value in t.values.items()
        ]
    return [*lines, ""]


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else SCHEMA
    sys.stdout.write(markdown(path.read_text()))


if __name__ == "__main__":
    main()
