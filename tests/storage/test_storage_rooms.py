"""The storage's rooms: the repositories know their transaction only as a protocol (no import
of tx.py or store.py), the plain path imports nothing of the fast paths (they are installed
from outside, app/storage/fast), and SQLAlchemy's private names are touched in app/compat
alone."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from app.compat import sqlalchemy as compat

pytestmark = pytest.mark.once  # the source, not the database: not run on PostgreSQL

APP = Path(__file__).resolve().parents[2] / "app"


def _tree(path: Path) -> ast.AST:
    return ast.parse(path.read_text(), str(path))


def test_no_repository_imports_the_transaction_or_the_store() -> None:
    found = []
    for path in sorted((APP / "storage" / "repositories").glob("*.py")):
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.ImportFrom) and node.module in (
                "app.storage.tx",
                "app.storage.store",
            ):
                found.append(f"{path.name}: {node.module}")
    assert not found


def fast_imports(path: Path) -> list[str]:
    """The imports of app.storage.fast (or a module of it) in the file, at any depth."""
    found = []
    for node in ast.walk(_tree(path)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        found += [n for n in names if n == "app.storage.fast" or n.startswith("app.storage.fast.")]
    return found


def test_the_plain_storage_imports_nothing_of_the_fast_paths() -> None:
    storage = APP / "storage"
    plain = [p for p in sorted(storage.rglob("*.py")) if (storage / "fast") not in p.parents]
    assert APP / "storage" / "repositories" / "tasks.py" in plain
    found = [f"{p.relative_to(APP)}: {name}" for p in plain for name in fast_imports(p)]
    assert not found


def test_an_import_of_the_fast_paths_is_found(tmp_path: Path) -> None:
    module = tmp_path / "repository.py"
    module.write_text(
        "from app.storage.fast.direct import direct\n"
        "def later():\n    from app.storage import fast\n    import app.storage.fast.paths\n"
    )
    assert sorted(set(fast_imports(module))) == [
        "app.storage.fast",
        "app.storage.fast.direct",
        "app.storage.fast.direct.direct",
        "app.storage.fast.paths",
    ]


def test_sqlalchemys_private_names_are_used_in_the_compat_module_alone() -> None:
    # the underscored ones: the asyncpg adapter's `isolation_level` and `readonly` are named
    # as a DB-API connection's own attributes (sqlite3's, set where the engine is tuned)
    private = {name for _, _, name in compat.REQUIRED if name.startswith("_")}
    found = []
    for path in sorted(APP.rglob("*.py")):
        if path.parent == APP / "compat":
            continue
        for node in ast.walk(_tree(path)):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in private
                and not (isinstance(node.value, ast.Name) and node.value.id == "self")
            ):
                found.append(f"{path.relative_to(APP)}:{node.lineno}: {node.attr}")
    assert not found
