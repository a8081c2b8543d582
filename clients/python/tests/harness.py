"""A real `prickle serve` for the client's tests, run with the server's own interpreter.

The client's environment does not hold the server: PRICKLE_SERVER_PYTHON (default: the
project's .venv/bin/python) runs `python -m app.cli serve` from the project root.
PRICKLE_TEST_BACKEND=sqlite|postgres picks the database (PostgreSQL: a fresh database on
PRICKLE_TEST_PG, dropped after).
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import httpx

ROOT = Path(__file__).resolve().parents[3]
PYTHON = os.environ.get("PRICKLE_SERVER_PYTHON", str(ROOT / ".venv" / "bin" / "python"))
BACKEND = os.environ.get("PRICKLE_TEST_BACKEND", "sqlite")
PG_ADMIN = os.environ.get("PRICKLE_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def prickle(*args: str) -> str:
    done = subprocess.run(
        [PYTHON, "-m", "app.cli", *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@dataclass
class Server:
    database_url: str
    logs: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    owner_token: str = ""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/graphql"

    def start(self, *args: str) -> None:
        """Start (or start again, on the same port and database) and wait for /healthz."""
        command = [PYTHON, "-m", "app.cli", "serve", "--port", str(self.port)]
        command += ["--database-url", self.database_url, *args]
        self.logs.mkdir(parents=True, exist_ok=True)
        with open(self.logs / "stdout", "ab") as out, open(self.logs / "stderr", "ab") as err:
            self.process = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=err)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert self.process.poll() is None, (self.logs / "stderr").read_text()
            try:
                if httpx.get(self.url.replace("/graphql", "/healthz"), timeout=2).is_success:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        found = re.search(
            r"^owner token for \S+:\n(\S+)$", (self.logs / "stdout").read_text(), re.M
        )
        if found and not self.owner_token:
            self.owner_token = found.group(1)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)

    def token(self, owner: str) -> str:
        """A person's token (created if missing), from `prickle token create`."""
        out = prickle("token", "create", "--owner", owner, "--database-url", self.database_url)
        return out.rstrip("\n").rsplit("\n", 1)[-1]

    def data(self, query: str, variables: dict[str, Any], token: str) -> dict[str, Any]:
        body = {"query": query, "variables": variables}
        headers = {"Authorization": f"Bearer {token}"}
        answer = httpx.post(self.url, json=body, headers=headers, timeout=30).json()
        assert not answer.get("errors"), answer
        return dict(answer["data"])

    def register(
        self, owner_token: str, name: str, capabilities: list[dict[str, str]] | None = None
    ) -> str:
        query = (
            "mutation($n: String!, $c: [CapabilityInput!]) "
            "{ register_agent(name: $n, capabilities: $c) { token } }"
        )
        variables = {"n": name, "c": capabilities}
        return str(self.data(query, variables, owner_token)["register_agent"]["token"])

    def review_results(self, owner_token: str, project: str) -> None:
        """The owner's result rule: results in `project` wait for its approval."""
        query = "mutation($i: ResultRuleInput!) { set_result_rule(input: $i) { id } }"
        self.data(query, {"i": {"policy": "require_approval", "project": project}}, owner_token)

    def allow(self, owner_token: str, requester_owner: str) -> None:
        """The owner's gate lets `requester_owner`'s agents hand its agents tasks."""
        query = "mutation($i: GateRuleInput!) { set_gate_rule(input: $i) { id } }"
        rule = {"effect": "allow", "requester_owner": requester_owner}
        self.data(query, {"i": rule}, owner_token)


@contextmanager
def database(directory: Path) -> Iterator[str]:
    if BACKEND != "postgres":
        yield f"sqlite+aiosqlite:///{directory}/prickle.db"
        return
    name = f"prickle_c_{uuid.uuid4().hex[:12]}"
    asyncio.run(_admin(f'CREATE DATABASE "{name}"'))
    try:
        yield f"{PG_ADMIN.rsplit('/', 1)[0]}/{name}".replace(
            "postgresql://", "postgresql+asyncpg://", 1
        )
    finally:
        asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


async def _admin(statement: str) -> None:
    admin = await asyncpg.connect(PG_ADMIN, timeout=5)
    try:
        await admin.execute(statement)
    finally:
        await admin.close()


@contextmanager
def running(directory: Path, *args: str) -> Iterator[Server]:
    with database(directory) as url:
        server = Server(url, directory / "logs")
        server.start(*args)
        try:
            yield server
        finally:
            server.stop()
