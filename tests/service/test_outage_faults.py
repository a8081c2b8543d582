"""Which failures are the database being unavailable (`fault`), what a client is told of
each, and a background loop's failure logged without a traceback only for those."""

from __future__ import annotations

import logging
import sqlite3

import asyncpg
import pytest
from sqlalchemy import exc

from app.domain.errors import Unavailable
from app.storage.outage import Health, NoAnswer, fault, quietly

pytestmark = pytest.mark.once


def wrapped(error: Exception) -> exc.DBAPIError:
    """As SQLAlchemy raises a driver's error."""
    return exc.DBAPIError.instance("SELECT 1", None, error, sqlite3.Error)


def sqlite_error(text: str, code: int) -> sqlite3.OperationalError:
    error = sqlite3.OperationalError(text)
    error.sqlite_errorcode = code
    return error


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (ConnectionRefusedError(111, "Connect call failed"), "unreachable"),
        (asyncpg.exceptions.ConnectionDoesNotExistError("connection was closed"), "unreachable"),
        (asyncpg.exceptions.AdminShutdownError("terminating connection"), "unreachable"),
        (
            asyncpg.exceptions.CannotConnectNowError("the database system is starting up"),
            "unreachable",
        ),
        (
            asyncpg.exceptions.QueryCanceledError("canceling statement due to statement timeout"),
            "timed out",
        ),
        (asyncpg.exceptions.TooManyConnectionsError("too many clients"), "timed out"),
        (asyncpg.exceptions.DiskFullError("could not extend file"), "full"),
        (asyncpg.exceptions.ReadOnlySQLTransactionError("read-only transaction"), "read-only"),
        (exc.TimeoutError("QueuePool limit of size 20 overflow 20 reached"), "timed out"),
        (wrapped(sqlite_error("database or disk is full", 13)), "full"),
        (wrapped(sqlite_error("attempt to write a readonly database", 1032)), "read-only"),
        (wrapped(sqlite_error("database is locked", 5)), "timed out"),
        (wrapped(sqlite_error("unable to open database file", 14)), "unreachable"),
    ],
)
def test_an_outage_is_answered_unavailable_with_its_reason(error: Exception, reason: str) -> None:
    found = fault(error)
    assert isinstance(found, Unavailable)
    assert (found.code, found.reason, found.outcome, found.retry_after) == (
        "unavailable",
        reason,
        "none",
        1.0,
    )
    assert "nothing changed" in found.message


@pytest.mark.parametrize(
    "error",
    [
        ZeroDivisionError("a bug"),
        KeyError("a bug"),
        asyncpg.exceptions.UniqueViolationError("duplicate key"),
        asyncpg.exceptions.UndefinedColumnError("no such column"),
        wrapped(sqlite_error("no such table: tasks", 1)),
        exc.IntegrityError("INSERT", None, sqlite3.IntegrityError("UNIQUE constraint failed")),
    ],
)
def test_a_bug_is_no_outage(error: Exception) -> None:
    assert fault(error) is None


def test_a_dropped_connection_at_a_commit_leaves_the_outcome_unknown() -> None:
    dropped = asyncpg.exceptions.ConnectionDoesNotExistError("connection was closed")
    assert fault(dropped, write=True, committing=False).outcome == "none"  # type: ignore[union-attr]
    found = fault(dropped, write=True, committing=True)
    assert found is not None and found.outcome == "unknown"
    assert "outcome is unknown" in found.message
    # a read, or a connection never made, changed nothing
    assert fault(dropped, write=False, committing=True).outcome == "none"  # type: ignore[union-attr]
    refused = ConnectionRefusedError(111, "Connect call failed")
    assert fault(refused, write=True, committing=True).outcome == "none"  # type: ignore[union-attr]


def test_an_outage_is_logged_once_and_its_end_with_its_length_and_refusals(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="app.storage.outage")
    health, told = Health(), []
    health.on_back(lambda: told.append("back"))
    error = ConnectionRefusedError(111, "Connect call failed")
    health.probed(error)
    for _ in range(3):
        health.failed(fault(error), error)  # type: ignore[arg-type]
        health.probed(error)
    assert not health.reachable and health.down
    health.probed(None)
    assert health.reachable and not health.down and told == ["back"]
    lines = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert len(lines) == 2, lines
    assert lines[0][0] == "WARNING" and "ConnectionRefusedError" in lines[0][1]
    assert lines[1][0] == "INFO" and "3 transactions were refused" in lines[1][1]
    assert not any(r.exc_info for r in caplog.records)


def test_a_sqlite_probe_slower_than_its_timeout_is_no_outage(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A SQLite file's probe still in flight after its timeout means a busy machine: under a
    CPU load it declared the file unreachable, and refused reads while it was only full."""
    caplog.set_level(logging.INFO, logger="app.storage.outage")
    slow = NoAnswer("no answer within 0.7s")
    local = Health(local=True)
    local.probed(slow)
    assert local.reachable and not local.down
    full = wrapped(sqlite_error("database or disk is full", 13))
    local.failed(fault(full, write=True), full)  # type: ignore[arg-type]
    local.probed(slow)  # a full file stays an outage of its writes alone
    assert local.down and local.writes_only
    assert len(caplog.records) == 1 and "refuses writes" in caplog.records[0].getMessage()
    remote = Health()  # a server that does not answer in time is away
    remote.probed(slow)
    assert not remote.reachable and remote.down


def test_a_background_loop_logs_a_bug_with_its_traceback_and_an_outage_without(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="loop")
    log = logging.getLogger("loop")
    quietly(log, "the round failed", ConnectionRefusedError(111, "refused"))
    try:
        raise ZeroDivisionError("a bug")
    except ZeroDivisionError as bug:
        quietly(log, "the round failed", bug)
    (outage, bug_line) = caplog.records
    assert outage.levelname == "DEBUG" and outage.exc_info is None
    assert bug_line.levelname == "ERROR" and bug_line.exc_info is not None


def test_a_write_on_a_connection_found_closed_before_sending_changed_nothing() -> None:
    closed = asyncpg.exceptions.InterfaceError(
        "cannot call Connection.fetch(): connection is closed"
    )
    found = fault(closed, write=True, committing=True)
    assert found is not None and found.outcome == "none"
