"""Several processes on one PostgreSQL database: servers started together, subscribers of
one server seeing moves made through another, four writer processes and a reader, a server
killed with SIGKILL mid-stream, and `--workers 2`.

Run in the PostgreSQL pass only (PRICKLE_TEST_BACKEND=postgres); each test has a database
of its own (`pg_database_url`).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from factory import PACKET
from processes import Subscription, check_replay, event_log, run_writers, seqs
from server import ROOT, Server, document, postgres_only, start

from app.storage.store import Store

pytestmark = postgres_only

NEXT = {"accepted": "stop_run", "waiting": "resume_run"}  # the cycle every test drives


def _accepted_tasks(server: Server, owner: str, count: int) -> list[str]:
    """`count` tasks handed by the owner to its agent `worker` and accepted (3 events each)."""
    worker = server.register(owner, "worker")
    ids = []
    for _ in range(count):
        variables = {"input": {"project": "load", "assignee": "admin/worker", "packet": PACKET}}
        task = server.run_data("mutations/handoff", variables, owner)["handoff"]
        server.run_data("mutations/accept_task", {"task_id": task["id"]}, worker)
        ids.append(task["id"])
    return ids


def _move(server: Server, task_id: str, state: str, owner: str) -> dict[str, Any]:
    verb = NEXT[state]
    return server.run_data(f"mutations/{verb}", {"task_id": task_id}, owner)[verb]


def _subscribe(server: Server, token: str, **variables: Any) -> Subscription:
    sub = Subscription(server.ws_url, token, variables)
    sub.start()
    assert sub.subscribed.wait(10)
    return sub


def _same_as_log(received: list[dict[str, Any]], log: list[dict[str, Any]]) -> None:
    """Every logged event received once, in seq order, matching the log."""
    assert seqs(received) == [e["seq"] for e in log]
    for got, logged in zip(received, log, strict=True):
        assert (got["task_id"], got["version"], got["to_state"]) == (
            logged["task_id"],
            logged["version"],
            logged["to_state"],
        )


def test_four_migrations_started_together_all_succeed(pg_database_url: str) -> None:
    """The URL from PRICKLE_DATABASE_URL alone; the advisory lock lets one migrate at a time."""
    env = {**os.environ, "PRICKLE_DATABASE_URL": pg_database_url}
    running = [
        subprocess.Popen(
            [sys.executable, "-m", "app.cli", "migrate"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    for process in running:
        out, err = process.communicate(timeout=60)
        assert process.returncode == 0, err
        assert out == f"migrated {pg_database_url}\n"


@pytest.fixture
def two_servers(pg_database_url: str, tmp_path: Path) -> Iterator[tuple[Server, Server]]:
    """Two `prickle serve` started together on one empty database: both migrate (one waits
    for the other's lock), and one of them prints the owner's token."""
    with ThreadPoolExecutor(2) as pool:
        starting = [pool.submit(start, pg_database_url, tmp_path / f"server-{i}") for i in (0, 1)]
    servers = [f.result() for f in starting if f.exception() is None]
    try:
        assert len(servers) == 2, [f.exception() for f in starting]
        yield servers[0], servers[1]
    finally:
        for server in servers:
            server.stop()


async def test_a_subscriber_of_one_server_receives_every_move_made_through_another(
    two_servers: tuple[Server, Server], pg_database_url: str
) -> None:
    first, second = two_servers
    owner = first.owner_token or second.owner_token
    assert owner is not None
    tasks = _accepted_tasks(first, owner, 3)
    watcher = _subscribe(second, owner, after="0")
    try:
        watcher.wait_for(9)  # the setup, replayed or live: the subscription is now live
        latencies = []
        states = dict.fromkeys(tasks, "accepted")
        for round_ in range(12):
            task_id = tasks[round_ % 3]
            began = time.monotonic()
            states[task_id] = _move(first, task_id, states[task_id], owner)["state"]
            await asyncio.to_thread(watcher.wait_for, 10 + round_)
            latencies.append(time.monotonic() - began)
        for round_ in range(30):  # a burst, not waiting for each
            task_id = tasks[round_ % 3]
            states[task_id] = _move(first, task_id, states[task_id], owner)["state"]
        received = await asyncio.to_thread(watcher.wait_for, 9 + 12 + 30)
    finally:
        watcher.close()
    _same_as_log(received, await event_log(pg_database_url))
    # woken by NOTIFY, not by the 1 s poll (which would make the median about 0.5 s)
    assert statistics.median(latencies) < 0.4, latencies
    print(
        "\nmutation sent -> its event on the other server: median "
        f"{statistics.median(latencies) * 1000:.0f} ms"
    )


async def test_four_writer_processes_and_a_reader_every_event_once_in_order_without_gap(
    start_server, pg_database_url: str
) -> None:  # type: ignore[no-untyped-def]
    server = start_server(url=pg_database_url)
    owner = server.owner_token
    tasks = _accepted_tasks(server, owner, 8)
    setup = 3 * len(tasks)
    reader = _subscribe(server, owner, after="0")
    tailed: list[int] = []
    done = asyncio.Event()
    try:
        reader.wait_for(setup)
        tailer = asyncio.create_task(_tail(pg_database_url, tailed, done))
        groups = [tasks[i::4] for i in range(4)]
        rounds = 25
        seconds = await asyncio.to_thread(run_writers, pg_database_url, "admin", groups, rounds)
        done.set()
        await tailer
        written = len(tasks) * rounds * 2
        assert len(tailed) == setup + written and tailed == sorted(set(tailed))
        received = await asyncio.to_thread(reader.wait_for, setup + written)
        await asyncio.sleep(0.3)  # nothing more may follow
        assert len(reader.events) == setup + written
    finally:
        reader.close()
    log = await event_log(pg_database_url)
    assert len(log) == setup + written
    _same_as_log(received, log)
    await check_replay(pg_database_url)
    print(f"\n4 writer processes: {written} events in {seconds:.2f}s, {written / seconds:.0f}/s")


async def _tail(url: str, seen: list[int], done: asyncio.Event) -> None:
    """A reader polling the log as fast as it can, through the event repository (the one
    place readers bound what they read): a seq committed after a higher one was read would
    appear here as a gap, since this reader never looks back."""
    store = Store(url)
    try:
        while True:
            finished = done.is_set()
            head = seen[-1] if seen else 0
            async with store.read() as tx:
                batch = await tx.events.after(head, 10_000)
            seen.extend(e.seq for e in batch)
            if finished and not batch:
                return
            await asyncio.sleep(0.001)
    finally:
        await store.close()


class Mover(threading.Thread):
    """Moves the tasks round and round over HTTP, against whichever server `base_url` names,
    recording each acknowledged move as (task id, version, state). After a failed request
    the outcome is unknown: it reads the task again before moving it."""

    def __init__(self, base_url: str, owner: str, tasks: list[str]) -> None:
        super().__init__(daemon=True)
        self.base_url, self.owner, self.tasks = base_url, owner, tasks
        self.acknowledged: list[tuple[str, int, str]] = []
        self.failed = 0
        self.stop = threading.Event()

    def _post(self, client: httpx.Client, name: str, variables: dict[str, Any]) -> dict[str, Any]:
        body = {"query": document(name), "variables": variables}
        headers = {"Authorization": f"Bearer {self.owner}"}
        response = client.post(f"{self.base_url}/graphql", json=body, headers=headers)
        data = response.json()
        assert not data.get("errors"), data
        return data["data"]

    def run(self) -> None:
        states: dict[str, str | None] = dict.fromkeys(self.tasks, "accepted")
        with httpx.Client(timeout=5) as client:
            while not self.stop.is_set():
                for task_id in self.tasks:
                    try:
                        if states[task_id] is None:
                            found = self._post(client, "queries/task", {"id": task_id})
                            states[task_id] = found["task"]["state"]
                        verb = NEXT[states[task_id]]  # type: ignore[index]
                        task = self._post(client, f"mutations/{verb}", {"task_id": task_id})[verb]
                    except httpx.TransportError:
                        states[task_id] = None
                        self.failed += 1
                        time.sleep(0.02)
                        continue
                    states[task_id] = task["state"]
                    self.acknowledged.append((task_id, task["version"], task["state"]))


async def test_a_server_killed_mid_stream_restarts_with_every_acknowledged_move_in_the_log(
    start_server, pg_database_url: str
) -> None:  # type: ignore[no-untyped-def]
    server = start_server(url=pg_database_url)
    owner = server.owner_token
    tasks = _accepted_tasks(server, owner, 4)
    mover = Mover(server.base_url, owner, tasks)
    mover.start()
    try:
        await _until(lambda: len(mover.acknowledged) >= 40, 20)
        server.process.kill()  # SIGKILL: no shutdown, transactions cut mid-flight
        killed = time.monotonic()
        server.process.wait(5)
        before = len(mover.acknowledged)
        restarted = await asyncio.to_thread(start_server, url=pg_database_url)
        recovered = time.monotonic() - killed
        mover.base_url = restarted.base_url
        await _until(lambda: len(mover.acknowledged) >= before + 40, 20)
    finally:
        mover.stop.set()
        mover.join(10)
    assert mover.failed > 0  # the kill did land mid-stream
    by_task = await check_replay(pg_database_url)
    logged = {(e["task_id"], e["version"], e["to_state"]) for es in by_task.values() for e in es}
    assert set(mover.acknowledged) <= logged
    print(f"\nkilled with {before} moves acknowledged; serving again after {recovered:.2f}s")


async def _until(condition, timeout: float) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


# --workers 2: which worker holds a connection, from /proc (Linux)


def _workers(server: Server) -> list[int]:
    pid = server.process.pid
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [int(c) for c in children if b"spawn_main" in Path(f"/proc/{c}/cmdline").read_bytes()]


def _worker_of(workers: list[int], server_port: int, client_port: int) -> int | None:
    """The worker process holding the server side of the connection from `client_port`."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local, remote, inode = fields[1], fields[2], fields[9]
            if int(local.rsplit(":", 1)[1], 16) == server_port and (
                int(remote.rsplit(":", 1)[1], 16) == client_port
            ):
                inodes.add(f"socket:[{inode}]")
    for pid in workers:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                if os.readlink(fd) in inodes:
                    return pid
            except OSError:
                continue
    return None


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="needs Linux /proc")
async def test_both_workers_of_a_two_worker_server_deliver_subscription_events(
    start_server, pg_database_url: str
) -> None:  # type: ignore[no-untyped-def]
    server = start_server("--workers", "2", url=pg_database_url)
    owner = server.owner_token
    await _until(lambda: server.output().count("Application startup complete") == 2, 30)
    workers = _workers(server)
    assert len(workers) == 2
    tasks = _accepted_tasks(server, owner, 2)
    port = int(server.base_url.rsplit(":", 1)[1])
    subs: dict[int, list[Subscription]] = {}
    try:
        while len(subs) < 2:
            assert sum(map(len, subs.values())) < 24, "every connection went to one worker"
            sub = _subscribe(server, owner, after="0")
            sub.wait_for(6)
            worker = _worker_of(workers, port, sub.local_port)
            assert worker in workers
            subs.setdefault(worker, []).append(sub)
        states = dict.fromkeys(tasks, "accepted")
        for round_ in range(20):
            task_id = tasks[round_ % 2]
            states[task_id] = _move(server, task_id, states[task_id], owner)["state"]
        log = await event_log(pg_database_url)
        for sub in (s for group in subs.values() for s in group):
            _same_as_log(await asyncio.to_thread(sub.wait_for, len(log)), log)
    finally:
        for sub in (s for group in subs.values() for s in group):
            sub.close()
