"""PostgreSQL behind a transaction-mode pooler (PgBouncer, RDS Proxy, Supavisor, ...), and the
connections a process may hold.

The server is told, not guessing, that its `--database-url` is a pooler: `--database-pooled`
(PRICKLE_DATABASE_POOLED=1). Then:

- no startup parameter but those every pooler passes on: `statement_timeout` and `jit` are set
  per transaction (`set_config(..., true)`, as `SET LOCAL`), at its BEGIN;
- statements are unnamed, with no statement cache (asyncpg's `statement_cache_size=0`, the
  asyncpg dialect's `prepared_statement_cache_size=0`, unnamed prepared statements): asyncpg
  sends an unnamed statement's Parse again with its Bind, so no statement outlives the
  server connection it was parsed on (PgBouncer 1.18 has no prepared statements in
  transaction mode). With `--database-pooled-prepared` (PRICKLE_DATABASE_POOLED_PREPARED),
  for a pooler that keeps each client's prepared statements (PgBouncer 1.21 or later with
  `max_prepared_statements` above 0), statements are named and cached as on a direct
  connection: the pooler prepares them again on whichever server connection it gives;
- every block is a transaction (no write committing by itself): its statements and
  `SET LOCAL` stay on one server connection;
- nothing is assumed of the session between transactions: no `LISTEN` on the pooler. The
  session work (`LISTEN`, migrations) goes to `--database-direct-url`
  (PRICKLE_DATABASE_DIRECT_URL), a connection straight to PostgreSQL; without it, the event
  hub follows other processes by polling the log (the event hub) and says so once.

At start (`check`) the server asks, and refuses in one line: a pooler that keeps a session
per client (session mode, or PostgreSQL itself: two clients connected at once are never
given the same backend), `--database-pooled-prepared` on a pooler that passes a statement's
name on to PostgreSQL as it is (it does not keep prepared statements per client), a direct
URL on another database or server than the pooler's.
`--database-connections` (PRICKLE_DATABASE_CONNECTIONS) is the most connections a process
holds in all: its pool, its LISTEN connection, the health probe's and, with
`--database-read-url`, the read replica's pool (`Budget`).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import make_url

from app.settings import current

CHECK_SECONDS = 5.0  # how long a start-up question to the database may take
ROUNDS = 10  # how many times the pooler's mode is asked


class DatabaseSettingError(ValueError):
    """A database setting that cannot work, found at start (said in one line)."""


def pooled() -> bool:
    """Whether the database URL is a transaction-mode pooler (PRICKLE_DATABASE_POOLED)."""
    return current().database_pooled


def prepared() -> bool:
    """Whether the pooler keeps each client's prepared statements, so that statements may be
    named and cached (PRICKLE_DATABASE_POOLED_PREPARED)."""
    return current().database_pooled_prepared


def direct_url() -> str | None:
    """The session connection straight to PostgreSQL (PRICKLE_DATABASE_DIRECT_URL), if any."""
    return current().database_direct_url or None


def connections() -> int | None:
    """The most connections a process holds in all (PRICKLE_DATABASE_CONNECTIONS), if set."""
    return current().database_connections


def plain_dsn(url: str) -> str:
    """An asyncpg DSN from a server URL (postgresql+asyncpg://...)."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def connect_arguments(pooled: bool) -> dict[str, Any]:
    """asyncpg's arguments for a connection of its own (the probe's, the checks'): no
    statement cache behind a pooler (even one keeping prepared statements: these send few)."""
    return {"statement_cache_size": 0} if pooled else {}


def session_settings(statement_ms: int) -> str:
    """What a transaction behind a pooler sets first: what a direct connection sets at its
    start (`SET LOCAL`, as one statement)."""
    return (
        f"SELECT set_config('statement_timeout', '{statement_ms}', true), "
        "set_config('jit', 'off', true)"
    )


def unnamed() -> str:
    """The asyncpg dialect's name for a prepared statement behind a pooler: none."""
    return ""


@dataclass(frozen=True)
class Budget:
    """How a process's connections are spent: the pool (queries, mutations, background
    readers), the LISTEN connection (when there is one), the health probe's, and the read
    replica's pool (`Replica`; when there is a read URL)."""

    pool: int
    overflow: int
    listen: int
    probe: int = 1
    replica: int = 0
    replica_overflow: int = 0

    @property
    def most(self) -> int:
        return (
            self.pool
            + self.overflow
            + self.listen
            + self.probe
            + self.replica
            + self.replica_overflow
        )


def budget(pool_size: int, listening: bool, reading: bool = False) -> Budget:
    """With PRICKLE_DATABASE_CONNECTIONS = N: a pool of N less the LISTEN and probe
    connections, no overflow (at least 2 in the pool: a query's read and a write it makes);
    with a read replica (`reading`), half of that pool (at least 1) is the replica's.
    Without it: the pool size, as many again in overflow, LISTEN and the probe (and the
    replica's pool of the same size and overflow)."""
    listen = 1 if listening else 0
    most = connections()
    if most is None:
        replica = pool_size if reading else 0
        return Budget(pool_size, pool_size, listen, replica=replica, replica_overflow=replica)
    rest = most - listen - 1
    needed = 3 if reading else 2
    if rest < needed:
        raise DatabaseSettingError(
            f"--database-connections {most} leaves too few connections for requests: a "
            f"process holds {listen + 1} besides its pool (the health probe"
            f"{', LISTEN' if listen else ''}) and its pool needs 2"
            f"{' and the read replica 1' if reading else ''}; give at least {listen + 1 + needed}"
        )
    replica = max(1, rest // 2) if reading else 0
    return Budget(rest - replica, 0, listen, replica=replica)


async def check(url: str, pooled: bool, direct: str | None, startup: dict[str, str]) -> None:
    """Refuse, in one line (`DatabaseSettingError`), a pooler that keeps a session per client,
    a pooler not said to be one (it refuses the `startup` parameters a direct connection
    sends), `--database-pooled-prepared` without a pooler keeping prepared statements, and
    a direct URL on another database or server than the URL's. (A read URL: the replica's
    `check`.)"""
    import asyncpg

    named = prepared()
    if named and not pooled:
        raise DatabaseSettingError(
            "--database-pooled-prepared is said of a pooler: add --database-pooled "
            "(PRICKLE_DATABASE_POOLED=1), or leave --database-pooled-prepared out"
        )
    arguments = connect_arguments(pooled)
    if not pooled:
        arguments["server_settings"] = startup
    dsn = plain_dsn(url)
    try:
        first = await asyncpg.connect(dsn, timeout=CHECK_SECONDS, **arguments)
    except (TimeoutError, OSError, asyncpg.PostgresError) as error:
        if "unsupported startup parameter" in str(error):
            raise DatabaseSettingError(
                f"the database URL refused a startup parameter ({error}): it is a pooler; "
                "add --database-pooled (PRICKLE_DATABASE_POOLED=1)"
            ) from error
        return  # unreachable: the server's own outage handling says so
    try:
        try:
            identity = await _identity(first)
        except (TimeoutError, asyncpg.PostgresError, OSError):
            return  # connected but not answered: the server's outage handling says so
        if named:
            await _keeps_prepared(dsn, first)
        if pooled:
            await _transaction_pooled(dsn, first, arguments)
        if direct is not None:
            await _same_database(direct, identity)
    finally:
        await first.close()


async def _identity(conn: Any) -> tuple[str, str, int]:
    """The database and the server it is on: its name, the server's start time, its oid."""
    row = await conn.fetchrow(
        "SELECT current_database(), pg_postmaster_start_time()::text,"
        " (SELECT oid FROM pg_database WHERE datname = current_database())::int",
        timeout=CHECK_SECONDS,
    )
    return (row[0], row[1], row[2])


async def _keeps_prepared(dsn: str, conn: Any) -> None:
    """A pooler keeping each client's prepared statements (PgBouncer 1.21 or later with
    `max_prepared_statements`) prepares them on PostgreSQL under names of its own; one that
    does not (PgBouncer 1.18, or a later one with `max_prepared_statements = 0`) passes the
    client's name on. Asked in one transaction: one server connection throughout."""
    import asyncpg

    try:
        async with conn.transaction():
            name = f"prickle_check_{secrets.token_hex(8)}"
            statement = await conn.prepare("SELECT 1", name=name)  # kept: not closed yet
            names = await conn.fetch(
                "SELECT name FROM pg_prepared_statements", timeout=CHECK_SECONDS
            )
            passed_on = statement.get_name() in {row[0] for row in names}
            if passed_on:  # leave no statement behind on the server connection
                await conn.execute("DEALLOCATE ALL")
    except (TimeoutError, asyncpg.PostgresError, OSError):
        return  # the database does not answer: the server's outage handling says so
    if passed_on:
        raise DatabaseSettingError(
            f"--database-pooled-prepared: {make_url(dsn).render_as_string(hide_password=True)}"
            " passes a prepared statement's name on to PostgreSQL: it does not keep prepared "
            "statements per client (PgBouncer 1.21 or later with max_prepared_statements "
            "above 0 does); leave --database-pooled-prepared out"
        )


async def _transaction_pooled(dsn: str, first: Any, arguments: dict[str, Any]) -> None:
    """A transaction-mode pooler binds a client to a backend only for a transaction: on a
    quiet pooler a second client connected while the first idles gets the backend the first
    just used; on a busy one the first's own statements land on different backends.
    PostgreSQL itself, or a pooler in session mode, does neither (or makes the second
    wait). Asked up to `ROUNDS` times."""
    import asyncpg

    second = await asyncpg.connect(dsn, timeout=CHECK_SECONDS, **arguments)
    try:
        mine = await first.fetchval("SELECT pg_backend_pid()", timeout=CHECK_SECONDS)
        for _ in range(ROUNDS):
            try:
                theirs = await second.fetchval("SELECT pg_backend_pid()", timeout=CHECK_SECONDS)
            except TimeoutError:
                break  # a session-mode pooler with every server connection taken: it waits
            again = await first.fetchval("SELECT pg_backend_pid()", timeout=CHECK_SECONDS)
            if theirs == mine or again != mine:
                return
    except (TimeoutError, asyncpg.PostgresError, OSError):
        return  # the database does not answer: the server's outage handling says so
    finally:
        second.terminate()
    raise DatabaseSettingError(
        f"--database-pooled: {make_url(dsn).render_as_string(hide_password=True)} keeps a "
        "server connection per client (PostgreSQL itself, or a pooler in session mode): "
        "put the pooler in transaction mode, or leave --database-pooled out"
    )


async def _same_database(direct: str, identity: tuple[str, str, int]) -> None:
    import asyncpg

    shown = make_url(direct).render_as_string(hide_password=True)
    try:
        conn = await asyncpg.connect(plain_dsn(direct), timeout=CHECK_SECONDS)
    except (TimeoutError, OSError, asyncpg.PostgresError) as error:
        raise DatabaseSettingError(
            f"--database-direct-url {shown} does not answer: {error}"
        ) from error
    try:
        theirs = await _identity(conn)
    except (TimeoutError, asyncpg.PostgresError, OSError) as error:
        raise DatabaseSettingError(
            f"--database-direct-url {shown} does not answer: {error or 'timed out'}"
        ) from error
    finally:
        conn.terminate()
    if theirs[0] != identity[0]:
        raise DatabaseSettingError(
            f"--database-direct-url {shown} is database {theirs[0]!r}, not the database "
            f"URL's {identity[0]!r}"
        )
    if theirs != identity:
        raise DatabaseSettingError(
            f"--database-direct-url {shown} is on another server than the database URL "
            f"(started at {theirs[1]}, not {identity[1]})"
        )
