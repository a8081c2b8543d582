"""Reads from a PostgreSQL streaming replica (a hot standby): where a query's reads go.

`--database-read-url` (PRICKLE_DATABASE_READ_URL) names a standby of the database. A query's
reads (`Store.reading()`: the API's queries, A2A's GetTask and ListTasks) made for a known
client (`client()`: its token, set by the entry point for the request) may be served there;
everything else reads the primary: writes, mutations' reads, subscriptions, and every
background reader (the hub, webhook delivery, the dispatcher, the scheduler), which keep
their exactness (no gap, no duplicate) that way.

Each client has a floor, a WAL position its next read must see (`Positions`):

- after each of its writes, the primary's WAL insert position once the write committed;
- after each of its reads, the position that read may have seen (the standby's replay
  position, or the primary's insert position, at the read's end): a read never goes
  backwards, page after page;
- what the client sends back in the `Prickle-Position` header (`POSITION_HEADER`), the
  floor the server answered with, from this process or another.

A routed read opens its transaction on the standby and asks its replay position first;
below the client's floor it asks again until the standby has caught up or `db_read_wait`
(PRICKLE_DB_READ_WAIT) has passed, and then reads the primary instead. A standby that fails
(refused, dropped, promoted) is left for `RETRY_SECONDS` (one read then tries it again),
said once when it goes and once when it is back; its reads meanwhile go to the primary.

At start (`check`) the read URL is refused in one line when it is not a standby
(`pg_is_in_recovery()` false) or not the primary's database (another system identifier or
database name); one that does not answer is said once, and its reads go to the primary.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import make_url

from app import settings
from app.storage.pooling import CHECK_SECONDS, DatabaseSettingError, plain_dsn

log = logging.getLogger(__name__)

POSITION_HEADER = "prickle-position"  # a client's floor, answered and sent back
RETRY_SECONDS = 1.0  # a failed standby is tried again after this
POLL_SECONDS = 0.002  # how often a lagging standby's replay position is asked
CONNECT_SECONDS = 2.0  # the longest wait for a connection to the standby
CLIENTS = 100_000  # clients whose floor a process remembers (the least recent forgotten)
UNKNOWN = 2**63 - 1  # a floor after a write whose position could not be read: the primary

_REPLAYED = text("SELECT (pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::bigint")
_INSERTED = text("SELECT (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::bigint")


def read_url() -> str | None:
    """The standby's URL (PRICKLE_DATABASE_READ_URL), if any."""
    return settings.current().database_read_url or None


def shown_position(position: int) -> str:
    """A WAL position as PostgreSQL shows one (`0/16B3748`)."""
    return f"{position >> 32:X}/{position & 0xFFFFFFFF:X}"


def parsed_position(value: str) -> int | None:
    """A WAL position from its text (`0/16B3748`); None when `value` is not one."""
    high, slash, low = value.strip().partition("/")
    try:
        if not slash or len(high) > 8 or len(low) > 8:
            return None
        return (int(high, 16) << 32) | int(low, 16)
    except ValueError:
        return None


# Who the current request is (a key of its token), and its floor sent with it.
_client: ContextVar[tuple[int, int] | None] = ContextVar("replica_client", default=None)


@contextmanager
def client(token: str | None, sent: int | None = None) -> Iterator[None]:
    """The reads and writes inside are `token`'s (the request's Authorization header);
    `sent`: the floor the request carried (`POSITION_HEADER`). Without a token: nobody's
    (its reads go to the primary)."""
    if not token:
        yield
        return
    mark = _client.set((hash(token), sent or 0))
    try:
        yield
    finally:
        _client.reset(mark)


def current() -> tuple[int, int] | None:
    """The current request's client key and the floor it sent, if known."""
    return _client.get()


class Positions:
    """Each client's floor, the least recently used forgotten past `CLIENTS`."""

    def __init__(self, most: int = CLIENTS) -> None:
        self.most = most
        self._of: OrderedDict[int, int] = OrderedDict()

    def floor(self, key: int) -> int:
        return self._of.get(key, 0)

    def raise_to(self, key: int, position: int, seen: bool = False) -> int:
        """The client's floor at least `position`; `seen`: a read of the primary saw
        everything up to it (it replaces an `UNKNOWN`)."""
        now = self._of.get(key, 0)
        if now == UNKNOWN and seen:
            now = 0
        self._of[key] = new = max(now, position)
        self._of.move_to_end(key)
        if len(self._of) > self.most:
            self._of.popitem(last=False)
        return new


@dataclass
class Route:
    """One `reading()` block's: its client and where its transaction went."""

    key: int
    sent: int
    on_replica: bool = False
    why: str = ""  # why the primary served it: "lagging" or "unavailable"


_route: ContextVar[Route | None] = ContextVar("replica_route", default=None)


@contextmanager
def routing(route: Route) -> Iterator[None]:
    mark = _route.set(route)
    try:
        yield
    finally:
        _route.reset(mark)


def reading_replica() -> bool:
    """Whether the current `reading()` block reads the standby (its failures are the
    standby's, not the database's)."""
    route = _route.get()
    return route is not None and route.on_replica


@dataclass
class Counts:
    """Routed reads served by each, and why the primary served one."""

    replica: int = 0
    primary: int = 0
    lagging: int = 0  # the standby had not replayed the client's floor within the wait
    failed: int = 0  # the standby failed, or was left after failing
    waited: float = 0.0  # seconds spent waiting for the standby to catch up


class Replica:
    """The standby's state in this process, the clients' floors and the counts."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.shown = make_url(url).render_as_string(hide_password=True)
        self.positions = Positions()
        self.counts = Counts()
        self.down_since: float | None = None
        self._retry_at = 0.0
        # told of each routed read: where it was served ("replica", "primary") and why the
        # primary ("lagging", "unavailable"; app.main hands it to the metrics)
        self.observer: Callable[[str, str], None] | None = None

    def usable(self) -> bool:
        """Whether a read may try the standby: up, or left long enough (one read tries)."""
        if self.down_since is None:
            return True
        now = time.monotonic()
        if now < self._retry_at:
            return False
        self._retry_at = now + RETRY_SECONDS
        return True

    def failed(self, error: BaseException) -> None:
        self.counts.failed += 1
        self._retry_at = time.monotonic() + RETRY_SECONDS
        if self.down_since is None:
            self.down_since = time.monotonic()
            log.warning(
                "the read replica %s is unavailable (%s): reads go to the primary",
                self.shown,
                f"{type(error).__name__}: {error}".strip().splitlines()[0][:300],
            )

    def answered(self) -> None:
        if self.down_since is not None:
            log.info(
                "the read replica %s answers again after %.1fs: reads go to it",
                self.shown,
                time.monotonic() - self.down_since,
            )
            self.down_since = None

    def floor(self, route: Route) -> int:
        return max(self.positions.floor(route.key), route.sent)

    async def caught_up(self, conn: Any, floor: int) -> int | None:
        """The standby's replay position once it has replayed `floor` (`conn`: a transaction
        on it), asked until it has or `db_read_wait` has passed (then None). RuntimeError:
        it is no standby now."""
        replayed = await replayed_position(conn)
        if replayed >= floor:
            return replayed
        if floor == UNKNOWN:
            return None
        began = time.monotonic()
        deadline = began + settings.current().db_read_wait
        try:
            while time.monotonic() < deadline:
                await asyncio.sleep(POLL_SECONDS)
                replayed = await replayed_position(conn)
                if replayed >= floor:
                    return replayed
        finally:
            self.counts.waited += time.monotonic() - began
        self.counts.lagging += 1
        return None

    def read(self, route: Route, position: int | None) -> None:
        """A routed read ended; `position`: what it may have seen, if known."""
        if route.on_replica:
            self.counts.replica += 1
        else:
            self.counts.primary += 1
        if self.observer is not None:
            self.observer("replica" if route.on_replica else "primary", route.why)
        if position is not None:
            self.positions.raise_to(route.key, position, seen=not route.on_replica)

    def wrote(self, key: int, position: int | None) -> None:
        """A client's write committed; `position`: the primary's insert position after it
        (None: unknown, and the client reads the primary until a read of it sees it)."""
        self.positions.raise_to(key, UNKNOWN if position is None else position)

    def floor_of(self, key: int) -> int | None:
        """What to answer the client with: its floor, if it has one."""
        floor = self.positions.floor(key)
        return floor if 0 < floor < UNKNOWN else None


async def replayed_position(conn: Any) -> int:
    """The standby's replay position. RuntimeError when it is no standby (promoted)."""
    position = (await conn.execute(_REPLAYED)).scalar()
    if position is None:
        raise RuntimeError("the read replica is not in recovery (promoted?)")
    return int(position)


async def inserted_position(conn: Any) -> int:
    """The primary's WAL insert position: past every transaction committed before."""
    return int((await conn.execute(_INSERTED)).scalar())


async def check(url: str, read: str, pooled: bool, startup: dict[str, str]) -> None:
    """Refuse, in one line (`DatabaseSettingError`), a read URL that is not a standby
    (`pg_is_in_recovery()` false) or not the database URL's database (another system
    identifier or database name), and a pooler not said to be one. A read URL that does not
    answer is said once: its reads go to the primary until it does (as they do while the
    database URL does not answer: the server's outage handling says so)."""
    import asyncpg

    from app.storage.pooling import connect_arguments

    shown = make_url(read).render_as_string(hide_password=True)
    arguments = connect_arguments(pooled)
    if not pooled:
        arguments["server_settings"] = startup
    ask = "SELECT system_identifier::text, current_database() FROM pg_control_system()"
    try:
        primary = await asyncpg.connect(plain_dsn(url), timeout=CHECK_SECONDS, **arguments)
    except (TimeoutError, OSError, asyncpg.PostgresError):
        return  # (pooling.check has said what is wrong with it)
    try:
        ours = await primary.fetchrow(ask, timeout=CHECK_SECONDS)
    except (TimeoutError, OSError, asyncpg.PostgresError):
        return
    finally:
        primary.terminate()
    try:
        conn = await asyncpg.connect(plain_dsn(read), timeout=CHECK_SECONDS, **arguments)
    except (TimeoutError, OSError, asyncpg.PostgresError) as error:
        if "unsupported startup parameter" in str(error):
            raise DatabaseSettingError(
                f"--database-read-url {shown} refused a startup parameter ({error}): it is a "
                "pooler; add --database-pooled (PRICKLE_DATABASE_POOLED=1)"
            ) from error
        log.warning(
            "the read replica %s does not answer (%s): reads go to the primary until it does",
            shown,
            error,
        )
        return
    try:
        theirs = await conn.fetchrow(ask, timeout=CHECK_SECONDS)
        standby = await conn.fetchval("SELECT pg_is_in_recovery()", timeout=CHECK_SECONDS)
    finally:
        conn.terminate()
    if theirs[0] != ours[0]:
        raise DatabaseSettingError(
            f"--database-read-url {shown} is another cluster than the database URL's "
            f"(system identifier {theirs[0]}, not {ours[0]}): name a standby of it"
        )
    if theirs[1] != ours[1]:
        raise DatabaseSettingError(
            f"--database-read-url {shown} is database {theirs[1]!r}, not the database "
            f"URL's {ours[1]!r}"
        )
    if not standby:
        raise DatabaseSettingError(
            f"--database-read-url {shown} is not a standby (pg_is_in_recovery() is false): "
            "name a hot standby of the database, or leave --database-read-url out"
        )
