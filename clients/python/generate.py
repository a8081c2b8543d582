"""Generate prickle_client's generated layer from the server's schema and documents.

    python generate.py            # rewrite src/prickle_client/{generated/,_sync.py,schemas/}
    python generate.py DIRECTORY  # the same files under DIRECTORY (tests/test_generated.py)

- generated/: ariadne-codegen, configured by [tool.ariadne-codegen] in pyproject.toml, from
  ../../schema.graphql and the operation documents in ../../graphql/;
- _verbs.py: `TaskVerbs`, AsyncClient's typed method of each task verb of the schema (each
  Mutation field taking `task_id` and returning a Task), its arguments the verb's;
- _sync.py: the blocking `Client`, one method per public method of `AsyncClient` (its own and
  those of `TaskVerbs`);
- schemas/task.schema.json: the protocol's task object (the MCP tools' input schemas), copied
  from the server's source tree as a file: the client never imports the server.

    python generate.py DIRECTORY --schema FILE   # from another schema: only _verbs.py and
                                                 # _sync.py (no ariadne-codegen, no generated/)
"""

from __future__ import annotations

import ast
import shutil
import sys
import tempfile
import tomllib
from pathlib import Path
from typing import Any

from graphql import (
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLEnumType,
    InlineFragmentNode,
    NameNode,
    OperationDefinitionNode,
    SelectionSetNode,
    Visitor,
    build_schema,
    get_named_type,
    is_non_null_type,
    parse,
    print_ast,
    visit,
)

HERE = Path(__file__).resolve().parent
PACKAGE = HERE / "src" / "prickle_client"
TASK_SCHEMA = HERE.parent.parent / "app" / "domain" / "protocol" / "task.schema.json"
GRAPHQL = HERE.parent.parent / "graphql"
NOT_WRAPPED = {"events", "aclose"}


def generate(target: Path) -> None:
    from ariadne_codegen.main import client as ariadne_client

    config = tomllib.loads((HERE / "pyproject.toml").read_text())["tool"]["ariadne-codegen"]
    for key in ("schema_path", "queries_path"):
        config[key] = str((HERE / config[key]).resolve())
    config["target_package_path"] = str(target)
    with tempfile.TemporaryDirectory() as documents:
        config["queries_path"] = typed_documents(Path(config["queries_path"]), Path(documents))
        ariadne_client({"tool": {"ariadne-codegen": config}})
    (target / "schemas").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(TASK_SCHEMA, target / "schemas" / "task.schema.json")
    generate_verbs(target, Path(config["schema_path"]).read_text(), GRAPHQL)


def generate_verbs(target: Path, sdl: str, documents: Path) -> None:
    """_verbs.py from the schema `sdl` and the verbs' documents in `documents` (a folder as
    graphql/: mutations/<verb>.graphql, fragments.graphql), and _sync.py from it and
    _async.py."""
    verbs = verb_methods(task_verbs(sdl), documents)
    (target / "_verbs.py").write_text(verbs)
    (target / "_sync.py").write_text(sync_client((PACKAGE / "_async.py").read_text(), verbs))


def task_verbs(sdl: str) -> dict[str, Any]:
    """The task verbs as the schema declares them (each Mutation field taking `task_id` and
    returning a Task): name, description and arguments, besides `task_id` and
    `expected_version`; and the values of the enums they take. prickle-mcp makes a tool of
    each (src/prickle_client/mcp_server.py)."""
    schema = build_schema(sdl)
    mutation = schema.mutation_type
    assert mutation is not None
    verbs: list[dict[str, Any]] = []
    enums: dict[str, list[str]] = {}
    for name, field in mutation.fields.items():
        if "task_id" not in field.args or str(field.type) != "Task!":
            continue
        arguments = []
        for arg_name, arg in field.args.items():
            if arg_name in ("task_id", "expected_version"):
                continue
            named = get_named_type(arg.type)
            if isinstance(named, GraphQLEnumType):
                enums[named.name] = list(named.values)
            arguments.append(
                {
                    "name": arg_name,
                    "type": str(arg.type),
                    "required": is_non_null_type(arg.type),
                    "description": arg.description,
                }
            )
        verbs.append({"name": name, "description": field.description, "arguments": arguments})
    return {"verbs": verbs, "enums": enums}


SCALARS = {"String": "str", "ID": "str", "Int": "int", "Boolean": "bool", "Float": "float"}


def verb_methods(spec: dict[str, Any], documents: Path) -> str:
    """_verbs.py: `TaskVerbs`, a typed method of each verb of `spec` (`task_verbs`), sending
    its document (`verb_document`)."""
    enums = set(spec["enums"])
    used: set[str] = set()
    methods, texts = [], []
    for verb in spec["verbs"]:
        name = verb["name"]
        params, passed = ["self", "task_id: str"], ['"task_id": task_id']
        for argument in verb["arguments"]:
            python, value, names = _argument(argument, enums)
            used |= names
            optional = "" if argument["required"] else " | None = None"
            params.append(f"{argument['name']}: {python}{optional}")
            passed.append(f'"{argument["name"]}": {value}')
        params += ["*", "expected_version: int | None = None"]
        passed.append('"expected_version": expected_version')
        lines = ["", f"    async def {name}(", *(f"        {p}," for p in params)]
        lines.append("    ) -> Task:")
        if verb["description"]:
            lines += _docstring(verb["description"])
        lines += ["        variables = {", *(f"            {p}," for p in passed), "        }"]
        operation = _operation_name(documents, name)
        lines.append(f"        send = partial(self._send, {name.upper()}, {operation!r}, {name!r})")
        lines.append("        call = partial(send, variables)")
        lines.append(f"        return await self._verb(task_id, {name!r}, call)")
        methods.append("\n".join(lines))
        text = verb_document(documents, name).replace("\\", "\\\\").replace('"""', '\\"""')
        texts += ["", f'{name.upper()} = gql("""', text, '""")']
    imports = ["from ._base import " + ", ".join(sorted({"Task", "VerbCalls"} | _helpers(used)))]
    if used & enums:
        imports.append(f"from .generated.enums import {', '.join(sorted(used & enums))}")
    if used - enums - {"Shape"}:
        inputs = ", ".join(sorted(used - enums - {"Shape"}))
        imports.append(f"from .generated.input_types import {inputs}")
    return "\n".join(
        [
            '"""Generated by generate.py from schema.graphql and graphql/: do not edit.',
            "",
            "`TaskVerbs`: each task verb of the server's schema as a typed method, its",
            "arguments the verb's (an input given as its model or a dict of its shape), sending",
            "the verb's document of graphql/mutations/.",
            '"""',
            "",
            "from __future__ import annotations",
            "",
            "from functools import partial",
            "",
            *imports,
            "",
            "",
            "def gql(document: str) -> str:",
            "    return document",
            *texts,
            "",
            "",
            "class TaskVerbs(VerbCalls):",
            '    """The task verbs (AsyncClient\'s): each returns the task as the server left',
            '    it."""',
            *methods,
            "",
        ]
    )


def verb_document(documents: Path, verb: str) -> str:
    """The verb's document as the client sends it: mutations/<verb>.graphql with the
    fragments it spreads, `__typename` in each selection of a union (`_TypenameAdder`)."""
    fragments = {
        d.name.value: d
        for d in parse((documents / "fragments.graphql").read_text()).definitions
        if isinstance(d, FragmentDefinitionNode)
    }
    operation = parse((documents / "mutations" / f"{verb}.graphql").read_text())
    needed: list[str] = []
    pending = _spread(operation)
    while pending:
        name = pending.pop(0)
        if name not in needed:
            needed.append(name)
            pending += _spread(fragments[name])
    parts = [operation, *(fragments[n] for n in needed)]
    return "\n\n".join(print_ast(visit(part, _TypenameAdder())) for part in parts)


def _operation_name(documents: Path, verb: str) -> str:
    (operation,) = parse((documents / "mutations" / f"{verb}.graphql").read_text()).definitions
    assert isinstance(operation, OperationDefinitionNode) and operation.name is not None
    return operation.name.value


def _spread(node: Any) -> list[str]:
    found: list[str] = []

    class Spreads(Visitor):
        def enter_fragment_spread(self, spread: FragmentSpreadNode, *_: Any) -> None:
            found.append(spread.name.value)

    visit(node, Spreads())
    return found


def _argument(argument: dict[str, Any], enums: set[str]) -> tuple[str, str, set[str]]:
    """An argument's annotation, the value passed on, and the names it uses."""
    graphql_type, name = argument["type"], argument["name"]
    many = graphql_type.startswith("[")
    named = graphql_type.strip("[]!")
    if named in SCALARS:
        return (f"list[{SCALARS[named]}]" if many else SCALARS[named]), name, set()
    if named in enums:
        python, value = f"{named} | str", f"_enum({named}, {name})"
    elif many:
        python, value = f"list[{named} | Shape]", f"[_shape({named}, v) for v in {name}]"
    else:
        python, value = f"{named} | Shape", f"_shape({named}, {name})"
    if many and named in enums:
        python, value = f"list[{python}]", f"[_enum({named}, v) for v in {name}]"
    if not argument["required"]:
        value = f"None if {name} is None else {value}"
    return python, value, {named, "Shape"} if "Shape" in python else {named}


def _helpers(used: set[str]) -> set[str]:
    return {"Shape", "_enum", "_shape"} if used else set()


def typed_documents(source: Path, target: Path) -> str:
    """The documents with `__typename` in each selection of a union or interface.

    ariadne-codegen adds `__typename` to the selections of operations but not to those
    inside fragment definitions (fragments.graphql's ActorRefFields, the lineage's cause and
    context), and its models then cannot tell the members of a union apart."""
    for path in source.rglob("*.graphql"):
        document = visit(parse(path.read_text()), _TypenameAdder())
        written = target / path.relative_to(source)
        written.parent.mkdir(parents=True, exist_ok=True)
        written.write_text(print_ast(document) + "\n")
    return str(target)


class _TypenameAdder(Visitor):
    def enter_selection_set(self, node: SelectionSetNode, *_: Any) -> SelectionSetNode | None:
        selections = node.selections
        names = {s.name.value for s in selections if isinstance(s, FieldNode)}
        if "__typename" in names or not any(isinstance(s, InlineFragmentNode) for s in selections):
            return None
        typename = FieldNode(name=NameNode(value="__typename"), directives=(), arguments=())
        return SelectionSetNode(selections=(typename, *selections))


def sync_client(source: str, verbs: str) -> str:
    """_sync.py: `Client`, each public method of AsyncClient (its own, then those of
    TaskVerbs it does not write itself) run to completion."""
    module, verbs_module = ast.parse(source), ast.parse(verbs)
    own = _public(module, "AsyncClient")
    written = {m.name for m in own}
    methods = [*own, *(m for m in _public(verbs_module, "TaskVerbs") if m.name not in written)]
    body = [_method(m) for m in methods]
    used = {n.id for m in methods for n in ast.walk(m.args) if isinstance(n, ast.Name)}
    used |= {
        n.id for m in methods if m.returns for n in ast.walk(m.returns) if isinstance(n, ast.Name)
    }
    imports = _imports(module, used | {"Iterator"}, verbs_module)
    return "\n".join(
        [
            '"""Generated by generate.py from _async.py: do not edit.',
            "",
            "`Client`: the blocking twin of `AsyncClient`, method for method.",
            '"""',
            "",
            "from __future__ import annotations",
            "",
            *imports,
            "from ._sync_base import SyncBase",
            "",
            "",
            "class Client(SyncBase):",
            '    """A blocking client of one server (`url`: its /graphql endpoint), as the',
            '    principal of `token`. `events` and `event_batches` block (`SyncBase`)."""',
            *body,
        ]
    )


def _public(module: ast.Module, name: str) -> list[ast.AsyncFunctionDef]:
    cls = next(n for n in module.body if isinstance(n, ast.ClassDef) and n.name == name)
    return [
        n
        for n in cls.body
        if isinstance(n, ast.AsyncFunctionDef)
        and not n.name.startswith("_")
        and n.name not in NOT_WRAPPED
    ]


def _imports(module: ast.Module, used: set[str], verbs: ast.Module) -> list[str]:
    """The imports of the names `used`: as _async.py imports them, else as _verbs.py does."""
    groups: dict[tuple[int, str], list[str]] = {}
    seen: set[str] = set()
    for node in [*module.body, *verbs.body]:
        if isinstance(node, ast.ImportFrom) and node.module not in (None, "__future__"):
            names = [a.name for a in node.names if a.name in used and a.name not in seen]
            if node.module == "collections.abc" and "Iterator" in used - seen:
                names = sorted({*names, "Iterator"} - {"AsyncIterator"})
            seen |= set(names)
            if names:
                groups.setdefault((node.level, node.module or ""), []).extend(names)
    lines = [f"from {'.' * lv}{name} import {', '.join(n)}" for (lv, name), n in groups.items()]
    names = sorted(used & _assigned(module) - seen)
    return [*lines, f"from ._async import {', '.join(names)}"] if names else lines


def _assigned(module: ast.Module) -> set[str]:
    return {
        t.id
        for n in module.body
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Name)
    }


def _method(method: ast.AsyncFunctionDef) -> str:
    args = method.args
    is_iterator = any(isinstance(n, ast.Yield) for n in ast.walk(method))
    params = ["self"]
    params += [_param(a, d) for a, d in _with_defaults(args.args[1:], args.defaults)]
    if args.kwonlyargs:
        params.append("*")
        params += [_param(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)]
    passed = [a.arg for a in args.args[1:]] + [f"{a.arg}={a.arg}" for a in args.kwonlyargs]
    returns = ast.unparse(method.returns) if method.returns else "None"
    call = f"self._client.{method.name}({', '.join(passed)})"
    if is_iterator:
        returns = returns.replace("AsyncIterator", "Iterator")
        result = f"return self._iterate({call})"
    else:
        result = f"return self._run({call})"
    lines = [
        "",
        f"    def {method.name}(",
        *(f"        {p}," for p in params),
        f"    ) -> {returns}:",
    ]
    doc = ast.get_docstring(method)
    if doc:
        lines += _docstring(doc)
    return "\n".join([*lines, f"        {result}"])


def _with_defaults(
    positional: list[ast.arg], defaults: list[ast.expr]
) -> list[tuple[ast.arg, ast.expr | None]]:
    padded: list[ast.expr | None] = [None] * (len(positional) - len(defaults))
    return list(zip(positional, [*padded, *defaults], strict=True))


def _param(arg: ast.arg, default: ast.expr | None) -> str:
    text = f"{arg.arg}: {ast.unparse(arg.annotation)}" if arg.annotation else arg.arg
    return text if default is None else f"{text} = {ast.unparse(default)}"


def _docstring(doc: str) -> list[str]:
    lines = doc.splitlines()
    if len(lines) == 1:
        return [f'        """{lines[0]}"""']
    return [
        f'        """{lines[0]}',
        *(f"        {line}".rstrip() for line in lines[1:]),
        '        """',
    ]


if __name__ == "__main__":
    generate(Path(sys.argv[1]) if len(sys.argv) > 1 else PACKAGE)
