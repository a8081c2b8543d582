"""`prickle migrate` and `prickle token create`, run as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import main
from app.domain.principals import Principal
from app.service.auth import authenticate
from app.storage.store import Store

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).parent / "prickle"


def prickle(*args: str, script: bool = False) -> subprocess.CompletedProcess[str]:
    command = [str(SCRIPT)] if script else [sys.executable, "-m", "app.cli"]
    return subprocess.run(
        [*command, *args], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )


def last_line(out: str) -> str:
    return out.rstrip("\n").rsplit("\n", 1)[-1]


async def test_migrate_then_token_create_prints_a_token_that_authenticates(
    database_url: str,
) -> None:
    migrated = prickle("migrate", "--database-url", database_url)
    assert migrated.returncode == 0, migrated.stderr
    owner = prickle("token", "create", "--owner", "alice", "--database-url", database_url)
    agent = prickle("token", "create", "--agent", "alice/coder", "--database-url", database_url)
    assert owner.returncode == agent.returncode == 0, owner.stderr + agent.stderr
    owner_token, agent_token = last_line(owner.stdout), last_line(agent.stdout)
    assert owner_token != agent_token
    assert " " not in owner_token and owner_token.startswith("prk_")
    store = Store(database_url)
    try:
        assert await authenticate(store, f"Bearer {owner_token}") == Principal("person", "alice")
        assert await authenticate(store, f"Bearer {agent_token}") == Principal(
            "agent", "alice/coder"
        )
    finally:
        await store.close()


async def test_the_installed_script_creates_a_token_on_an_empty_database(database_url: str) -> None:
    created = prickle(
        "token", "create", "--owner", "bob", "--database-url", database_url, script=SCRIPT.exists()
    )
    assert created.returncode == 0, created.stderr
    store = Store(database_url)
    try:
        principal = await authenticate(store, f"Bearer {last_line(created.stdout)}")
    finally:
        await store.close()
    assert principal == Principal("person", "bob")


@pytest.mark.once
@pytest.mark.parametrize("who", [["--owner", "Alice"], ["--agent", "alice"], ["--agent", "a/b/c"]])
def test_token_create_refuses_a_malformed_handle_or_agent_id(tmp_path: Path, capsys, who) -> None:  # type: ignore[no-untyped-def]
    url = f"sqlite+aiosqlite:///{tmp_path}/cli.db"
    assert main(["token", "create", *who, "--database-url", url]) == 2
    assert "prickle: invalid_input:" in capsys.readouterr().err
    assert not (tmp_path / "cli.db").exists()


@pytest.mark.once
def test_serve_refuses_a_table_that_does_not_load_before_it_starts(tmp_path: Path) -> None:
    broken = json.loads((ROOT / "app/domain/protocol/transitions.json").read_text())
    broken["moves"][0]["rules"][0]["actor"] = "nobody"
    path = tmp_path / "transitions.json"
    path.write_text(json.dumps(broken))
    url = f"sqlite+aiosqlite:///{tmp_path}/serve.db"
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "serve", "--port", "0", "--database-url", url],
        cwd=ROOT,
        env={**os.environ, "PRICKLE_TRANSITIONS": str(path)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        "prickle: the transition table: move requested->routed: handoff names unknown actor "
        "nobody\n"
    )
    assert "owner token" not in done.stdout
    assert not (tmp_path / "serve.db").exists()
