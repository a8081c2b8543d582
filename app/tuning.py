"""The server's tuning variables, each read from its PRICKLE_* environment variable and
checked here, in one place.

`prickle serve` checks every one before it touches the database (`check`), so a bad value
stops it at once with a message naming the variable, the value and what is wanted. `prickle
config` shows them. The code that uses a value reads it with `Tunable.value()`: an unset or
empty variable gives the default.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from app.domain.webhooks import BACKOFF_SECONDS, GIVE_UP_SECONDS

T = TypeVar("T")


class SettingError(ValueError):
    """A PRICKLE_* variable whose value the server cannot run with: the message names the
    variable, the value and what is wanted."""


def seconds(text: str) -> float:
    """A number of seconds above 0 (`0.5`, `30`)."""
    try:
        value = float(text)
    except ValueError:
        raise ValueError("not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError("must be a number of seconds above 0")
    return value


def count(text: str) -> int:
    """A whole number of at least 1."""
    if not text.isdigit() or int(text) < 1:
        raise ValueError("must be a whole number of at least 1")
    return int(text)


def seconds_list(text: str) -> tuple[float, ...]:
    """Comma-separated seconds, each above 0 (`5,30,120`)."""
    try:
        return tuple(seconds(step.strip()) for step in text.split(","))
    except ValueError as error:
        raise ValueError(f"must be comma-separated seconds, each above 0 ({error})") from None


def on_off(text: str) -> bool:
    """`on` or `off` (also `1`/`0`, `true`/`false`, `yes`/`no`)."""
    word = text.lower()
    if word in ("on", "1", "true", "yes"):
        return True
    if word in ("off", "0", "false", "no"):
        return False
    raise ValueError("must be on or off")


@dataclass(frozen=True)
class Tunable(Generic[T]):
    variable: str
    default: T
    parse: Callable[[str], T]
    meaning: str

    def value(self) -> T:
        """The variable's value; the default when it is unset or empty. ValueError names the
        variable, the value and what is wanted."""
        text = os.environ.get(self.variable, "").strip()
        if not text:
            return self.default
        try:
            return self.parse(text)
        except ValueError as error:
            raise SettingError(f"{self.variable}={text!r}: {error}") from None


PING_SECONDS = Tunable(
    "PRICKLE_PING_SECONDS", 15.0, seconds, "keep-alive interval of WebSockets and SSE streams"
)
SUBSCRIBER_QUEUE = Tunable(
    "PRICKLE_SUBSCRIBER_QUEUE", 1000, count, "events a live subscriber may fall behind"
)
STREAMS_PER_PRINCIPAL = Tunable(
    "PRICKLE_STREAMS_PER_PRINCIPAL", 100, count, "live SSE subscriptions per principal"
)
SCHEDULER_RECHECK = Tunable(
    "PRICKLE_SCHEDULER_RECHECK", 30.0, seconds, "longest sleep of a worker's scheduler"
)
WEBHOOK_BACKOFF: Tunable[tuple[float, ...]] = Tunable(
    "PRICKLE_WEBHOOK_BACKOFF", BACKOFF_SECONDS, seconds_list, "waits between webhook retries"
)
WEBHOOK_GIVE_UP_SECONDS = Tunable(
    "PRICKLE_WEBHOOK_GIVE_UP_SECONDS",
    GIVE_UP_SECONDS,
    seconds,
    "failing this long disables a webhook",
)
WEBHOOK_LEASE_SECONDS = Tunable(
    "PRICKLE_WEBHOOK_LEASE_SECONDS", 15.0, seconds, "a webhook's lease on one process"
)
WEBHOOK_TIMEOUT_SECONDS = Tunable(
    "PRICKLE_WEBHOOK_TIMEOUT_SECONDS", 10.0, seconds, "how long one webhook request may take"
)
A2A_LEASE_SECONDS = Tunable(
    "PRICKLE_A2A_LEASE_SECONDS", 15.0, seconds, "a remote A2A agent's lease on one process"
)
A2A_POLL: Tunable[tuple[float, ...]] = Tunable(
    "PRICKLE_A2A_POLL",
    (0.5, 1.0, 2.0, 5.0, 10.0, 30.0),
    seconds_list,
    "waits between polls of a remote A2A task (its card without streaming), then the last",
)
A2A_TIMEOUT_SECONDS = Tunable(
    "PRICKLE_A2A_TIMEOUT_SECONDS", 30.0, seconds, "how long one request to a remote agent may take"
)
DB_POOL_TIMEOUT = Tunable(
    "PRICKLE_DB_POOL_TIMEOUT",
    5.0,
    seconds,
    "longest wait for a pooled PostgreSQL connection; past it, unavailable",
)
DB_STATEMENT_TIMEOUT = Tunable(
    "PRICKLE_DB_STATEMENT_TIMEOUT",
    30.0,
    seconds,
    "PostgreSQL's statement_timeout for requests; past it, unavailable",
)
DB_READ_WAIT = Tunable(
    "PRICKLE_DB_READ_WAIT",
    0.2,
    seconds,
    "longest wait for the read replica to replay a client's last write or read; past it, "
    "the read goes to the primary",
)
COUNT_CAP = Tunable(
    "PRICKLE_COUNT_CAP",
    1000,
    count,
    "the most a connection's total_count counts (past it: the cap, and total_count_capped)",
)
FAST_PATHS = Tunable(
    "PRICKLE_FAST_PATHS",
    True,
    on_off,
    "the fast paths (off: SQLAlchemy's and Strawberry's public API only, the same answers)",
)

# `prickle serve --a2a-send-wait` (a flag: app/cli.py), handed to its workers in this variable
A2A_SEND_WAIT_VARIABLE = "PRICKLE_A2A_SEND_WAIT"
A2A_SEND_WAIT = 60.0


def a2a_send_wait() -> float:
    """The longest an A2A SendMessage waits for its task to settle, in seconds."""
    text = os.environ.get(A2A_SEND_WAIT_VARIABLE, "").strip()
    return seconds(text) if text else A2A_SEND_WAIT


TUNABLES: tuple[Tunable[Any], ...] = (
    FAST_PATHS,
    PING_SECONDS,
    SUBSCRIBER_QUEUE,
    STREAMS_PER_PRINCIPAL,
    SCHEDULER_RECHECK,
    WEBHOOK_BACKOFF,
    WEBHOOK_GIVE_UP_SECONDS,
    WEBHOOK_LEASE_SECONDS,
    WEBHOOK_TIMEOUT_SECONDS,
    A2A_LEASE_SECONDS,
    A2A_POLL,
    A2A_TIMEOUT_SECONDS,
    DB_POOL_TIMEOUT,
    DB_STATEMENT_TIMEOUT,
    DB_READ_WAIT,
    COUNT_CAP,
)


def check() -> None:
    """ValueError for the first variable whose value is bad."""
    for tunable in TUNABLES:
        tunable.value()


def describe() -> list[str]:
    """A line per variable, as `prickle config` prints the flags: its value, and whether the
    environment set it."""
    lines = []
    for tunable in TUNABLES:
        value = tunable.value()
        if isinstance(value, bool):
            shown = "on" if value else "off"
        elif isinstance(value, tuple):
            shown = ",".join(f"{v:g}" for v in value)
        else:
            shown = f"{value:g}"
        if os.environ.get(tunable.variable, "").strip():
            shown += f"  ({tunable.variable} is set)"
        lines.append(f"{tunable.variable} = {shown}")
    return lines
