"""The protocol core imports no web framework and no ORM; the API reads through the service."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.once  # the same on either backend: not run on PostgreSQL

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = (
    "starlette",
    "strawberry",
    "sqlmodel",
    "sqlalchemy",
    "uvicorn",
    "alembic",
    "asyncpg",
    "aiosqlite",
)

PROBE = """
import importlib, json, pkgutil, sys
import app.domain
names = ["app.domain"] + [m.name for m in pkgutil.walk_packages(app.domain.__path__, "app.domain.")]
for name in names:
    importlib.import_module(name)
print(json.dumps({"domain": names, "loaded": sorted(sys.modules)}))
"""


def test_importing_every_domain_module_loads_no_web_framework_or_orm() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    probe = json.loads(out.stdout)
    assert len(probe["domain"]) > 10  # every module of app/domain was imported
    loaded = {name.split(".")[0] for name in probe["loaded"]}
    assert not loaded & set(FORBIDDEN), sorted(loaded & set(FORBIDDEN))
    outside = {
        n for n in probe["loaded"] if n.startswith("app.") and not n.startswith("app.domain")
    }
    assert not outside, sorted(outside)


def _imported(path: Path) -> set[str]:
    """Every module a file names in an import statement, at any depth of its code."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_the_api_and_the_web_app_import_nothing_from_storage() -> None:
    files = [*sorted((ROOT / "app/api").glob("*.py")), ROOT / "app/main.py"]
    assert len(files) > 10
    for path in files:
        storage = {n for n in _imported(path) if n == "app.storage" or n.startswith("app.storage.")}
        assert not storage, (path.relative_to(ROOT), sorted(storage))
