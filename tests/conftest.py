"""Shared fixtures: a database of its own per test, on the backend the run asks for.

PRICKLE_TEST_BACKEND=sqlite (default) gives each test its own SQLite file;
PRICKLE_TEST_BACKEND=postgres gives each test its own PostgreSQL database, created on the
server named by PRICKLE_TEST_PG (default postgresql://postgres@127.0.0.1:5432/test). A test
using `store` gets a copy of a migrated template (tests/support/templates.py), built once per run.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import templates
from fast_paths import pytest_runtest_setup  # noqa: F401 (a hook)
from server import BACKEND, fresh_pg_database

from app.storage import fast as storage_fast
from app.storage.store import Store

storage_fast.install()  # as the app's assembly does (app/service/fast): stores take them

if TYPE_CHECKING:
    from live import Cast
    from server import Server


# headless Chromium's `browser` and `page` fixtures, for every test of a page
pytest_plugins = ["chromium"]


@pytest.fixture
async def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """This test's own database: empty (not yet migrated), unless the test uses `store`.
    Then it is a copy of a template (tests/support/templates.py): migrated, and set up with the
    cast and its standing rules where marked `cast`."""
    kind = _template_kind(request)
    if BACKEND != "postgres":
        path = tmp_path / "prickle.db"
        if kind is not None:
            await templates.copy_sqlite(kind, path)
        yield f"sqlite+aiosqlite:///{path}"
        return
    if kind is None:
        async for url in fresh_pg_database():
            yield url
        return
    async with templates.pg_copy(kind) as url:
        yield url


def _template_kind(request: pytest.FixtureRequest) -> templates.Kind | None:
    if "store" not in request.fixturenames:
        return None
    return "cast" if request.node.get_closest_marker("cast") is not None else "migrated"


@pytest.fixture
async def pg_database_url() -> AsyncIterator[str]:
    """An empty PostgreSQL database whatever the run's backend (for PostgreSQL-only tests)."""
    async for url in fresh_pg_database():
        yield url


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "cast: `store` comes set up with tests/support/factory.py's cast and standing rules",
    )


# Which tests run in which pass of scripts/test.sh (README, "Test it"):
# - SQLite, fast paths on: every test.
# - PostgreSQL, fast paths on: every test but those marked `once` (deselected here), whose
#   subject the backend does not change (the domain, the table, docs, the browser's view).
#   A test that starts a server or uses `store` or `database_url` depends on the backend;
#   an unmarked test runs on both, the safe default.
# - PRICKLE_FAST_PATHS=off, on either backend: the API and storage tests, marked
#   `api_and_storage` here (the modules named below, and every test on `store`), but not
#   those marked `fast_path` (scripts/test.sh's `off_selection`). On PostgreSQL the off pass
#   keeps the storage tests alone, marked `storage` (the store's modules, the PostgreSQL
#   modules and every test on `store`): the plain path above storage is the same code on
#   both backends, and the SQLite off pass runs it.
API_AND_STORAGE = ("test_api_", "test_store_", "test_subscriptions_", "test_postgres_")
STORAGE = ("test_store_", "test_postgres_")


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        on_store = "store" in item.fixturenames
        if item.path.name.startswith(API_AND_STORAGE) or on_store:
            item.add_marker("api_and_storage")
        if item.path.name.startswith(STORAGE) or on_store:
            item.add_marker("storage")
    if BACKEND == "postgres":
        once = [item for item in items if item.get_closest_marker("once") is not None]
        if once:
            config.hook.pytest_deselected(items=once)
            items[:] = [item for item in items if item.get_closest_marker("once") is None]


def pytest_sessionfinish(session: pytest.Session) -> None:
    templates.remove_all()


@pytest.fixture
async def store(database_url: str) -> AsyncIterator[Store]:
    """A migrated Store on this test's own database (`database_url`, a template's copy);
    with the cast and its standing rules where marked `cast`."""
    store = Store(database_url)
    async with store.read():  # connected, as a server's store is before its first request
        pass
    try:
        yield store
    finally:
        await store.close()


# The API server (tests/support/server.py): `prickle serve` as a subprocess on a free port.


@pytest.fixture(scope="module")
def api_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One server per test module, on a database of the module's own; its owner is admin."""
    yield from _module_server(tmp_path_factory.mktemp("api"))


@pytest.fixture(scope="module")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """`api_server` with the debug hooks on: `/debug/live` counts the hub's subscribers and
    the process's asyncio tasks (`live.debug`, `settled`, `subscribers_reach`)."""
    from live import DEBUG_ENV

    yield from _module_server(tmp_path_factory.mktemp("live"), DEBUG_ENV)


def _module_server(directory: Path, env: dict[str, str] | None = None) -> Iterator[Server]:
    from server import module_database, start

    with module_database(directory) as url:
        server = start(url, directory / "logs", env=env)
        try:
            yield server
        finally:
            server.stop()


@pytest.fixture(scope="module")
def cast(request: pytest.FixtureRequest, live_server: Server) -> Cast:
    """A cast of principals with unique handles on the module's `live_server` (`live.Cast`):
    alice with her agents alice/coder and alice/writer, unless the module names its own
    (`CAST = ("alice", "bob", "alice/coder", ...)`)."""
    from live import ALICE_AND_AGENTS, Cast

    names = getattr(request.module, "CAST", ALICE_AND_AGENTS)
    return Cast(live_server).add(*names)


@pytest.fixture
def start_server(database_url: str, tmp_path):  # type: ignore[no-untyped-def]
    """A factory: `start_server(*serve_args)` serves this test's database (or
    `start_server(*args, url=...)` another, `env={...}` with more environment variables);
    every server it started stops at teardown."""
    from server import start

    started = []

    def start_one(*args: str, url: str | None = None, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
        logs = tmp_path / f"server-{len(started)}"
        server = start(url or database_url, logs, *args, env=env)
        started.append(server)
        return server

    yield start_one
    for server in reversed(started):
        server.stop()
