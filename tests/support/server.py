"""`prickle serve` as a subprocess on a free 127.0.0.1 port, and a small client for it.

The fixtures at the end of conftest.py use this: `api_server` (one server per test module,
on a database of its own; for tests that only add their own tasks), and `start_server`
(a factory for tests that need a server of their own, e.g. on an empty database).

    def test_me(api_server):
        assert api_server.data("{ me { id } }")["me"]["id"] == "admin"

`Server.token(owner=...)` makes a token on the same database as `prickle token create` does;
`Server.register(owner_token, name)` registers an agent through the API and returns its
token; `Server.run("mutations/accept_task", {...}, token)` executes a document of
graphql/ (with the fragments it spreads).
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from graphql import FragmentDefinitionNode, parse
from sqlalchemy.engine import make_url

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = ROOT / "graphql"
START_TIMEOUT = 60.0
OWNER = object()  # "use the owner token printed at start"

# The run's backend (conftest.py's `database_url` follows it too): PRICKLE_TEST_BACKEND is
# sqlite (default) or postgres; PRICKLE_TEST_PG names the server whose admin connection
# creates and drops the tests' databases.
BACKEND = os.environ.get("PRICKLE_TEST_BACKEND", "sqlite")
# The old name of `pytest.mark.once` (conftest.py): a test whose subject does not depend on
# the backend runs in the SQLite pass only.
ONE_PASS = pytest.mark.once
PG_ADMIN = os.environ.get("PRICKLE_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")

postgres_only = pytest.mark.skipif(
    BACKEND != "postgres",
    reason="PostgreSQL-only; runs in the PostgreSQL pass (PRICKLE_TEST_BACKEND=postgres)",
)


class ServerFailed(RuntimeError):
    """The server process exited or never answered; the message holds its output."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def prickle(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@dataclass
class Server:
    base_url: str
    database_url: str
    process: subprocess.Popen[bytes]
    logs: Path
    owner_token: str | None = None
    executed: set[str] = field(default_factory=set)
    client: httpx.Client = field(default_factory=lambda: httpx.Client(timeout=30))

    @property
    def graphql_url(self) -> str:
        return f"{self.base_url}/graphql"

    @property
    def ws_url(self) -> str:
        return self.graphql_url.replace("http://", "ws://", 1)

    def headers(self, token: Any = OWNER) -> dict[str, str]:
        token = self.owner_token if token is OWNER else token
        return {"Authorization": f"Bearer {token}"} if token else {}

    def post(self, query: str, variables: dict | None = None, token: Any = OWNER) -> dict[str, Any]:
        """The whole response body of a GraphQL POST."""
        body = {"query": query, "variables": variables or {}}
        response = self.client.post(self.graphql_url, json=body, headers=self.headers(token))
        assert response.status_code in (200, 401), (response.status_code, response.text)
        return response.json()

    def data(self, query: str, variables: dict | None = None, token: Any = OWNER) -> dict[str, Any]:
        """`data` of a request that must succeed."""
        body = self.post(query, variables, token)
        assert not body.get("errors"), body["errors"]
        return body["data"]

    def error(
        self, query: str, variables: dict | None = None, token: Any = OWNER
    ) -> dict[str, Any]:
        """The single error of a request that must fail."""
        body = self.post(query, variables, token)
        assert body.get("errors"), body
        assert len(body["errors"]) == 1, body["errors"]
        return body["errors"][0]

    def run(self, name: str, variables: dict | None = None, token: Any = OWNER) -> dict[str, Any]:
        """Execute graphql/<name>.graphql; the response body."""
        self.executed.add(name)
        return self.post(document(name), variables, token)

    def run_data(
        self, name: str, variables: dict | None = None, token: Any = OWNER
    ) -> dict[str, Any]:
        body = self.run(name, variables, token)
        assert not body.get("errors"), body["errors"]
        return body["data"]

    def token(self, owner: str | None = None, agent: str | None = None) -> str:
        """A new token on this server's database, as `prickle token create` makes it."""
        from app.domain.principals import agent as an_agent
        from app.domain.principals import person

        return provisioned(self.database_url, person(owner) if owner else an_agent(agent or ""))[0]

    def register(self, owner_token: str, name: str, capabilities: list[dict] | None = None) -> str:
        """Register <owner>/<name> through the API; its token."""
        query = (
            "mutation($n: String!, $c: [CapabilityInput!]) "
            "{ register_agent(name: $n, capabilities: $c) { token } }"
        )
        return self.data(query, {"n": name, "c": capabilities}, owner_token)["register_agent"][
            "token"
        ]

    def output(self) -> str:
        return "".join((self.logs / n).read_text(errors="replace") for n in ("stdout", "stderr"))

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        self.client.close()
        if self.alive():
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)


def start(
    database_url: str,
    logs: Path,
    *args: str,
    env: dict[str, str] | None = None,
    root: Path = ROOT,
) -> Server:
    """Start `prickle serve` and wait until /healthz answers; `env` adds to the environment;
    `root`: the source tree it serves from (another checkout, to compare two)."""
    logs.mkdir(parents=True, exist_ok=True)
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "app.cli",
        "serve",
        "--port",
        str(port),
        "--database-url",
        database_url,
        *args,
    ]
    if THROUGH_PGBOUNCER and not database_url.startswith("sqlite"):
        # the same database through a private PgBouncer in transaction mode
        command[7:8] = [_pgbouncer_url(database_url), "--database-pooled"]
    with open(logs / "stdout", "wb") as out, open(logs / "stderr", "wb") as err:
        environment = {**os.environ, **(env or {})}
        process = subprocess.Popen(command, cwd=root, stdout=out, stderr=err, env=environment)
    server = Server(f"http://127.0.0.1:{port}", database_url, process, logs)
    try:
        _wait_until_healthy(server)
    except BaseException:
        server.stop()
        raise
    server.owner_token = owner_token_in((logs / "stdout").read_text())
    return server


# PRICKLE_TEST_PGBOUNCER=1 (by hand, with PRICKLE_TEST_BACKEND=postgres): every server the
# tests start serves through one private PgBouncer in transaction mode (tests/support/pgbouncer.py),
# with --database-pooled; the tests' own connections still go straight to PostgreSQL.
THROUGH_PGBOUNCER = os.environ.get("PRICKLE_TEST_PGBOUNCER", "") == "1"
_bouncers: list[Any] = []


def _pgbouncer_url(database_url: str) -> str:
    if not _bouncers:
        import atexit
        from contextlib import ExitStack

        from pgbouncer import private_pgbouncer

        stack = ExitStack()
        pg = make_url(database_url)
        _bouncers.append(
            stack.enter_context(private_pgbouncer(pg.port or 5432, pg_host=pg.host or "127.0.0.1"))
        )
        atexit.register(stack.close)
    return str(_bouncers[0].url_of(database_url))


def _wait_until_healthy(server: Server) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if not server.alive():
            raise ServerFailed(
                f"prickle serve exited with {server.process.returncode}:\n{server.output()}"
            )
        try:
            if server.client.get(f"{server.base_url}/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise ServerFailed(f"prickle serve did not answer within {START_TIMEOUT}s:\n{server.output()}")


def owner_token_in(stdout: str) -> str | None:
    """The token printed after `owner token for <handle>:`, alone on its own line."""
    found = re.search(r"^owner token for [a-z0-9-]+:\n(\S+)$", stdout, re.MULTILINE)
    return found.group(1) if found else None


# databases: the admin connection, one per test (conftest.py), one per module's server


async def pg_admin() -> asyncpg.Connection:
    """The admin connection to PRICKLE_TEST_PG; the test skips when it does not answer."""
    try:
        return await asyncpg.connect(PG_ADMIN, timeout=5)
    except (OSError, asyncpg.PostgresError) as error:
        pytest.skip(f"PostgreSQL is not reachable at {PG_ADMIN}: {error}")


async def pg_admin_execute(statement: str) -> None:
    admin = await pg_admin()
    try:
        await admin.execute(statement)
    finally:
        await admin.close()


def pg_url(name: str) -> str:
    """The server's URL of database `name` on PRICKLE_TEST_PG."""
    base = PG_ADMIN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+asyncpg://", 1)
    return f"{base}/{name}"


def new_database_name(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


async def fresh_pg_database() -> AsyncIterator[str]:
    """A new empty database for as long as the iteration lasts (then dropped)."""
    admin = await pg_admin()
    name = new_database_name("prickle_t")
    await admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield pg_url(name)
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


async def connect(url: str, timeout: float = 60) -> asyncpg.Connection:
    """A plain asyncpg connection to the database of a server URL (postgresql+asyncpg://)."""
    plain = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    return await asyncpg.connect(plain, timeout=timeout)


@contextmanager
def module_database(directory: Path) -> Iterator[str]:
    """A migrated database on the run's backend, with nothing in it, for as long as the block
    lasts: tests/support/templates.py's `migrated` template copied (a server started on it finds
    nothing to migrate; tests of migrating an empty database use `database_url`)."""
    if str(ROOT / "tests") not in sys.path:  # imported as tests.server, by the benches
        sys.path.insert(0, str(ROOT / "tests"))
    import templates

    if BACKEND != "postgres":
        path = directory / "prickle.db"
        asyncio.run(templates.copy_sqlite("migrated", path))
        yield f"sqlite+aiosqlite:///{path}"
        return
    name = asyncio.run(templates.take("migrated"))
    try:
        yield pg_url(name)
    finally:
        asyncio.run(templates.give_back("migrated", name))


# operation documents


def document(name: str) -> str:
    """graphql/<name>.graphql followed by the fragments it spreads, transitively."""
    text = (DOCUMENTS / f"{name}.graphql").read_text()
    needed: list[str] = []
    pending = _spreads(text)
    while pending:
        fragment = pending.pop(0)
        if fragment not in needed:
            needed.append(fragment)
            pending += _spreads(fragments()[fragment])
    return "\n".join([text, *(fragments()[f] for f in needed)])


def operation_documents() -> list[str]:
    """Every operation document's name (`queries/task`, `mutations/handoff`, ...)."""
    return sorted(
        str(p.relative_to(DOCUMENTS).with_suffix("")) for p in DOCUMENTS.glob("*/*.graphql")
    )


@cache
def fragments() -> dict[str, str]:
    source = (DOCUMENTS / "fragments.graphql").read_text()
    found: dict[str, str] = {}
    for definition in parse(source).definitions:
        assert isinstance(definition, FragmentDefinitionNode) and definition.loc is not None
        found[definition.name.value] = source[definition.loc.start : definition.loc.end]
    return found


def _spreads(text: str) -> list[str]:
    return [n for n in re.findall(r"\.\.\.\s*([_A-Za-z]\w*)", text) if n != "on"]


# a cast of principals on a running server


def persons(server: Server, *handles: str) -> dict[str, str]:
    """Tokens for persons (created if missing), as `prickle token create` makes them."""
    from app.domain.principals import person

    made = provisioned(server.database_url, *(person(h) for h in handles))
    return dict(zip(handles, made, strict=True))


ROUTE_HANDOFF = "mutation($input: HandoffInput!) { handoff(input: $input) { id state } }"
ALLOW_ALICE = 'mutation { set_gate_rule(input: {effect: allow, requester_owner: "alice"}) { id } }'


def routed_task(server: Server, packet: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """alice/planner's task, routed to bob/coder by bob's gate (it allows alice's agents):
    its id and state, and the tokens of alice, bob and those two agents."""
    tokens = persons(server, "alice", "bob")
    tokens["alice/planner"] = server.register(tokens["alice"], "planner")
    tokens["bob/coder"] = server.register(tokens["bob"], "coder")
    server.data(ALLOW_ALICE, token=tokens["bob"])
    handoff = {"project": "work", "assignee": "bob/coder", "packet": packet}
    task = server.data(ROUTE_HANDOFF, {"input": handoff}, tokens["alice/planner"])["handoff"]
    return task, tokens


def provisioned(database_url: str, *principals: Any) -> list[str]:
    """New tokens for persons or agents (made if missing) on the database: the service
    `prickle token create` calls, run in this process (tests/ops/test_cli.py and
    tests/api/test_credentials.py run the command itself), in a thread of its own with its own
    event loop, since the test calling it may be running one."""
    from app.service.admin import provision_token
    from app.storage.store import Store

    async def made() -> list[str]:
        store = Store(database_url)
        try:
            return [(await provision_token(store, p)).token for p in principals]
        finally:
            await store.close()

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, made()).result()


def without_optional_nulls(typed: Any, protocol: Any) -> Any:
    """The typed selection with the nulls of fields the protocol object leaves out dropped."""
    if isinstance(typed, dict) and isinstance(protocol, dict):
        return {
            k: without_optional_nulls(v, protocol.get(k))
            for k, v in typed.items()
            if not (v is None and k not in protocol)
        }
    if isinstance(typed, list) and isinstance(protocol, list) and len(typed) == len(protocol):
        return [without_optional_nulls(t, p) for t, p in zip(typed, protocol, strict=True)]
    return typed


# the app in this process, for tests that must see inside it


async def quiet(app: Any) -> None:
    """Stop the in-process app's background work (the hub's log tailer, the scheduler, the
    webhook deliverer, the remote agents' dispatcher, whose claims come every third of a
    lease), whose statements would otherwise be counted with a request's."""
    await app.state.hub.stop()
    await app.state.scheduler.stop()
    await app.state.deliverer.stop()
    await app.state.dispatcher.stop()


@asynccontextmanager
async def in_process(
    database_url: str, token: str | None = None
) -> AsyncIterator[tuple[Any, httpx.AsyncClient]]:
    """The app (lifespan run) and an httpx client talking to it over ASGI."""
    from app.main import create_app

    app = create_app(database_url)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://prickle", headers=headers
        ) as http:
            yield app, http
