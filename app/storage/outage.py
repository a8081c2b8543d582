"""When the database fails: which failures are an outage, what they are answered with, and
the outage told once.

`fault(error)` reads a driver's or SQLAlchemy's exception (and what it wraps) and returns
the `Unavailable` that answers it, or None for anything else (a real bug keeps its
traceback): a connection refused, dropped or shutting down (PostgreSQL's classes 08, 53,
57 and 58, asyncpg's and SQLAlchemy's interface errors, a pool that gave no connection in
time, a statement cancelled by `statement_timeout`) and a SQLite file that is full,
read-only, locked past the busy timeout or cannot be opened.

`Health` is the database's state as this process knows it: reachable or not (its probe asks
`SELECT 1` every `PROBE_SECONDS`: `/readyz`, `/healthz` and the `prickle_database_up`
figure read it), and the outage in progress, logged once: one WARNING when it starts (with
the error's class), one INFO when it ends (its length and how many transactions were
refused meanwhile). A SQLite file that refuses writes (full, read-only) is an outage of
its writes: the probe's reads still answer, and the first write that commits ends it.
A SQLite file's probe that has not answered in time is a busy machine, not a database away
(a file that fails answers with its error): it begins no outage and escalates none.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import time
from collections.abc import Awaitable, Callable, Iterator

from sqlalchemy import exc

from app.domain.errors import InvalidInput, Unavailable

log = logging.getLogger(__name__)

PROBE_SECONDS = 0.25  # how often the probe asks the database
PROBE_RETRY_SECONDS = 0.1  # and while it does not answer (a refused connection is cheap)
PROBE_TIMEOUT = 0.7  # an answer slower than this counts as none
RETRY_AFTER = 1.0  # what a refusal tells a client to wait: the probe sees a return sooner
BUSY_LOG_SECONDS = 10.0  # a pool or statement timeout is logged at most this often

UNREACHABLE, TIMED_OUT, FULL, READ_ONLY = "unreachable", "timed out", "full", "read-only"
# PostgreSQL's SQLSTATE classes of an outage: connection exception, insufficient resources
# (disk full, too many connections), operator intervention (shutdown, cannot connect now,
# query_canceled: a statement_timeout), system error; and a read-only standby
_SQLSTATE_CLASSES = ("08", "53", "57", "58")
_READ_ONLY_SQLSTATE = "25006"
_QUERY_CANCELED = "57014"
# SQLite's primary result codes: busy (past the busy timeout), read-only, I/O error, full,
# cannot open
_SQLITE_CODES = {5: TIMED_OUT, 8: READ_ONLY, 10: UNREACHABLE, 13: FULL, 14: UNREACHABLE}
_CONNECTION_WORDS = ("connection is closed", "connection was closed", "another operation")


def fault(
    error: BaseException, write: bool = False, committing: bool = False
) -> Unavailable | None:
    """The refusal answering `error`, or None when it is no database outage. `write`: it
    came from a write transaction; `committing`: once its commit may have been sent, so a
    dropped connection leaves the outcome unknown."""
    if isinstance(error, Unavailable):
        return error
    reason = _reason(error)
    if reason is None:
        return None
    unknown = write and committing and reason == UNREACHABLE and not _never_sent(error)
    return Unavailable(reason, "unknown" if unknown else "none", RETRY_AFTER)


# PostgreSQL's "character not in repertoire" (a NUL in text) and "untranslatable
# character" (a \u0000 in jsonb): the value, not the database, is at fault.
_UNHOLDABLE = frozenset({"22021", "22P05"})


def recovery_conflict(error: BaseException) -> Unavailable | None:
    """A hot standby's cancellation of a read that conflicts with the WAL it replays
    (serialization_failure, 40001, "conflict with recovery"): that standby is unavailable
    for the read, not the database."""
    for found in _chain(error):
        if getattr(found, "sqlstate", None) == "40001" and "recovery" in str(found):
            return Unavailable(UNREACHABLE, "none", RETRY_AFTER)
    return None


def unholdable(error: BaseException) -> InvalidInput | None:
    """The refusal of a value the database cannot hold, when `error` is that; else None."""
    for found in _chain(error):
        if getattr(found, "sqlstate", None) in _UNHOLDABLE:
            return InvalidInput("a text value the database cannot hold (it contains U+0000)")
    return None


def _reason(error: BaseException) -> str | None:
    for found in _chain(error):
        reason = _reason_of(found)
        if reason is not None:
            return reason
    return None


def _reason_of(error: BaseException) -> str | None:
    if isinstance(error, exc.TimeoutError):  # the pool gave no connection in time
        return TIMED_OUT
    if isinstance(error, exc.DBAPIError) and error.connection_invalidated:
        return UNREACHABLE
    if isinstance(error, sqlite3.Error):
        return _SQLITE_CODES.get(getattr(error, "sqlite_errorcode", 0) & 0xFF)
    sqlstate = getattr(error, "sqlstate", None) or getattr(error, "pgcode", None)
    if isinstance(sqlstate, str):
        if sqlstate == _QUERY_CANCELED:
            return TIMED_OUT
        if sqlstate == _READ_ONLY_SQLSTATE:
            return READ_ONLY
        if sqlstate[:2] == "53" and sqlstate != "53100":
            return TIMED_OUT  # too many connections, out of memory: a moment may cure it
        if sqlstate == "53100":
            return FULL
        return UNREACHABLE if sqlstate[:2] in _SQLSTATE_CLASSES else None
    if isinstance(error, (ConnectionError, TimeoutError, OSError)):
        return UNREACHABLE
    return UNREACHABLE if _is_interface_error(error) else None


def _is_interface_error(error: BaseException) -> bool:
    """asyncpg's InterfaceError family (a closed connection, one in use by a cancelled
    operation), by name: the driver is imported only where PostgreSQL is used."""
    names = {klass.__name__ for klass in type(error).__mro__}
    if "ConnectionDoesNotExistError" in names or "InternalClientError" in names:
        return True
    if "InterfaceError" in names:
        text = str(error).lower()
        return any(words in text for words in _CONNECTION_WORDS)
    return False


def _never_sent(error: BaseException) -> bool:
    """Whether the statement never reached the database: no connection was made, or the
    driver found its connection closed before sending (then nothing can have committed)."""
    for found in _chain(error):
        if isinstance(found, (ConnectionRefusedError, exc.TimeoutError)):
            return True
        if getattr(found, "sqlstate", None) in ("57P03", "08001", "08004"):  # cannot connect
            return True
        names = {klass.__name__ for klass in type(found).__mro__}
        if "InterfaceError" in names and "connection is closed" in str(found).lower():
            return True
    return False


def _chain(error: BaseException) -> Iterator[BaseException]:
    """`error`, what SQLAlchemy wrapped in it, and its causes, each once."""
    seen: set[int] = set()
    pending: list[BaseException | None] = [error]
    while pending:
        found = pending.pop(0)
        if found is None or id(found) in seen:
            continue
        seen.add(id(found))
        yield found
        orig = getattr(found, "orig", None)
        pending += [orig if isinstance(orig, BaseException) else None]
        pending += [found.__cause__, found.__context__]


class NoAnswer(TimeoutError):
    """The probe's question has not answered within PROBE_TIMEOUT; it is still in flight."""


class Health:
    """The database's state in this process, and its outages, each logged once. `local`: a
    SQLite file's, where a probe without an answer in time says nothing of the database."""

    def __init__(self, local: bool = False) -> None:
        self.local = local
        self.reachable = True  # the probe's last answer
        self.started: float | None = None  # the outage in progress: since when (monotonic)
        self.writes_only = False  # it refuses writes only (SQLite full or read-only)
        self.refused = 0
        self.outages = 0
        self._busy_logged = 0.0
        self._busy = 0
        self._back: list[Callable[[], None]] = []  # told when an outage ends

    def on_back(self, told: Callable[[], None]) -> Callable[[], None]:
        """Tell `told` whenever an outage ends (a background loop re-armed at once); returns
        what undoes it."""
        self._back.append(told)
        return lambda: self._back.remove(told) if told in self._back else None

    @property
    def down(self) -> bool:
        return self.started is not None

    def failed(self, refusal: Unavailable, error: BaseException) -> None:
        """A transaction was refused with `refusal` (caused by `error`)."""
        if refusal.reason == TIMED_OUT:
            self._timed_out(error)
            return
        self.refused += 1
        if self.started is None:
            self._begin(error, writes_only=refusal.reason in (FULL, READ_ONLY))

    def served(self, write: bool) -> None:
        """A transaction committed (a write) or answered (a read)."""
        if self.started is not None and (write or not self.writes_only):
            self._end()

    def probed(self, error: BaseException | None) -> None:
        """The probe's answer: None when the database answered."""
        if self.local and isinstance(error, NoAnswer):
            return  # a busy machine: the question in flight answers later
        self.reachable = error is None
        if error is not None and (self.started is None or self.writes_only):
            self._begin(error, writes_only=False)
        elif error is None and self.started is not None and not self.writes_only:
            self._end()

    def _begin(self, error: BaseException, writes_only: bool) -> None:
        if self.started is None:
            self.started, self.outages = time.monotonic(), self.outages + 1
        self.writes_only = writes_only
        what = "refuses writes" if writes_only else "is unreachable"
        log.warning(
            "the database %s (%s: %s); answering unavailable until it is back",
            what,
            type(error).__name__,
            _first_line(error),
        )

    def _end(self) -> None:
        lasted = time.monotonic() - (self.started or time.monotonic())
        log.info(
            "the database is back after %.2fs; %d transactions were refused meanwhile",
            lasted,
            self.refused,
        )
        self.started, self.writes_only, self.refused = None, False, 0
        for told in list(self._back):
            told()

    def _timed_out(self, error: BaseException) -> None:
        self._busy += 1
        now = time.monotonic()
        if now - self._busy_logged >= BUSY_LOG_SECONDS:
            log.warning(
                "%d transactions refused as unavailable: timed out (%s: %s)",
                self._busy,
                type(error).__name__,
                _first_line(error),
            )
            self._busy_logged, self._busy = now, 0


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0][:200] if text else ""


async def probe(
    health: Health, ask: Callable[[], Awaitable[None]], stopping: asyncio.Event
) -> None:
    """Ask the database every PROBE_SECONDS, every PROBE_RETRY_SECONDS while it does not
    answer, telling `health`, until `stopping` is set. A question in flight is never
    cancelled (a driver may not survive a cancel mid-statement: aiosqlite's connection can
    then wait for ever): one slower than PROBE_TIMEOUT counts as no answer, and the next
    round waits for it instead of asking again."""
    asking: asyncio.Future[None] | None = None
    while not stopping.is_set():
        if asking is None:
            asking = asyncio.ensure_future(ask())
        error = await _answer(asking)
        if asking.done():
            asking = None
        health.probed(error)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stopping.wait(), PROBE_RETRY_SECONDS if error else PROBE_SECONDS)
    if asking is not None:
        await asyncio.wait({asking}, timeout=PROBE_TIMEOUT)


async def _answer(asking: asyncio.Future[None]) -> BaseException | None:
    """The error of the probe's question, a TimeoutError while it has not answered in
    PROBE_TIMEOUT, or None once it answered."""
    await asyncio.wait({asking}, timeout=PROBE_TIMEOUT)
    if not asking.done():
        return NoAnswer(f"no answer within {PROBE_TIMEOUT}s")
    if asking.cancelled():
        return asyncio.CancelledError()
    return asking.exception()


def quietly(logger: logging.Logger, what: str, error: BaseException) -> None:
    """A background loop's failure: an outage is logged once by `Health` (here only at
    DEBUG, without a traceback); anything else is a bug, logged with its traceback."""
    if fault(error) is not None:
        logger.debug("%s: the database is unavailable (%s)", what, type(error).__name__)
    else:
        logger.error("%s", what, exc_info=(type(error), error, error.__traceback__))
