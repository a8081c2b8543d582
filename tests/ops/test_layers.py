"""The layer rule of docs/architecture.md, held: every module of app/ imports only its own room
and the rooms its row allows, and no modules import each other in a circle.

Every import counts: at the top, inside a function, and under `if TYPE_CHECKING:`. An import
names one module: the module named, or for `from package import name` the submodule `name`
when there is one, else the package.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.once  # the source, not the database: not run on PostgreSQL

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app"
ARCHITECTURE = ROOT / "docs/architecture.md"
HEADING = "## The layer rule"
NAME = re.compile(r"`(app(?:\.\w+)*)`")

Graph = dict[str, set[str]]


def rule() -> dict[str, set[str]]:
    """Each room and the rooms it may import, read from the table under HEADING."""
    text = ARCHITECTURE.read_text()
    assert HEADING in text, f"{ARCHITECTURE.name} has no section {HEADING!r}"
    section = text.split(HEADING, 1)[1].split("\n## ", 1)[0]
    rooms: dict[str, set[str]] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 2 or not NAME.fullmatch(cells[0]):
            continue
        rooms[cells[0].strip("`")] = set(NAME.findall(cells[1]))
    return rooms


def modules() -> dict[str, Path]:
    """Every module of app/ by its dotted name (a package by its own name)."""
    found = {}
    for path in sorted(APP.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules of app/ that module `name` imports, at any depth of its code."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    named: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            named.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, package)
            for alias in node.names:
                whole = f"{base}.{alias.name}"
                named.add(whole if whole in known else base)
    return {_nearest(n, known) for n in named if n == "app" or n.startswith("app.")} - {name}


def _absolute(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    base = parts[: len(parts) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def _nearest(name: str, known: set[str]) -> str:
    """The module itself, or the nearest package holding it (`import app.x.y as y` of a
    name that is not a module)."""
    while name not in known and "." in name:
        name = name.rpartition(".")[0]
    return name


def graph() -> Graph:
    found = modules()
    known = set(found)
    return {name: imports(name, path, known) for name, path in found.items()}


def room_of(module: str, rooms: dict[str, set[str]]) -> str | None:
    """The longest room name that is the module or one of its packages."""
    holding = [r for r in rooms if module == r or module.startswith(r + ".")]
    return max(holding, key=len, default=None)


def circles(edges: Graph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, onward = work[-1]
            step = next(onward, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(edges.get(step, ())))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def a_cycle(component: list[str], edges: Graph) -> list[str]:
    """One closed path through the component, from its first module back to it."""
    members = set(component)
    start = component[0]
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for step in sorted(edges[node] & members):
                if step == start:
                    return [*paths[node], start]
                if step not in paths:
                    paths[step] = [*paths[node], step]
                    following.append(step)
        frontier = following
    return component


def test_the_rule_is_a_table_of_every_room() -> None:
    rooms = rule()
    assert {"app.domain", "app.storage", "app.service", "app.api", "app.main"} <= set(rooms)
    unknown = {r for allowed in rooms.values() for r in allowed} - set(rooms)
    assert not unknown, f"rows name rooms that have no row: {sorted(unknown)}"


def test_every_module_has_a_room() -> None:
    rooms = rule()
    homeless = [m for m in modules() if room_of(m, rooms) is None]
    assert not homeless, f"modules no row of {HEADING!r} places: {homeless}"


def test_no_import_runs_against_the_layer_rule() -> None:
    rooms = rule()
    edges = graph()
    assert len(edges) > 100  # every module of app/ was read
    wrong = []
    for module, imported in sorted(edges.items()):
        here = room_of(module, rooms)
        if here is None:
            continue  # test_every_module_has_a_room names it
        for target in sorted(imported):
            there = room_of(target, rooms)
            if there != here and there not in rooms[here]:
                wrong.append(f"{module} imports {target} ({here} may not import {there})")
    assert not wrong, "imports against the layer rule:\n" + "\n".join(wrong)


def test_no_modules_import_each_other_in_a_circle() -> None:
    edges = graph()
    found = circles(edges)
    described = [
        f"a circle of {len(c)} modules: {', '.join(c)}; e.g. {' -> '.join(a_cycle(c, edges))}"
        for c in found
    ]
    assert not found, "import circles:\n" + "\n".join(described)


# Where the app is assembled: the modules that wire the fast rooms in (docs/architecture.md,
# "Fast paths"). Every other module outside a fast room imports none: the fast paths wrap
# the plain path, handed to it from here, and never reach into it.
ASSEMBLY = {"app.main", "app.api.schema"}


def is_fast(module: str) -> bool:
    """Whether the module is in a fast room (a package `fast` of a room: app.storage.fast, ...)."""
    return "fast" in module.split(".")[1:]


def plain_imports_of_fast_rooms(edges: Graph) -> list[str]:
    return [
        f"{module} imports {target}"
        for module, imported in sorted(edges.items())
        if not is_fast(module) and module not in ASSEMBLY
        for target in sorted(imported)
        if is_fast(target)
    ]


def test_no_plain_module_imports_a_fast_room() -> None:
    edges = graph()
    assert {m for m in edges if is_fast(m)} >= {"app.storage.fast", "app.api.fast.compiled"}
    wrong = plain_imports_of_fast_rooms(edges)
    assert not wrong, "plain modules importing a fast room:\n" + "\n".join(wrong)


def test_a_plain_module_importing_a_fast_room_is_named() -> None:
    edges = {
        "app.storage.repositories.tasks": {"app.storage.fast.direct", "app.storage.mapping"},
        "app.storage.fast.paths": {"app.storage.tx"},  # a fast room may import the plain path
        "app.main": {"app.api.fast"},  # the assembly wires them in
    }
    assert plain_imports_of_fast_rooms(edges) == [
        "app.storage.repositories.tasks imports app.storage.fast.direct"
    ]


def test_the_graph_reads_every_kind_of_import(tmp_path: Path) -> None:
    """Relative, in a function, under TYPE_CHECKING, a package's submodule or its name."""
    package = tmp_path / "app" / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("from . import sub\n")
    (package / "sub.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from app.other import Thing\n"
        "def f():\n    from .sibling import g\n"
        "from app import pkg\n"
        "import app.pkg.sibling.name\n"
    )
    (package / "sibling.py").write_text("")
    known = {"app", "app.pkg", "app.pkg.sub", "app.pkg.sibling", "app.other"}
    assert imports("app.pkg", package / "__init__.py", known) == {"app.pkg.sub"}
    assert imports("app.pkg.sub", package / "sub.py", known) == {
        "app.other",
        "app.pkg.sibling",
        "app.pkg",
    }
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}
    assert circles(edges) == [["a", "b", "c"]]
    assert a_cycle(["a", "b", "c"], edges) == ["a", "b", "c", "a"]
