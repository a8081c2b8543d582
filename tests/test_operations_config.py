"""Every `prickle serve` flag is also read from PRICKLE_*, and `prickle config` prints what
serve would run with, the database password masked; a served flag from the environment
takes effect."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from server import ROOT


def config(*args: str, **env: str) -> dict[str, str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PRICKLE_")}
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "config", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**environment, **env},
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    settings = {}
    for line in done.stdout.splitlines():
        name, _, value = line.partition(" = ")
        settings[name] = value
    return settings


def test_every_serve_flag_has_its_variable() -> None:
    from app.cli import _parser
    from app.settings import variable

    commands = next(a for a in _parser()._actions if a.dest == "==SUPPRESS==" and a.choices)
    serve = commands.choices["serve"]
    flags = [a for a in serve._actions if a.option_strings and a.dest != "help"]
    assert {variable(a) for a in flags} >= {
        "PRICKLE_DATABASE_URL",
        "PRICKLE_PORT",
        "PRICKLE_WORKERS",
        "PRICKLE_LOG_FORMAT",
        "PRICKLE_METRICS_FROM",
        "PRICKLE_GRACEFUL_TIMEOUT",
        "PRICKLE_ACCESS_LOG",
        "PRICKLE_RATE_LIMIT",
        "PRICKLE_DB_POOL_SIZE",
    }
    printed = config()
    assert {a.dest.replace("_", "-") for a in flags} == set(printed)


def test_config_reads_the_environment_and_masks_secrets() -> None:
    settings = config(
        PRICKLE_DATABASE_URL="postgresql+asyncpg://prickle:hunter2@db.internal/prickle",
        PRICKLE_PORT="9001",
        PRICKLE_ACCESS_LOG="1",
        PRICKLE_METRICS_FROM="10.0.0.0/8",
        PRICKLE_GRACEFUL_TIMEOUT="12",
    )
    assert "hunter2" not in repr(settings)
    assert settings["database-url"].startswith("postgresql+asyncpg://prickle:***@db.internal")
    assert settings["port"] == "9001  (PRICKLE_PORT is set)"
    assert settings["access-log"] == "True  (PRICKLE_ACCESS_LOG is set)"
    assert settings["metrics-from"] == "10.0.0.0/8  (PRICKLE_METRICS_FROM is set)"
    assert settings["graceful-timeout"] == "12  (PRICKLE_GRACEFUL_TIMEOUT is set)"
    assert config("--port", "9002", PRICKLE_PORT="9001")["port"].startswith("9002")


def test_a_flag_from_the_environment_takes_effect(start_server: Any) -> None:
    server = start_server(env={"PRICKLE_METRICS_FROM": "10.0.0.0/8"})
    assert server.client.get(f"{server.base_url}/metrics").status_code == 403


def test_a_bad_value_from_the_environment_is_refused(tmp_path: Any) -> None:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PRICKLE_")}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "app.cli",
            "serve",
            "--database-url",
            f"sqlite+aiosqlite:///{tmp_path}/p.db",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**environment, "PRICKLE_LOG_FORMAT": "xml"},
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "--log-format" in done.stderr


def test_the_pool_size_is_a_setting_and_a_bad_one_is_refused() -> None:
    assert config()["db-pool-size"] == "20"
    assert config(PRICKLE_DB_POOL_SIZE="4")["db-pool-size"] == "4  (PRICKLE_DB_POOL_SIZE is set)"
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PRICKLE_")}
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "config", "--db-pool-size", "0"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=environment,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "--db-pool-size: '0' is not a positive whole number" in done.stderr


def test_a_password_given_as_a_query_parameter_is_masked() -> None:
    url = "postgresql+asyncpg://prickle@db.internal/prickle?password=hunter2&sslpassword=k3y"
    settings = config(PRICKLE_DATABASE_URL=url)
    assert "hunter2" not in repr(settings) and "k3y" not in repr(settings)
    assert "password=***" in settings["database-url"]


def test_config_refuses_what_serve_refuses() -> None:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PRICKLE_")}
    for variables, flag in (
        ({"PRICKLE_LOG_FORMAT": "xml"}, "--log-format"),
        ({"PRICKLE_METRICS_FROM": "not-a-range"}, "--metrics-from"),
        ({"PRICKLE_GRACEFUL_TIMEOUT": "-5"}, "--graceful-timeout"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "app.cli", "config"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env={**environment, **variables},
            timeout=60,
            check=False,
        )
        assert done.returncode == 2, (variables, done.stdout)
        assert flag in done.stderr
