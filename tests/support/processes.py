"""Helpers for the PostgreSQL tests with several processes on one database.

- `Subscription`: a graphql-transport-ws subscription to `task_events` on a running
  server, read by a thread into `events`.
- `run_writers(url, owner, groups, rounds)`: writer processes, one per group of task ids,
  each cycling its tasks through stop_run / resume_run with the service verbs (run as
  `python tests/support/processes.py URL OWNER ROUNDS TASK...`).
- `event_log(url)` and `check_replay(url)`: the log read back, and every task checked
  against the fold of its own events.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from websockets.sync.client import connect

ROOT = Path(__file__).resolve().parents[2]


class Subscription(threading.Thread):
    """`task_events(**variables)` over graphql-transport-ws, as `token`, on its own thread."""

    def __init__(self, ws_url: str, token: str, variables: dict[str, Any] | None = None) -> None:
        super().__init__(daemon=True)
        self.ws_url, self.token, self.variables = ws_url, token, variables or {}
        self.events: list[dict[str, Any]] = []
        self.failures: list[Any] = []
        self.subscribed = threading.Event()
        self.local_port = 0
        self._closing = threading.Event()

    def run(self) -> None:
        from server import document

        try:
            with connect(self.ws_url, subprotocols=["graphql-transport-ws"], open_timeout=10) as ws:  # type: ignore[list-item]
                self.local_port = ws.local_address[1]
                payload = {"Authorization": f"Bearer {self.token}"}
                ws.send(json.dumps({"type": "connection_init", "payload": payload}))
                assert json.loads(ws.recv(timeout=10))["type"] == "connection_ack"
                query = document("subscriptions/task_events")
                body = {"query": query, "variables": self.variables}
                ws.send(json.dumps({"id": "1", "type": "subscribe", "payload": body}))
                self.subscribed.set()
                self._read(ws)
        except Exception as error:
            self.failures.append(repr(error))
            self.subscribed.set()

    def _read(self, ws: Any) -> None:
        while not self._closing.is_set():
            try:
                message = json.loads(ws.recv(timeout=0.2))
            except TimeoutError:
                continue
            if message["type"] == "ping":
                ws.send(json.dumps({"type": "pong"}))
            elif message["type"] == "next" and not message["payload"].get("errors"):
                self.events.append(message["payload"]["data"]["task_events"])
            elif message["type"] != "pong":
                self.failures.append(message)
                return

    def wait_for(self, count: int, timeout: float = 20) -> list[dict[str, Any]]:
        """The first `count` events, once they have arrived."""
        deadline = time.monotonic() + timeout
        while len(self.events) < count and not self.failures and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not self.failures, self.failures
        assert len(self.events) >= count, f"{len(self.events)} of {count} events in {timeout}s"
        return self.events[:count]

    def close(self) -> None:
        self._closing.set()
        self.join(timeout=5)


def seqs(events: list[dict[str, Any]]) -> list[int]:
    return [e["seq"] for e in events]


# writer processes


def run_writers(
    url: str, owner: str, groups: list[list[str]], rounds: int, timeout: float = 120
) -> float:
    """Start one writer process per group at once; the seconds until all have finished."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    began = time.monotonic()
    running = [
        subprocess.Popen(
            [sys.executable, __file__, url, owner, str(rounds), *group],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for group in groups
    ]
    for process in running:
        _, err = process.communicate(timeout=timeout)
        assert process.returncode == 0, err
    return time.monotonic() - began


async def _write(url: str, owner: str, rounds: int, task_ids: list[str]) -> None:
    """Each task `rounds` times through stop_run then resume_run, all tasks concurrently."""
    from app.domain.principals import person
    from app.service import verbs
    from app.storage.store import Store

    store = Store(url)

    async def cycle(task_id: str) -> None:
        for _ in range(rounds):
            await verbs.stop_run(store, person(owner), task_id)
            await verbs.resume_run(store, person(owner), task_id)

    try:
        await asyncio.gather(*(cycle(t) for t in task_ids))
    finally:
        await store.close()


# the log read back


async def event_log(url: str) -> list[dict[str, Any]]:
    """Every event row, in seq order."""
    from server import connect

    conn = await connect(url)
    try:
        rows = await conn.fetch(
            "SELECT seq, task_id, from_state, to_state, version FROM events ORDER BY seq"
        )
    finally:
        await conn.close()
    return [dict(r) for r in rows]


async def check_replay(url: str) -> dict[str, list[dict[str, Any]]]:
    """Every task's state is the fold of its events in seq order, and its version their
    number; the log's seqs increase. Each task's events, by task id."""
    from server import connect

    log = await event_log(url)
    seqs = [e["seq"] for e in log]  # increasing; a rolled-back writer leaves its seqs unused
    assert seqs == sorted(set(seqs))
    by_task: dict[str, list[dict[str, Any]]] = {}
    for event in log:
        by_task.setdefault(event["task_id"], []).append(event)
    conn = await connect(url)
    try:
        tasks = {r["id"]: r for r in await conn.fetch("SELECT id, state, version FROM tasks")}
    finally:
        await conn.close()
    assert set(tasks) == set(by_task)
    for task_id, events in by_task.items():
        state = None
        for event in events:
            assert event["from_state"] == state, (task_id, event)
            state = event["to_state"]
        assert (tasks[task_id]["state"], tasks[task_id]["version"]) == (state, len(events))
        assert [e["version"] for e in events] == list(range(1, len(events) + 1))
    return by_task


if __name__ == "__main__":
    _url, _owner, _rounds, *_tasks = sys.argv[1:]
    asyncio.run(_write(_url, _owner, int(_rounds), _tasks))
