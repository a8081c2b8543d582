"""Write the server's own trusted documents, app/api/documents.json: a manifest (sha256 hex →
document) of every document the project itself sends, which the server always knows, so that
they run under `--trusted-documents-only` (app/api/persisted.py, docs/frontends.md).

- graphql/: each operation document with the fragments it spreads, as the tests send them
  (tests/support/server.py's `document`);
- the Python client: each document its generated layer sends (clients/python/src/
  prickle_client/generated/client.py and _verbs.py, their `gql("...")` strings);
- the board (app/static/board/board.js, graph.js): each of its reads, subscriptions and
  mutations, the `Q_*`, `S_*` and `M_*` constants, their `${...}` filled in from the file's
  other constants.

    python3 scripts/documents.py           # rewrite app/api/documents.json
    python3 scripts/documents.py --check   # exit 1 if it is not what would be written

tests/api/test_persisted_documents.py fails when the file is not fresh.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "app" / "api" / "documents.json"
GRAPHQL = ROOT / "graphql"
PACKAGE = ROOT / "clients" / "python" / "src" / "prickle_client"
CLIENT = [PACKAGE / "generated" / "client.py", PACKAGE / "_verbs.py"]
BOARD = [ROOT / "app" / "static" / "board" / name for name in ("board.js", "graph.js")]
_CONSTANT = re.compile(r"const ([A-Z_]+) = (`[^`]*`|\"[^\"]*\"|\d+);")


def graphql_documents() -> list[str]:
    fragments = _fragments((GRAPHQL / "fragments.graphql").read_text())
    documents = []
    for path in sorted(GRAPHQL.glob("*/*.graphql")):
        text = path.read_text()
        needed: list[str] = []
        pending = _spreads(text)
        while pending:
            name = pending.pop(0)
            if name not in needed:
                needed.append(name)
                pending += _spreads(fragments[name])
        documents.append("\n".join([text, *(fragments[n] for n in needed)]))
    return documents


def _fragments(source: str) -> dict[str, str]:
    from graphql import FragmentDefinitionNode, parse

    found = {}
    for definition in parse(source).definitions:
        assert isinstance(definition, FragmentDefinitionNode) and definition.loc is not None
        found[definition.name.value] = source[definition.loc.start : definition.loc.end]
    return found


def _spreads(text: str) -> list[str]:
    return [n for n in re.findall(r"\.\.\.\s*([_A-Za-z]\w*)", text) if n != "on"]


def client_documents() -> list[str]:
    documents = []
    for node in (n for path in CLIENT for n in ast.walk(ast.parse(path.read_text()))):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "gql"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            documents.append(node.args[0].value)
    return documents


def board_documents() -> list[str]:
    documents = []
    for path in BOARD:
        constants = {}
        for name, literal in _CONSTANT.findall(path.read_text()):
            constants[name] = literal[1:-1] if literal[0] in '`"' else literal
        for name, value in constants.items():
            if re.fullmatch(r"[QSM]_[A-Z_]+", name):
                documents.append(_filled(value, constants))
    return documents


def _filled(text: str, constants: dict[str, str]) -> str:
    while "${" in text:
        text = re.sub(r"\$\{([A-Z_]+)\}", lambda m: constants[m.group(1)], text)
    return text


def manifest() -> dict[str, str]:
    documents = [*graphql_documents(), *client_documents(), *board_documents()]
    return {hashlib.sha256(d.encode()).hexdigest(): d for d in sorted(set(documents))}


def rendered() -> str:
    return json.dumps(manifest(), indent=1, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    text = rendered()
    if "--check" in argv:
        if OUTPUT.read_text() != text:
            print(f"{OUTPUT.relative_to(ROOT)} is stale: python3 scripts/documents.py")
            return 1
        return 0
    OUTPUT.write_text(text)
    print(f"wrote {len(json.loads(text))} documents to {OUTPUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
