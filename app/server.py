"""`prickle serve`: migrate, create the first owner on an empty database, run uvicorn."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path
from types import FrameType
from typing import Any

import uvicorn

from app import cors, tuning
from app.api.limits import ENVIRONMENT as RATE_LIMIT_VARIABLE
from app.api.limits import configured_rate
from app.api.persisted import FILE_VARIABLE as TRUSTED_VARIABLE
from app.api.persisted import ONLY_VARIABLE as TRUSTED_ONLY_VARIABLE
from app.api.persisted import load as load_manifest
from app.domain.principals import person
from app.observability.logs import FORMATS, default_format, log_config
from app.observability.settings import ACCESS_LOG, LOOPBACK, METRICS_FROM, MULTIPROCESS, networks
from app.service import remote_agents
from app.service.admin import provision_token
from app.service.webhook_urls import ALLOW_PRIVATE_VARIABLE
from app.storage.engine import is_sqlite, startup_settings
from app.storage.migrate import upgrade
from app.storage.pooling import check
from app.storage.replica import check as check_read
from app.storage.store import Store
from app.tuning import A2A_SEND_WAIT, A2A_SEND_WAIT_VARIABLE

FACTORY = "app.main:app_from_environment"
GRACEFUL_SECONDS = 30


def serve(
    host: str,
    port: int,
    url: str,
    workers: int = 1,
    owner: str = "admin",
    access_log: bool = False,
    rate_limit: int | None = None,
    log_format: str | None = None,
    metrics_from: str = LOOPBACK,
    graceful_timeout: int = GRACEFUL_SECONDS,
    allow_private_webhooks: bool = False,
    allow_private_agents: bool = False,
    cors_origins: str = "",
    trusted_documents: str | None = None,
    trusted_documents_only: bool = False,
    a2a_send_wait: float = A2A_SEND_WAIT,
) -> int:
    """Run the server. A line per request (`access_log`) is off unless asked for: under load,
    formatting and writing it cost the server about a twentieth of its CPU
    (docs/performance.md). `rate_limit`: mutations a second per principal in each process
    (None: PRICKLE_RATE_LIMIT or the default; 0: no limit). `log_format`: json or text
    (None: json unless stderr is a terminal); `metrics_from`: the CIDR ranges /metrics
    answers; `graceful_timeout`: seconds a SIGTERM waits for requests in flight;
    `allow_private_webhooks`: let webhooks reach private addresses (as
    PRICKLE_ALLOW_PRIVATE_WEBHOOKS=1 does); `allow_private_agents`: remote A2A agents (as
    PRICKLE_ALLOW_PRIVATE_AGENTS=1 does); `cors_origins`: the other origins whose pages may
    call the API (app/cors.py); `trusted_documents`: a manifest of persisted documents, the
    only ones run with `trusted_documents_only` (app/api/persisted.py); `a2a_send_wait`: the
    longest an A2A SendMessage waits (PRICKLE_A2A_SEND_WAIT)."""
    try:
        rate = configured_rate(rate_limit)
        cors.Origins.parse(cors_origins)
        if trusted_documents:
            load_manifest(Path(trusted_documents))
        networks(metrics_from)
        tuning.check()
        if log_format not in (None, *FORMATS):
            raise ValueError(
                f"--log-format must be one of {', '.join(FORMATS)}, not {log_format!r}"
            )
    except ValueError as error:
        print(f"prickle: {error}", file=sys.stderr)
        return 2
    if workers < 1:
        print("prickle: --workers must be at least 1", file=sys.stderr)
        return 2
    if workers > 1 and is_sqlite(url):
        print(
            "prickle: --workers above 1 needs PostgreSQL: SQLite has one writer and no way to "
            "tell other processes' event hubs about commits; use --database-url "
            "postgresql+asyncpg://... or --workers 1",
            file=sys.stderr,
        )
        return 2
    handle = person(owner).id  # refuse a malformed --owner before touching the database
    token = asyncio.run(_prepare(url, handle))
    if token is not None:
        print(f"owner token for {handle}:", flush=True)
        print(token, flush=True)
    os.environ["PRICKLE_DATABASE_URL"] = url
    os.environ[RATE_LIMIT_VARIABLE] = str(rate)
    os.environ[cors.VARIABLE] = cors_origins
    os.environ[TRUSTED_VARIABLE] = (
        str(Path(trusted_documents).resolve()) if trusted_documents else ""
    )
    os.environ[TRUSTED_ONLY_VARIABLE] = "1" if trusted_documents_only else "0"
    if allow_private_webhooks:
        os.environ[ALLOW_PRIVATE_VARIABLE] = "1"
    if allow_private_agents:
        os.environ[remote_agents.ALLOW_PRIVATE_VARIABLE] = "1"
    os.environ[A2A_SEND_WAIT_VARIABLE] = repr(a2a_send_wait)
    # operating it (docs/operations.md): logs, metrics of every worker, draining on SIGTERM
    os.environ[METRICS_FROM] = metrics_from
    os.environ[ACCESS_LOG] = "1" if access_log else "0"
    os.environ[MULTIPROCESS] = tempfile.mkdtemp(prefix="prickle-metrics-")
    signal.signal(signal.SIGTERM, _exit_cleanly)
    try:
        _run(host, port, workers, log_config(log_format or default_format()), graceful_timeout)
    finally:
        shutil.rmtree(os.environ[MULTIPROCESS], ignore_errors=True)
    return 0


def _exit_cleanly(signum: int, frame: FrameType | None) -> None:
    """A SIGTERM outside uvicorn's own handling (before it starts, or re-raised by it once
    it has shut down gracefully) ends the process with status 0."""
    raise SystemExit(0)


def _run(host: str, port: int, workers: int, logging: dict[str, Any], graceful: int) -> None:
    uvicorn.run(
        FACTORY,
        factory=True,
        host=host,
        port=port,
        workers=workers,
        loop="uvloop" if _installed("uvloop") else "asyncio",
        http="httptools" if _installed("httptools") else "h11",
        ws=_websockets_protocol(),
        ws_per_message_deflate=False,  # see _websockets_protocol
        log_config=logging,
        access_log=False,  # the app's own request line (app/observability/requests.py)
        proxy_headers=False,
        timeout_graceful_shutdown=graceful,
    )


async def _prepare(url: str, owner: str) -> str | None:
    """Migrate; on an empty database (no persons) create the owner and return its token.
    On the plain path: the app's store checks the fast paths once logging is set up."""
    store = Store(url, fast=False)
    try:
        if not store.sqlite:  # a session-mode pooler, a direct or read URL elsewhere: refused
            await check(store.url, store.pooled, store.direct_url, startup_settings())
            if store.read_url is not None:  # a standby of the same database
                await check_read(store.url, store.read_url, store.pooled, startup_settings())
        await upgrade(store.direct_engine)
        async with store.read() as tx:
            empty = await tx.principals.count_persons() == 0
        return (await provision_token(store, person(owner))).token if empty else None
    finally:
        await store.close()


def _websockets_protocol() -> str:
    """uvicorn's sans-I/O websockets protocol where it has one: the same pings and limits as
    the default ("auto", the legacy one) without its three tasks per connection; about 65 KiB
    less per open subscription (docs/performance.md).

    Messages go uncompressed (no permessage-deflate): events are a few hundred bytes of JSON,
    and each compressed connection keeps its own zlib state, which on a board with many
    subscribers costs more memory than the bytes it saves.
    """
    return "websockets-sansio" if "websockets-sansio" in uvicorn.config.WS_PROTOCOLS else "auto"


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None
