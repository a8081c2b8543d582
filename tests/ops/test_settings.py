"""Every setting is declared once (app/settings.py) and read once: no other module of app/
reads the environment, and `prickle serve`'s workers are handed the very settings it read."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from app.settings import DECLARED, HANDED, Settings, from_json, read, to_json

pytestmark = pytest.mark.once  # the source and the settings, not the database

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = ROOT / "app" / "settings.py"
ENVIRONMENT = {"environ", "environb", "getenv", "getenvb", "putenv", "unsetenv"}


def readings(path: Path) -> list[str]:
    """Where a module touches the environment: `os.environ`, `os.getenv`, ... under any
    name `os` is imported as, and `from os import environ`."""
    tree = ast.parse(path.read_text(), str(path))
    names = {"os"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.asname or a.name for a in node.names if a.name == "os"}
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "os":
            found += [(node.lineno, "") for a in node.names if a.name in ENVIRONMENT]
        elif (
            isinstance(node, ast.Attribute)
            and node.attr in ENVIRONMENT
            and isinstance(node.value, ast.Name)
            and node.value.id in names
        ):
            found.append((node.lineno, f": {node.value.id}.{node.attr}"))
    return [f"line {line}{what}" for line, what in sorted(found)]


def test_only_the_settings_module_reads_the_environment() -> None:
    offenders = [
        f"{path.relative_to(ROOT)} {where}"
        for path in sorted((ROOT / "app").rglob("*.py"))
        if path != SETTINGS
        for where in readings(path)
    ]
    assert offenders == [], "read the setting from app.settings.current() instead"
    assert readings(SETTINGS)  # the scan sees a reading where there is one


def test_the_scan_finds_each_way_of_reading(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "import os\nimport os as o\nfrom os import getenv\n"
        "a = os.environ.get('X')\nb = o.getenv('Y')\nc = 'Z' in os.environ\n"
    )
    assert readings(module) == [
        "line 3",
        "line 4: os.environ",
        "line 5: o.getenv",
        "line 6: os.environ",
    ]


def test_every_setting_is_read_from_its_flag_else_its_variable_else_its_default() -> None:
    environ = {d.variable: "" for d in DECLARED}  # empty: the default
    assert read(environ=environ) == Settings()
    settings = read({"port": "9002", "access_log": True}, {"PRICKLE_PORT": "9001"})
    assert (settings.port, settings.access_log) == (9002, True)
    assert settings.sources["port"] == "flag"
    assert read(environ={"PRICKLE_PORT": "9001"}).sources == {"port": "env"}
    assert read(environ={"PRICKLE_WEBHOOK_BACKOFF": "1, 2.5"}).webhook_backoff == (1.0, 2.5)


def test_the_workers_are_handed_the_same_settings() -> None:
    """What `serve` hands its workers (one variable, PRICKLE_SETTINGS) reads back equal,
    sources included, without the environment it came from."""
    settings = read(
        {"rate_limit": "0", "allow_private_agents": True, "database_connections": "8"},
        {
            "PRICKLE_A2A_POLL": "0.1,0.2",
            "PRICKLE_DATABASE_URL": "postgresql+asyncpg://u:p@db/prickle",
            "PRICKLE_FAST_PATHS": "off",
            "OTEL_SERVICE_NAME": "board",
        },
    )
    handed = from_json(to_json(settings))
    assert handed == settings
    assert handed.sources == settings.sources
    assert handed.a2a_poll == (0.1, 0.2) and handed.fast_paths is False
    assert HANDED == "PRICKLE_SETTINGS"


def test_each_setting_has_a_variable_of_its_own_and_help() -> None:
    variables = [d.variable for d in DECLARED]
    assert len(variables) == len(set(variables))
    assert all(d.help for d in DECLARED)
    assert all(v.startswith(("PRICKLE_", "OTEL_")) for v in variables)


def test_the_operations_guide_names_every_setting() -> None:
    guide = (ROOT / "docs" / "operations.md").read_text()
    missing = [d.variable for d in DECLARED if f"`{d.variable}`" not in guide]
    assert missing == [], "list each in docs/operations.md, Settings"
