"""The protocol core imports no web framework and no ORM, nor anything else of the server.

Which room of app/ may import which (the API nothing of storage, among others) is
tests/ops/test_layers.py's, from the table in docs/architecture.md; this test loads the domain
for real, to see every library it brings with it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.once  # the same on either backend: not run on PostgreSQL

ROOT = Path(__file__).resolve().parents[2]
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
