"""`prickle serve`: migrate, create the first owner on an empty database, run uvicorn."""

from __future__ import annotations

import asyncio
import importlib.util
import shutil
import signal
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import Any

import uvicorn

from app import cors
from app.api.persisted import load as load_manifest
from app.domain.principals import person
from app.observability.logs import default_format, log_config
from app.service.admin import provision_token
from app.settings import Settings, hand_to_workers, use
from app.storage.engine import is_sqlite, startup_settings
from app.storage.migrate import upgrade
from app.storage.pooling import check
from app.storage.replica import check as check_read
from app.storage.store import Store

FACTORY = "app.main:app_from_environment"


def serve(settings: Settings) -> int:
    """Run the server with `settings` (`app.settings`: each value already checked). A line
    per request (`access_log`) is off unless asked for: under load, formatting and writing it
    cost the server about a twentieth of its CPU (docs/performance.md). Its workers are
    handed the same settings (`hand_to_workers`), with the trusted documents' path made
    absolute and the directory of every worker's metrics."""
    try:
        cors.Origins.parse(settings.cors_origins)
        if settings.trusted_documents:
            load_manifest(Path(settings.trusted_documents))
    except ValueError as error:
        print(f"prickle: {error}", file=sys.stderr)
        return 2
    if settings.workers < 1:
        print("prickle: --workers must be at least 1", file=sys.stderr)
        return 2
    if settings.workers > 1 and is_sqlite(settings.database_url):
        print(
            "prickle: --workers above 1 needs PostgreSQL: SQLite has one writer and no way to "
            "tell other processes' event hubs about commits; use --database-url "
            "postgresql+asyncpg://... or --workers 1",
            file=sys.stderr,
        )
        return 2
    handle = person(settings.owner).id  # refuse a malformed --owner before the database
    token = asyncio.run(_prepare(settings.database_url, handle))
    if token is not None:
        print(f"owner token for {handle}:", flush=True)
        print(token, flush=True)
    trusted = settings.trusted_documents
    settings = replace(
        settings,
        trusted_documents=str(Path(trusted).resolve()) if trusted else None,
        # operating it (docs/operations.md): the metrics of every worker
        metrics_directory=tempfile.mkdtemp(prefix="prickle-metrics-"),
    )
    use(settings)
    hand_to_workers(settings)
    signal.signal(signal.SIGTERM, _exit_cleanly)
    logging = log_config(settings.log_format or default_format())
    try:
        _run(settings.host, settings.port, settings.workers, logging, settings.graceful_timeout)
    finally:
        shutil.rmtree(str(settings.metrics_directory), ignore_errors=True)
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
        access_log=False,  # the app's own request line (`RequestLog`)
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
