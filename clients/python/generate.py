"""Generate prickle_client's generated layer from the server's schema and documents.

    python generate.py            # rewrite src/prickle_client/{generated/,_sync.py,schemas/}
    python generate.py DIRECTORY  # the same files under DIRECTORY (tests/test_generated.py)

- generated/: ariadne-codegen, configured by [tool.ariadne-codegen] in pyproject.toml, from
  ../../schema.graphql and the operation documents in ../../graphql/;
- _sync.py: the blocking `Client`, one method per public method of `AsyncClient`;
- schemas/task.schema.json: the protocol's task object (the MCP tools' input schemas), copied
  from the server's source tree as a file: the client never imports the server.
"""

from __future__ import annotations

import ast
import json
import shutil
import sys
import tempfile
import tomllib
from pathlib import Path
from typing import Any

from ariadne_codegen.main import client as ariadne_client
from graphql import (
    FieldNode,
    GraphQLEnumType,
    InlineFragmentNode,
    NameNode,
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
NOT_WRAPPED = {"events", "aclose"}


def generate(target: Path) -> None:
    config = tomllib.loads((HERE / "pyproject.toml").read_text())["tool"]["ariadne-codegen"]
    for key in ("schema_path", "queries_path"):
        config[key] = str((HERE / config[key]).resolve())
    config["target_package_path"] = str(target)
    with tempfile.TemporaryDirectory() as documents:
        config["queries_path"] = typed_documents(Path(config["queries_path"]), Path(documents))
        ariadne_client({"tool": {"ariadne-codegen": config}})
    (target / "schemas").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(TASK_SCHEMA, target / "schemas" / "task.schema.json")
    verbs = task_verbs(Path(config["schema_path"]).read_text())
    (target / "schemas" / "verbs.json").write_text(json.dumps(verbs, indent=2) + "\n")
    (target / "_sync.py").write_text(sync_client((PACKAGE / "_async.py").read_text()))


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


def sync_client(source: str) -> str:
    """_sync.py: `Client`, each public method of AsyncClient run to completion."""
    module = ast.parse(source)
    cls = next(n for n in module.body if isinstance(n, ast.ClassDef) and n.name == "AsyncClient")
    methods = [
        n
        for n in cls.body
        if isinstance(n, ast.AsyncFunctionDef)
        and not n.name.startswith("_")
        and n.name not in NOT_WRAPPED
    ]
    body = [_method(m) for m in methods]
    used = {n.id for m in methods for n in ast.walk(m.args) if isinstance(n, ast.Name)}
    used |= {
        n.id for m in methods if m.returns for n in ast.walk(m.returns) if isinstance(n, ast.Name)
    }
    imports = _imports(module, used | {"Iterator"})
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


def _imports(module: ast.Module, used: set[str]) -> list[str]:
    lines = []
    for node in module.body:
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            names = [a.name for a in node.names if a.name in used]
            if node.module == "collections.abc" and "Iterator" in used:
                names = sorted({*names, "Iterator"} - {"AsyncIterator"})
            if names:
                dots = "." * node.level
                lines.append(f"from {dots}{node.module} import {', '.join(names)}")
    names = sorted(used & _assigned(module))
    return [*lines, f"from ._async import {', '.join(names)}"]


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
