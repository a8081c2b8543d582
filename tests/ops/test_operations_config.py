"""Every `prickle serve` flag is also read from PRICKLE_*, and `prickle config` prints what
serve would run with, the database password masked; a served flag from the environment
takes effect."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from typing import Any

import pytest
from server import ROOT

from app import cli
from app.settings import DECLARED, forget


def prickle(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`prickle ARGS` with no PRICKLE_* variable but those given."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PRICKLE_")}
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**environment, **env},
        timeout=60,
        check=False,
    )


def in_process(*args: str, **env: str) -> tuple[int, str]:
    """`prickle ARGS` run by the command line's own `main` in this process (every command
    reads its settings first, the same way): its exit code and what it wrote on stderr."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update({k: v for k, v in saved.items() if not k.startswith("PRICKLE_")}, **env)
    stderr = io.StringIO()
    try:
        with redirect_stderr(stderr), redirect_stdout(io.StringIO()):
            code = cli.main(list(args))
    finally:
        os.environ.clear()
        os.environ.update(saved)
        forget()
    return code, stderr.getvalue()


def config(*args: str, **env: str) -> dict[str, str]:
    done = prickle("config", *args, **env)
    assert done.returncode == 0, done.stderr
    settings = {}
    for line in done.stdout.splitlines():
        name, _, value = line.partition(" = ")
        settings[name] = value
    return settings


@pytest.mark.once
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
    without_flags = {d.variable for d in DECLARED if d.flag is None}
    assert {a.dest.replace("_", "-") for a in flags} | without_flags == set(printed)


@pytest.mark.once
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
    assert config("--port", "9002", PRICKLE_PORT="9001")["port"] == "9002  (from --port)"
    assert config("--access-log")["access-log"] == "True  (from --access-log)"


def test_a_flag_from_the_environment_takes_effect(start_server: Any) -> None:
    server = start_server(env={"PRICKLE_METRICS_FROM": "10.0.0.0/8"})
    assert server.client.get(f"{server.base_url}/metrics").status_code == 403


@pytest.mark.once
def test_a_bad_value_from_the_environment_is_refused(tmp_path: Any) -> None:
    done = prickle(
        "serve", "--database-url", f"sqlite+aiosqlite:///{tmp_path}/p.db", PRICKLE_LOG_FORMAT="xml"
    )
    assert done.returncode == 2
    assert "--log-format" in done.stderr


@pytest.mark.once
def test_the_pool_size_is_a_setting_and_a_bad_one_is_refused() -> None:
    assert config()["db-pool-size"] == "20"
    assert config(PRICKLE_DB_POOL_SIZE="4")["db-pool-size"] == "4  (PRICKLE_DB_POOL_SIZE is set)"
    done = prickle("config", "--db-pool-size", "0")
    assert done.returncode == 2
    assert "--db-pool-size: '0' is not a positive whole number" in done.stderr


@pytest.mark.once
def test_a_password_given_as_a_query_parameter_is_masked() -> None:
    url = "postgresql+asyncpg://prickle@db.internal/prickle?password=hunter2&sslpassword=k3y"
    settings = config(PRICKLE_DATABASE_URL=url)
    assert "hunter2" not in repr(settings) and "k3y" not in repr(settings)
    assert "password=***" in settings["database-url"]


@pytest.mark.once
def test_config_refuses_what_serve_refuses() -> None:
    for variables, flag in (
        ({"PRICKLE_LOG_FORMAT": "xml"}, "--log-format"),
        ({"PRICKLE_METRICS_FROM": "not-a-range"}, "--metrics-from"),
        ({"PRICKLE_GRACEFUL_TIMEOUT": "-5"}, "--graceful-timeout"),
        ({"PRICKLE_ACCESS_LOG": "maybe"}, "--access-log"),
        ({"PRICKLE_PORT": "http"}, "--port"),
    ):
        done = prickle("config", **variables)
        assert done.returncode == 2, (variables, done.stdout)
        assert flag in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr


@pytest.mark.once
def test_config_shows_each_tuning_variable_and_whether_it_is_set() -> None:
    settings = config(PRICKLE_WEBHOOK_BACKOFF="0.5, 2", PRICKLE_SUBSCRIBER_QUEUE="50")
    assert settings["PRICKLE_WEBHOOK_BACKOFF"] == "0.5,2  (PRICKLE_WEBHOOK_BACKOFF is set)"
    assert settings["PRICKLE_SUBSCRIBER_QUEUE"] == "50  (PRICKLE_SUBSCRIBER_QUEUE is set)"
    assert settings["PRICKLE_WEBHOOK_TIMEOUT_SECONDS"] == "10"
    assert settings["PRICKLE_PING_SECONDS"] == "15"
    assert settings["PRICKLE_WEBHOOK_BACKOFF"] != config()["PRICKLE_WEBHOOK_BACKOFF"]


BAD_TUNING = [
    ("PRICKLE_WEBHOOK_LEASE_SECONDS", "0", "above 0"),
    ("PRICKLE_WEBHOOK_GIVE_UP_SECONDS", "abc", "not a number of seconds"),
    ("PRICKLE_WEBHOOK_TIMEOUT_SECONDS", "nan", "above 0"),
    ("PRICKLE_SCHEDULER_RECHECK", "inf", "above 0"),
    ("PRICKLE_PING_SECONDS", "-1", "above 0"),
    ("PRICKLE_WEBHOOK_BACKOFF", "1,,2", "comma-separated seconds"),
    ("PRICKLE_WEBHOOK_BACKOFF", "5,0", "comma-separated seconds"),
    ("PRICKLE_SUBSCRIBER_QUEUE", "0", "whole number of at least 1"),
    ("PRICKLE_STREAMS_PER_PRINCIPAL", "2.5", "whole number of at least 1"),
    ("PRICKLE_FAST_PATHS", "maybe", "must be on or off"),
]


@pytest.mark.once
def test_a_bad_tuning_value_stops_config_and_serve_before_the_database(tmp_path: Any) -> None:
    """Each refused with exit 2 and a line naming the variable and its value, by the command
    line's `main` before any command runs; and by a real `prickle serve`, which has not
    created the database file (before, a bad value was a traceback once serving)."""
    database = tmp_path / "p.db"
    serve = ("serve", "--database-url", f"sqlite+aiosqlite:///{database}")
    for variable, value, wanted in BAD_TUNING:
        for command in (("config",), serve):
            code, stderr = in_process(*command, **{variable: value})
            assert code == 2, (variable, value, command, stderr)
            assert f"{variable}={value!r}" in stderr and wanted in stderr, stderr
    for variable, value, wanted in BAD_TUNING[:2]:
        done = prickle(*serve, **{variable: value})
        assert done.returncode == 2, (variable, value, done.stderr)
        assert f"{variable}={value!r}" in done.stderr and wanted in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
    assert not database.exists()


@pytest.mark.once
def test_a_bad_switch_stops_the_schema_export_with_its_line() -> None:
    done = prickle("schema", PRICKLE_FAST_PATHS="maybe")
    assert done.returncode == 2, done.stderr
    assert "prickle: PRICKLE_FAST_PATHS='maybe': must be on or off" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.once
def test_the_cors_origins_are_a_setting_and_a_bad_one_is_refused(tmp_path: Any) -> None:
    assert config()["cors-origins"] == ""
    origins = "https://app.example.com, https://*.example.com"
    shown = config(PRICKLE_CORS_ORIGINS=origins)["cors-origins"]
    assert shown == f"{origins}  (PRICKLE_CORS_ORIGINS is set)"
    serve = ("serve", "--database-url", f"sqlite:///{tmp_path}/p.db")
    for bad in ("app.example.com", "https://app.example.com/path", "https://*"):
        for command in (("config",), serve):
            code, stderr = in_process(*command, "--cors-origins", bad)
            assert code == 2, (command, bad)
            assert f"--cors-origins: {bad!r} is not an origin" in stderr
    done = prickle(*serve, "--cors-origins", "https://*")
    assert done.returncode == 2, done.stderr
    assert "--cors-origins: 'https://*' is not an origin" in done.stderr
