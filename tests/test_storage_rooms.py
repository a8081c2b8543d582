"""The storage's rooms: the repositories know their transaction only as a protocol (no import
of tx.py or store.py), and SQLAlchemy's private names are touched in app/compat alone."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from app.compat import sqlalchemy as compat

pytestmark = pytest.mark.once  # the source, not the database: not run on PostgreSQL

APP = Path(__file__).resolve().parent.parent / "app"


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


def test_sqlalchemys_private_names_are_used_in_the_compat_module_alone() -> None:
    private = {name for _, _, name in compat.REQUIRED}
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
