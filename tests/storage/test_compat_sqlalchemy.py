"""A SQLAlchemy lacking a private name the storage's fast paths use (app/compat/sqlalchemy.py)
is said once, by a warning naming it and its version, and the store then runs the plain
path, answering as the fast paths do."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy
from compat_break import lacking
from factory import CODER, PLANNER, call, give, load, packet, snapshot
from server import Server, persons
from sqlalchemy.dialects.postgresql.asyncpg import AsyncAdapt_asyncpg_connection
from sqlalchemy.ext.asyncio import AsyncConnection

from app.compat import sqlalchemy as compat
from app.storage.engine import Blocking, is_sqlite_file
from app.storage.store import Store

# a class of SQLAlchemy's renamed, as a later version might
RENAMED = ("sqlalchemy.dialects.postgresql.asyncpg", "AsyncAdapt_asyncpg_renamed", "_prepare")
WARNING = "lacks what the storage's fast paths use"


@pytest.fixture
def patch() -> Iterator[pytest.MonkeyPatch]:
    """A monkeypatch undone before `usable()` checks again: each test's check is its own."""
    compat.usable.cache_clear()
    with pytest.MonkeyPatch.context() as patch:
        yield patch
    compat.usable.cache_clear()


def _lacking(patch: pytest.MonkeyPatch) -> None:
    """SQLAlchemy, as `usable()` checks it from now on, lacks a name (`RENAMED`)."""
    patch.setattr(compat, "REQUIRED", (*compat.REQUIRED, RENAMED))
    compat.usable.cache_clear()


class _Told(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.fixture
def told() -> Iterator[list[str]]:
    """What the compat module's logger says during the test."""
    handler = _Told()
    compat.logger.addHandler(handler)
    try:
        yield handler.messages
    finally:
        compat.logger.removeHandler(handler)


def test_sqlalchemy_has_what_the_fast_paths_use() -> None:
    """The SQLAlchemy the tests run on: one the fast paths were written for."""
    assert compat.usable()


def test_a_missing_name_is_warned_of_once_naming_sqlalchemy_and_its_version(
    patch: pytest.MonkeyPatch, told: list[str]
) -> None:
    patch.delattr(AsyncAdapt_asyncpg_connection, "_start_transaction")
    assert not compat.usable()
    assert not compat.usable()
    [warning] = told
    assert f"sqlalchemy {sqlalchemy.__version__} " in warning
    assert "AsyncAdapt_asyncpg_connection._start_transaction" in warning


def test_a_class_of_another_name_is_missing_not_an_error(
    patch: pytest.MonkeyPatch, told: list[str]
) -> None:
    _lacking(patch)
    assert not compat.usable()
    [warning] = told
    assert "AsyncAdapt_asyncpg_renamed._prepare" in warning


@pytest.mark.cast
@pytest.mark.fast_path  # its answers, held to the fast paths'
async def test_a_store_runs_the_plain_path_without_them_with_the_same_answers(
    store: Store, patch: pytest.MonkeyPatch, told: list[str]
) -> None:
    fast = Store(store.url, fast=True)
    _lacking(patch)
    plain = Store(store.url, fast=True)
    try:
        assert fast.fast is not None and plain.fast is None
        assert len(told) == 1
        async with plain.read() as tx:  # SQLAlchemy's own connection (SQLite: blocking)
            assert type(tx.conn) is (Blocking if is_sqlite_file(plain.url) else AsyncConnection)
        task = await give(fast, PLANNER)
        accepted = await call(plain, "accept_task", CODER, task.id)
        assert accepted == await load(fast, task.id) == await load(plain, task.id)
        started = await call(fast, "start_task", CODER, task.id)
        assert started == await load(plain, task.id)
        assert await snapshot(plain, task.id) == await snapshot(fast, task.id)
    finally:
        await plain.close()
        await fast.close()


def test_a_server_without_them_says_so_once_and_serves_a_lifecycle(
    start_server: Callable[..., Server], tmp_path: Path
) -> None:
    server = start_server(env=lacking(tmp_path, "sqlalchemy", RENAMED))
    alice = persons(server, "alice")["alice"]
    coder = server.register(alice, "coder")
    handoff = {"project": "apps", "assignee": "alice/coder", "packet": packet()}
    task = _step(server, "handoff", alice, input=handoff)
    assert task["state"] == "routed"
    for verb, state in (("accept_task", "accepted"), ("start_task", "working")):
        task = _step(server, verb, coder, task_id=task["id"])
        assert task["state"] == state
    read = server.run_data("queries/task", {"id": task["id"]}, coder)["task"]
    assert {field: read[field] for field in task} == task
    assert server.output().count(WARNING) == 1, server.output()
    assert f"sqlalchemy {sqlalchemy.__version__} " in server.output()


def _step(server: Server, verb: str, token: str, **variables: Any) -> dict[str, Any]:
    data = server.run_data(f"mutations/{verb}", variables, token)
    task: dict[str, Any] = data[verb]
    return task
