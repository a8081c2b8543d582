"""`python -m tests.bench.webhooks [--events 2000] [--webhooks 100]`

Webhook delivery from one `prickle serve` to a receiver on 127.0.0.1 that answers 200 at
once (tests/support/receiver.py, a threaded http.server). The database is a scratch one on the
backend PRICKLE_TEST_BACKEND names: SQLite (a file, the default) or PostgreSQL (a database
on PRICKLE_TEST_PG, dropped after).

1. latency: tasks handed off through the API one every 0.1 s (two events each); for each
   event, from its `at` (written in the committing transaction) to the moment the receiver
   has it, p50 and p99;
2. throughput to one endpoint: a backlog of `--events` events (made while the receiver
   answers 503 and the webhook waits out its 2 s backoff), then delivered at once: events/s
   from the first 2xx to the last, and the server's CPU per delivery (on PostgreSQL with its
   backends' CPU counted in, as in tests/bench/bench_server.py);
3. `--webhooks` webhooks at once, all matching every event: events made one at a time;
   deliveries/s and the latency p50/p99 over every (webhook, event).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from app.domain.clock import parse_rfc3339
from app.domain.principals import person
from app.service import creation
from app.service.inputs import HandoffInput
from app.storage.store import Store
from tests.bench.bench_server import cpu_seconds
from tests.support.receiver import Receiver
from tests.support.server import BACKEND, Server, module_database, start

PACKET = {"task": "ping", "deliverable_type": "doc", "acceptance_criteria": ["pinged"]}
ENV = {"PRICKLE_WEBHOOK_BACKOFF": "2", "PRICKLE_RATE_LIMIT": "0"}


class Timed(Receiver):
    """A receiver that also notes when each request arrived."""

    def __init__(self) -> None:
        super().__init__()
        self.arrived: list[float] = []
        answer = self.answer

        def timed(request: Any) -> int:
            status = answer(request)
            if 200 <= status < 300:
                with self.lock:
                    self.arrived.append(time.time())
            return status

        self.answer = timed  # type: ignore[method-assign]


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


def latencies(receiver: Timed) -> list[float]:
    with receiver.lock:
        pairs = list(zip(receiver.received, receiver.arrived, strict=False))
    return [
        arrived - parse_rfc3339(r.data["at"]).timestamp()
        for r, arrived in pairs
        if 200 <= r.status < 300
    ]


def create(server: Server, url: str) -> str:
    variables = {"input": {"url": url}}
    return server.run_data("mutations/create_webhook", variables)["create_webhook"]["webhook"]["id"]


def hand_off(server: Server, count: int, pause: float = 0.0) -> None:
    for _ in range(count):
        task = {"project": "bench", "assignee": "admin/worker", "packet": PACKET}
        server.run_data("mutations/handoff", {"input": task})
        time.sleep(pause)


async def backlog(url: str, count: int) -> None:
    store = Store(url)
    try:
        for _ in range(count // 2):
            inp = HandoffInput(project="bench", assignee="admin/worker", packet=dict(PACKET))
            await creation.handoff(store, person("admin"), inp)
    finally:
        await store.close()


def cpu_now(server: Server, url: str) -> dict[int, float]:
    """CPU seconds so far of the server and, on PostgreSQL, of its database's backends."""
    pids = [server.process.pid]
    if not url.startswith("sqlite"):
        pids += asyncio.run(_backends(url))
    return {pid: cpu_seconds(pid) for pid in pids}


async def _backends(url: str) -> list[int]:
    import asyncpg

    conn = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://", 1))
    try:
        sql = (
            "SELECT pid FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return [row[0] for row in await conn.fetch(sql)]
    finally:
        await conn.close()


def wait(receivers: list[Timed], n: int, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while sum(len(r.acknowledged()) for r in receivers) < n:
        assert time.monotonic() < deadline, "deliveries did not finish"
        time.sleep(0.01)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--webhooks", type=int, default=100)
    parser.add_argument("--latency-tasks", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory, module_database(Path(directory)) as url:
        print(f"backend: {BACKEND}")
        server = start(url, Path(directory) / "logs", "--allow-private-webhooks", env=ENV)
        try:
            server.register(server.owner_token, "worker")
            run(server, url, args)
        finally:
            server.stop()


def run(server: Server, url: str, args: argparse.Namespace) -> None:
    with Timed() as one:
        webhook = create(server, one.url)
        hand_off(server, args.latency_tasks, pause=0.1)  # paced: no backlog builds up
        wait([one], 2 * args.latency_tasks)
        found = latencies(one)
        print(
            f"latency, one webhook ({len(found)} events): p50 {percentile(found, 0.5) * 1000:.1f}"
            f" ms, p99 {percentile(found, 0.99) * 1000:.1f} ms"
        )
        server.run_data("mutations/delete_webhook", {"id": webhook})
    with Timed() as one:
        one.status = 503
        create(server, one.url)
        writer = threading.Thread(target=lambda: asyncio.run(backlog(url, args.events)))
        writer.start()
        writer.join()
        before = cpu_now(server, url)
        one.status = 200
        wait([one], args.events)
        after = cpu_now(server, url)
        spread = one.arrived[-1] - one.arrived[0]
        used = sum(t - before.get(pid, 0.0) for pid, t in after.items())
        print(
            f"throughput, one endpoint: {args.events} events in {spread:.2f} s, "
            f"{args.events / spread:.0f} events/s, server CPU "
            f"{used * 1000 / args.events:.2f} ms per delivery"
        )
    receivers = [Timed() for _ in range(args.webhooks)]
    for r in receivers:
        r.__enter__()
    try:
        for r in receivers:
            create(server, r.url)
        started = time.time()
        tasks = 20
        hand_off(server, tasks)
        wait(receivers, args.webhooks * 2 * tasks)
        took = max(r.arrived[-1] for r in receivers) - started
        found = [x for r in receivers for x in latencies(r)]
        print(
            f"{args.webhooks} webhooks, {2 * tasks} events each: {len(found)} deliveries in "
            f"{took:.2f} s ({len(found) / took:.0f}/s); latency p50 "
            f"{statistics.median(found) * 1000:.0f} ms, p99 {percentile(found, 0.99) * 1000:.0f} ms"
        )
    finally:
        for r in receivers:
            r.__exit__()


if __name__ == "__main__":
    main()
