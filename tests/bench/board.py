"""`python -m tests.bench.board [--backend sqlite|postgres|both] [--tasks 100000] [--runs 5]`

The live board in headless Chromium (Debian's `/usr/bin/chromium`, through `playwright`)
against a real `prickle serve`, on a project of `--tasks` tasks written in bulk by
tests/support/bulk.py (one INSERT ... SELECT through the storage layer's table, not 100,000 API
calls), spread over five states:

- **first screen**: from the navigation, with the token kept in the tab, to the frame after
  the first cards were drawn (the board's `metrics.firstScreen`: its head cursor, one
  request for each column's newest 30 and its count, the render); `--runs` reloads, median.
  Target: under 1 s.
- **catch-up**: the board's connection paused (`pauseConnection`), 1,000 moves made through
  the service layer (`accept_task` then `start_task` on 500 routed tasks, most of them not
  loaded by the board), the connection resumed: from its acknowledgement to the last missed
  event drawn (`metrics.drawnAt - metrics.reconnected.at`). Target: under 1 s.

The figures and the machine are printed; docs/performance.md records them.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from app.service import admin
from app.storage.migrate import upgrade
from app.storage.store import Store
from tests.bench.run import pg_admin
from tests.support.bulk import copy_tasks
from tests.support.factory import ALICE, CODER, call, give, setup
from tests.support.server import PG_ADMIN, Server, start

PROJECT = "big"
STATES = ("routed", "accepted", "working", "completed", "cancelled")  # by the copy's number
MOVED = 500  # routed tasks accepted and started while the board is away: 1,000 events
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]


async def seed(url: str, count: int) -> tuple[str, list[str]]:
    """alice's token; the routed tasks, oldest first."""
    store = Store(url)
    try:
        await upgrade(store.engine)
        await setup(store)
        template = await give(store, project=PROJECT, display_title="Big 0")
        started = time.perf_counter()
        ids = await copy_tasks(store, template.id, count - 1, "P", "Big", STATES)
        print(f"{count - 1} tasks written in bulk in {time.perf_counter() - started:.1f} s")
        routed = [i for n, i in enumerate(ids, start=1) if STATES[n % len(STATES)] == "routed"]
        return (await admin.provision_token(store, ALICE)).token, routed
    finally:
        await store.close()


async def _moves(url: str, task_ids: list[str]) -> None:
    store = Store(url)
    try:
        for task_id in task_ids:
            for verb in ("accept_task", "start_task"):
                await call(store, verb, CODER, task_id)
    finally:
        await store.close()


def _until(page: Any, script: str, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := page.evaluate(script)):
        if time.monotonic() > deadline:
            raise AssertionError(f"still false after {timeout}s: {script}")
        time.sleep(0.02)
    return value


def measure(server: Server, token: str, routed: list[str], runs: int) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
            page.goto(f"{server.base_url}/board")
            page.evaluate("(t) => sessionStorage.setItem('prickle.token', t)", token)
            screens = []
            for _ in range(runs):
                page.goto(f"{server.base_url}/board?project={PROJECT}")
                first = _until(page, "prickleBoard.metrics.firstScreen")
                assert first["from"] == "navigation", first
                screens.append(first)
            _until(page, "prickleBoard.status === 'live'")
            page.evaluate("prickleBoard.pauseConnection()")
            moved = routed[:MOVED]
            with ThreadPoolExecutor(1) as thread:  # playwright's loop runs in this one
                thread.submit(asyncio.run, _moves(server.database_url, moved)).result()
            last = moved[-1]
            page.evaluate("prickleBoard.resumeConnection()")
            _until(page, f"prickleBoard.stateOf('{last}') === 'working'")
            caught_up = page.evaluate(
                "prickleBoard.metrics.drawnAt - prickleBoard.metrics.reconnected.at"
            )
            return {
                "first screen ms": [round(s["ms"]) for s in screens],
                "cards on the first screen": screens[-1]["tasks"],
                "catch-up ms": round(caught_up),
                "cards after the catch-up": page.evaluate("prickleBoard.size"),
            }
        finally:
            browser.close()


async def run(url: str, logs: Path, count: int, runs: int) -> dict[str, Any]:
    token, routed = await seed(url, count)
    server = start(url, logs)
    try:
        return await asyncio.to_thread(measure, server, token, routed, runs)
    finally:
        server.stop()


async def main(backend: str, count: int, runs: int) -> None:
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    for name in ("sqlite", "postgres") if backend == "both" else (backend,):
        with tempfile.TemporaryDirectory(prefix="prickle-bench-") as tmp:
            if name == "sqlite":
                found = await run(f"sqlite+aiosqlite:///{tmp}/bench.db", Path(tmp), count, runs)
            else:
                db = f"prickle_bench_{uuid.uuid4().hex[:10]}"
                await pg_admin(f'CREATE DATABASE "{db}"')
                try:
                    base = PG_ADMIN.rsplit("/", 1)[0].replace(
                        "postgresql://", "postgresql+asyncpg://", 1
                    )
                    found = await run(f"{base}/{db}", Path(tmp), count, runs)
                finally:
                    await pg_admin(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
        screens = found["first screen ms"]
        print(f"== {name}, a project of {count} tasks")
        print(
            f"first screen: median {statistics.median(screens):.0f} ms ({screens}),"
            f" {found['cards on the first screen']} cards"
        )
        print(
            f"catch-up of {2 * MOVED} missed events: {found['catch-up ms']} ms,"
            f" {found['cards after the catch-up']} cards after it"
        )
        print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m tests.bench.board")
    parser.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument("--tasks", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(main(args.backend, args.tasks, args.runs))
