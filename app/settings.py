"""The server's settings, each declared once, and read once into one frozen `Settings`.

A setting is a field of `Settings` made by `setting(...)`: its name, its default, how its
text is parsed (and checked), its help, and where it is read from: its `PRICKLE_*` variable
(the name in capitals; another for the OpenTelemetry ones) and, unless `flag=False`, its
flag (`--` and the name with dashes) on `prickle serve` and `prickle config` (and on the
other commands that ask for it by name, `add_flags`). A flag given on the command line wins
over the variable, which wins over the default; an unset or empty variable is the default.

`read` is the one reading of them; `prickle` reads them once at start (`use`), hands them to
`serve`'s workers as JSON in one variable (`hand_to_workers`), and every other module of the
server asks `current()` (this module is the only one of app/ that reads the environment,
as the settings' tests check). A bad value is a `SettingError` naming the setting and the value.
`prickle config` prints them all (`describe`), with where each came from, secrets masked.

A new setting is its field here and its use.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import math
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from sqlalchemy.engine import make_url

from app.cors import Origins
from app.domain import table as transition_table
from app.domain.webhooks import BACKOFF_SECONDS, GIVE_UP_SECONDS

PREFIX = "PRICKLE_"
HANDED = "PRICKLE_SETTINGS"  # the settings of `prickle serve`, as JSON, for its workers
METRICS_DIRECTORY = "PROMETHEUS_MULTIPROC_DIR"  # prometheus-client's own: every worker's figures

DEFAULT_URL = "sqlite+aiosqlite:///./prickle.db"
DEFAULT_POOL_SIZE = 20  # connections kept open: a query holds one for its whole request
DEFAULT_RATE = 50  # mutations a second per principal
LOOPBACK = "127.0.0.0/8,::1/128"
LOG_FORMATS = ("json", "text")
GRACEFUL_SECONDS = 30
A2A_SEND_WAIT = 60.0
_TRUE = ("on", "1", "true", "yes")
_FALSE = ("off", "0", "false", "no")

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class SettingError(ValueError):
    """A setting whose value the server cannot run with: the message names the setting (its
    flag or its variable), the value and what is wanted."""


# How a setting's text becomes its value: each raises ValueError saying what is wanted.


def text(value: str) -> str:
    return value


def whole(value: str) -> int:
    """A whole number (`8000`)."""
    if not value.strip().lstrip("-").isdigit():
        raise ValueError("must be a whole number")
    return int(value)


def positive(value: str) -> int:
    """A whole number of at least 1."""
    if not value.strip().isdigit() or int(value) < 1:
        raise ValueError("is not a positive whole number")
    return int(value)


def count(value: str) -> int:
    """A whole number of at least 1 (the tuning variables' phrasing)."""
    if not value.isdigit() or int(value) < 1:
        raise ValueError("must be a whole number of at least 1")
    return int(value)


def not_negative(value: str) -> int:
    """A whole number of seconds, 0 or more."""
    if not value.strip().isdigit():
        raise ValueError("is not a whole number of seconds")
    return int(value)


def seconds(value: str) -> float:
    """A number of seconds above 0 (`0.5`, `30`)."""
    try:
        number = float(value)
    except ValueError:
        raise ValueError("not a number of seconds") from None
    if not math.isfinite(number) or number <= 0:
        raise ValueError("must be a number of seconds above 0")
    return number


def seconds_list(value: str) -> tuple[float, ...]:
    """Comma-separated seconds, each above 0 (`5,30,120`)."""
    try:
        return tuple(seconds(step.strip()) for step in value.split(","))
    except ValueError as error:
        raise ValueError(f"must be comma-separated seconds, each above 0 ({error})") from None


def on_off(value: str) -> bool:
    """`on` or `off` (also `1`/`0`, `true`/`false`, `yes`/`no`)."""
    word = value.strip().lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise ValueError("must be on or off")


def rate(value: str) -> int:
    """Mutations a second: a whole number, 0 or more (0: no limit)."""
    try:
        number = int(value)
    except ValueError:
        raise ValueError("must be a whole number") from None
    if number < 0:
        raise ValueError(
            "the rate limit (--rate-limit, PRICKLE_RATE_LIMIT) must be at least 0 (0 turns it"
            f" off), not {number}"
        )
    return number


def log_format_of(value: str) -> str:
    if value not in LOG_FORMATS:
        raise ValueError(f"--log-format must be one of {', '.join(LOG_FORMATS)}, not {value!r}")
    return value


def networks(value: str) -> list[Network]:
    """A comma-separated CIDR list; ValueError names the bad entry."""
    found: list[Network] = []
    for entry in (e.strip() for e in value.split(",")):
        if entry:
            try:
                found.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                raise ValueError(f"--metrics-from: {entry!r} is not an address range") from None
    return found


def address_ranges(value: str) -> str:
    networks(value)
    return value


def origins(value: str) -> str:
    Origins.parse(value)  # its refusal names --cors-origins and the entry
    return value


def otel_true(value: str) -> bool:
    """OpenTelemetry's booleans: `true` (any case) is true, anything else false."""
    return value.strip().lower() == "true"


def _shown(value: object) -> str:
    return "" if value is None else str(value)


def _tuned(value: object) -> str:
    """The tuning variables as they are written: on/off, 0.5, 5,30,120."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, tuple):
        return ",".join(f"{v:g}" for v in value)
    if isinstance(value, float | int):
        return f"{value:g}"
    return _shown(value)


def setting(
    default: Any,
    parse: Callable[[str], Any],
    help: str,
    *,
    flag: bool = True,
    variable: str | None = None,
    metavar: str | None = None,
    secret: bool = False,
) -> Any:
    """A setting's declaration: a field of `Settings`."""
    return field(
        default=default,
        metadata={"setting": (parse, help, flag, variable, metavar, secret)},
    )


@dataclass(frozen=True)
class Settings:
    # `prickle serve`'s flags, each also its PRICKLE_* variable
    host: str = setting("127.0.0.1", text, "the address to listen on")
    port: int = setting(8000, whole, "the port to listen on", metavar="PORT")
    database_url: str = setting(
        DEFAULT_URL, text, "the database (SQLite or PostgreSQL)", metavar="URL", secret=True
    )
    database_pooled: bool = setting(
        False,
        on_off,
        "the database URL is a transaction-mode pooler (PgBouncer, ...): settings per "
        "transaction, unnamed statements, no LISTEN on it",
    )
    database_pooled_prepared: bool = setting(
        False,
        on_off,
        "the pooler keeps each client's prepared statements (PgBouncer 1.21 or later with "
        "max_prepared_statements): named statements, cached per connection",
    )
    database_direct_url: str | None = setting(
        None,
        text,
        "a connection straight to PostgreSQL, for LISTEN and migrations (behind a pooler; "
        "without it, other processes' events are polled for)",
        metavar="URL",
        secret=True,
    )
    database_read_url: str | None = setting(
        None,
        text,
        "a hot standby of the database: queries may read there, each client still reading "
        "its own writes (docs/operations.md)",
        metavar="URL",
        secret=True,
    )
    workers: int = setting(1, whole, "processes serving (above 1 needs PostgreSQL)", metavar="N")
    owner: str = setting("admin", text, "owner created on an empty database", metavar="HANDLE")
    access_log: bool = setting(False, on_off, "log a line per request")
    rate_limit: int = setting(
        DEFAULT_RATE,
        rate,
        "mutations a second per principal, a burst of 2N, in each process; 0 turns it off",
        metavar="N",
    )
    allow_private_webhooks: bool = setting(
        False,
        on_off,
        "let webhooks reach loopback, private, link-local and multicast addresses",
    )
    allow_private_agents: bool = setting(
        False,
        on_off,
        "let remote A2A agents be on loopback, private, link-local and multicast addresses",
    )
    a2a_send_wait: float = setting(
        A2A_SEND_WAIT,
        seconds,
        "the longest an A2A SendMessage waits for its task to end or to need input before it "
        "answers the task as it stands",
        metavar="SECONDS",
    )
    db_pool_size: int = setting(
        DEFAULT_POOL_SIZE,
        positive,
        "database connections each process keeps open; a query holds one for its request, "
        "so N should cover the requests in flight",
        metavar="N",
    )
    database_connections: int | None = setting(
        None,
        positive,
        "the most database connections each process holds in all: its pool (N less LISTEN "
        "and the health probe; with a read URL, half of it the replica's) and no overflow "
        "(the pool size, as many again in overflow, LISTEN and the probe when unset)",
        metavar="N",
    )
    cors_origins: str = setting(
        "",
        origins,
        "the other origins whose pages may call /graphql and /a2a: exact "
        "(https://app.example.com) or subdomains (https://*.example.com), separated by "
        "commas (none: the server's own origin only)",
        metavar="ORIGIN,...",
    )
    trusted_documents: str | None = setting(
        None,
        text,
        "a manifest of persisted documents (JSON: sha256 hash -> document) requests may name "
        "by documentId, doc_id or their APQ hash",
        metavar="FILE",
    )
    trusted_documents_only: bool = setting(
        False,
        on_off,
        "run only the documents of --trusted-documents (and of the server's own manifest): "
        "any other document is refused",
    )
    log_format: str | None = setting(
        None,
        log_format_of,
        "log lines as JSON or text (none: json unless stderr is a terminal)",
        metavar="{json,text}",
    )
    metrics_from: str = setting(
        LOOPBACK,
        address_ranges,
        "the address ranges GET /metrics answers (the default: loopback)",
        metavar="CIDR,...",
    )
    graceful_timeout: int = setting(
        GRACEFUL_SECONDS,
        not_negative,
        "on SIGTERM, how long to wait for requests in flight",
        metavar="SECONDS",
    )

    # tuning variables, without flags
    fast_paths: bool = setting(
        True,
        on_off,
        "the fast paths (off: SQLAlchemy's and Strawberry's public API only, the same answers)",
        flag=False,
    )
    ping_seconds: float = setting(
        15.0, seconds, "keep-alive interval of WebSockets and SSE streams", flag=False
    )
    subscriber_queue: int = setting(
        1000, count, "events a live subscriber may fall behind", flag=False
    )
    streams_per_principal: int = setting(
        100, count, "live SSE subscriptions per principal", flag=False
    )
    scheduler_recheck: float = setting(
        30.0, seconds, "longest sleep of a worker's scheduler", flag=False
    )
    webhook_backoff: tuple[float, ...] = setting(
        BACKOFF_SECONDS, seconds_list, "waits between webhook retries", flag=False
    )
    webhook_give_up_seconds: float = setting(
        GIVE_UP_SECONDS, seconds, "failing this long disables a webhook", flag=False
    )
    webhook_lease_seconds: float = setting(
        15.0, seconds, "a webhook's lease on one process", flag=False
    )
    webhook_timeout_seconds: float = setting(
        10.0, seconds, "how long one webhook request may take", flag=False
    )
    a2a_lease_seconds: float = setting(
        15.0, seconds, "a remote A2A agent's lease on one process", flag=False
    )
    a2a_poll: tuple[float, ...] = setting(
        (0.5, 1.0, 2.0, 5.0, 10.0, 30.0),
        seconds_list,
        "waits between polls of a remote A2A task (its card without streaming), then the last",
        flag=False,
    )
    a2a_timeout_seconds: float = setting(
        30.0, seconds, "how long one request to a remote agent may take", flag=False
    )
    db_pool_timeout: float = setting(
        5.0,
        seconds,
        "longest wait for a pooled PostgreSQL connection; past it, unavailable",
        flag=False,
    )
    db_statement_timeout: float = setting(
        30.0,
        seconds,
        "PostgreSQL's statement_timeout for requests; past it, unavailable",
        flag=False,
    )
    db_read_wait: float = setting(
        0.2,
        seconds,
        "longest wait for the read replica to replay a client's last write or read; past "
        "it, the read goes to the primary",
        flag=False,
    )
    count_cap: int = setting(
        1000,
        count,
        "the most a connection's total_count counts (past it: the cap, and total_count_capped)",
        flag=False,
    )

    # extensions and debugging
    transitions: str | None = setting(
        None, text, "a transition table to serve instead of the packaged one", flag=False
    )
    verbs: str | None = setting(
        None, text, "a module to import that declares more verbs", flag=False
    )
    debug_hooks: bool = setting(
        False, on_off, "mount /debug/live (tests; never in production)", flag=False
    )

    # OpenTelemetry's own variables (docs/operations.md, Traces)
    otel_sdk_disabled: bool = setting(
        False, otel_true, "true: no traces", flag=False, variable="OTEL_SDK_DISABLED"
    )
    otel_traces_exporter: str | None = setting(
        None, text, "otlp, console or none", flag=False, variable="OTEL_TRACES_EXPORTER"
    )
    otel_exporter_otlp_endpoint: str | None = setting(
        None,
        text,
        "an OTLP collector: traces on",
        flag=False,
        variable="OTEL_EXPORTER_OTLP_ENDPOINT",
    )
    otel_exporter_otlp_traces_endpoint: str | None = setting(
        None,
        text,
        "an OTLP collector of traces: traces on",
        flag=False,
        variable="OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    )
    otel_service_name: str = setting(
        "prickle", text, "the service name on spans", flag=False, variable="OTEL_SERVICE_NAME"
    )

    # not settings: where each came from, and what `serve` adds for its workers
    sources: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    metrics_directory: str | None = None  # every worker's figures (prometheus-client's)


@dataclass(frozen=True)
class Declared:
    """One setting's declaration, as `setting` wrote it."""

    name: str
    default: Any
    parse: Callable[[str], Any]
    help: str
    variable: str
    flag: str | None
    metavar: str | None
    secret: bool

    @property
    def switch(self) -> bool:
        return self.default is True or self.default is False

    @property
    def shown_as(self) -> str:
        """Its name in `prickle config`: the flag's name, else the variable."""
        return self.flag[2:] if self.flag else self.variable

    def show(self, value: object) -> str:
        if self.secret and value:
            return masked(str(value))
        return _shown(value) if self.flag else _tuned(value)


def _declared() -> tuple[Declared, ...]:
    found = []
    for f in fields(Settings):
        if "setting" not in f.metadata:
            continue
        parse, help, flag, variable, metavar, secret = f.metadata["setting"]
        found.append(
            Declared(
                name=f.name,
                default=f.default,
                parse=parse,
                help=help,
                variable=variable or PREFIX + f.name.upper(),
                flag="--" + f.name.replace("_", "-") if flag else None,
                metavar=metavar,
                secret=secret,
            )
        )
    return tuple(found)


DECLARED: tuple[Declared, ...] = _declared()
BY_NAME: dict[str, Declared] = {d.name: d for d in DECLARED}
FLAGS = tuple(d.name for d in DECLARED if d.flag)  # `prickle serve`'s and `prickle config`'s
DATABASE_FLAGS = (
    "database_url",
    "database_pooled",
    "database_pooled_prepared",
    "database_direct_url",
    "database_read_url",
)


def read(
    given: Mapping[str, object] | None = None, environ: Mapping[str, str] | None = None
) -> Settings:
    """The settings: each flag `given` (its text, or True for a switch), else its variable
    in `environ` (the process's environment), else its default. SettingError for the first
    bad value."""
    environment = os.environ if environ is None else environ
    values: dict[str, object] = {}
    sources: dict[str, str] = {}
    for declared in DECLARED:
        flagged = (given or {}).get(declared.name)
        if flagged is not None:
            raw, source = flagged, "flag"
        else:
            raw, source = environment.get(declared.variable, "").strip(), "env"
            if not raw:
                continue
        values[declared.name] = (
            raw if isinstance(raw, bool) else _parsed(declared, str(raw), source)
        )
        sources[declared.name] = source
    return Settings(**values, sources=sources)  # type: ignore[arg-type]


def _parsed(declared: Declared, raw: str, source: str) -> object:
    """The value, or SettingError: `--flag: 'x' is not ...`, `PRICKLE_X='x': must be ...`,
    or the check's own words where they name the setting; a flag's variable says whose."""
    try:
        return declared.parse(raw)
    except ValueError as error:
        reason = str(error)
    label = str(declared.flag) if source == "flag" else declared.variable
    whose = f" (the variable of {declared.flag})" if source == "env" and declared.flag else ""
    if declared.variable in reason or (declared.flag and declared.flag in reason):
        message = reason + (f" (from {declared.variable})" if source == "env" else "")
    elif reason.startswith("is "):
        message = f"{label}: {raw!r} {reason}{whose}"
    else:
        message = f"{label}={raw!r}: {reason}{whose}"
    raise SettingError(message)


# This process's settings: read once, or handed over by `prickle serve`


_current: Settings | None = None


def current() -> Settings:
    """This process's settings: those `use` was given; else, once, those `prickle serve`
    handed its workers, or those of the environment."""
    if _current is None:
        handed = os.environ.get(HANDED)
        use(from_json(handed) if handed else read())
    assert _current is not None
    return _current


def use(settings: Settings) -> None:
    """Make `settings` this process's (the transition table follows its `transitions`)."""
    global _current
    _current = settings
    transition_table.serve_from(settings.transitions)


def forget() -> None:
    """Read them again at the next `current()` (a test that changed the environment)."""
    global _current
    _current = None
    transition_table.serve_from(None)


def hand_to_workers(settings: Settings) -> None:
    """The settings where `serve`'s workers find them: one variable of JSON (and the
    metrics directory in prometheus-client's own variable, which it reads at import)."""
    os.environ[HANDED] = to_json(settings)
    if settings.metrics_directory:
        os.environ[METRICS_DIRECTORY] = settings.metrics_directory


def to_json(settings: Settings) -> str:
    values = {d.name: getattr(settings, d.name) for d in DECLARED}
    return json.dumps(
        {
            "values": values,
            "sources": dict(settings.sources),
            "metrics_directory": settings.metrics_directory,
        }
    )


def from_json(text: str) -> Settings:
    data = json.loads(text)
    values: dict[str, Any] = {
        name: tuple(value) if isinstance(value, list) else value
        for name, value in data["values"].items()
        if name in BY_NAME
    }
    return Settings(**values, sources=data["sources"], metrics_directory=data["metrics_directory"])


# The command line: flags built from the declarations, and `prickle config`


def add_flags(command: argparse.ArgumentParser, names: Iterable[str] = FLAGS) -> None:
    """The flags of the settings `names` on a command (each with its variable in its help);
    `given` reads them back."""
    names = tuple(names)
    for name in names:
        declared = BY_NAME[name]
        assert declared.flag, name
        default = _tuned(declared.default) if declared.switch else declared.show(declared.default)
        help = f"{declared.help} [env {declared.variable}; default: {default or 'none'}]"
        if declared.switch:
            command.add_argument(
                declared.flag, action="store_true", default=argparse.SUPPRESS, help=help
            )
        else:
            command.add_argument(
                declared.flag, default=argparse.SUPPRESS, metavar=declared.metavar, help=help
            )
    command.set_defaults(setting_flags=names)


def given(args: argparse.Namespace) -> dict[str, object]:
    """The settings' flags given on the command line (text, or True for a switch)."""
    names = getattr(args, "setting_flags", ())
    return {name: getattr(args, name) for name in names if hasattr(args, name)}


def variable(action: argparse.Action) -> str:
    """The variable of a flag's setting."""
    return BY_NAME[action.dest].variable


def describe(settings: Settings) -> str:
    """One line per setting: its name (the flag's, else the variable), its value (secrets
    masked) and where it came from: nothing for the default, `(PRICKLE_X is set)`, or
    `(from --flag)`. The flags first, by name, then the variables without flags."""
    flags = sorted((d for d in DECLARED if d.flag), key=lambda d: d.shown_as)
    lines = []
    for declared in [*flags, *(d for d in DECLARED if not d.flag)]:
        shown = declared.show(getattr(settings, declared.name))
        source = settings.sources.get(declared.name)
        if source == "env":
            shown += f"  ({declared.variable} is set)"
        elif source == "flag":
            shown += f"  (from {declared.flag})"
        lines.append(f"{declared.shown_as} = {shown}")
    return "\n".join(lines) + "\n"


def masked(url: str) -> str:
    """A database URL with its password replaced by ***, also one given as a query parameter
    (`?password=...`, `sslpassword=...`, which asyncpg accepts too)."""
    try:
        parsed = make_url(url)
        query = {k: "***" if _secret(k) else v for k, v in parsed.query.items()}
        shown = parsed.set(query=query).render_as_string(hide_password=True)
        return shown.replace("%2A%2A%2A", "***")
    except Exception:
        return "***"


def _secret(parameter: str) -> bool:
    name = parameter.lower()
    return "pass" in name or name in ("pwd", "secret", "token")
