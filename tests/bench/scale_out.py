"""`python -m tests.bench.scale_out [--seconds S] [--processes 1,2,4] [--pgbouncer 1.18|1.24]`

Several `prickle serve` processes on one PostgreSQL (PRICKLE_TEST_PG), straight to it and
through a private PgBouncer in transaction mode (tests/support/pgbouncer.py), side by side in one
run: with the pooler, with LISTEN on `--database-direct-url` and without it (the hub polls).
Each process has `--database-connections` C. `--pgbouncer 1.24`: PgBouncer 1.24.1 built from
source, with `max_prepared_statements`; its setup `pgbouncer + direct URL, prepared` (asked
for by `--setup`) adds `--database-pooled-prepared`.

For each setup and number of processes P: a fresh database; P servers; 8 writers, each
cycling one task of its own through stop_run / resume_run for S seconds, spread over the
servers; one subscriber on each server. It reports the moves a second, the fan-out latency
(a move's request sent -> its event received by a subscriber, over every subscriber: median
and 95th percentile), and the most connections PostgreSQL saw on the database at once
(`pg_stat_activity`, sampled every 50 ms), with PgBouncer's own server connections among them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy.engine import make_url
from websockets.asyncio.client import connect as ws_connect

from tests.support.server import PG_ADMIN, Server, connect, document, fresh_pg_database, start

WRITERS = 8
CONNECTIONS = 8  # --database-connections of each process
BOUNCER_POOL = 20  # PgBouncer's server connections for the database
MOVE = "mutation($id: ID!) {{ {verb}(task_id: $id) {{ state version }} }}"
NEXT = {"accepted": "stop_run", "waiting": "resume_run"}
HANDOFF = "mutation($input: HandoffInput!) { handoff(input: $input) { id } }"
ACCEPT = "mutation($id: ID!) { accept_task(task_id: $id) { id state } }"


async def _post(http: httpx.AsyncClient, server: Server, token: str, query: str, **v: Any) -> Any:
    response = await http.post(
        server.graphql_url,
        json={"query": query, "variables": v},
        headers={"Authorization": f"Bearer {token}"},
    )
    body = response.json()
    assert "errors" not in body, body
    return body["data"]


async def _subscriber(
    server: Server,
    token: str,
    after: int,
    received: dict[tuple[str, int], list[float]],
    ready: asyncio.Event,
) -> None:
    async with ws_connect(server.ws_url, subprotocols=["graphql-transport-ws"]) as ws:  # type: ignore[list-item]
        await ws.send(
            json.dumps({"type": "connection_init", "payload": {"Authorization": f"Bearer {token}"}})
        )
        assert json.loads(await ws.recv())["type"] == "connection_ack"
        body = {"query": document("subscriptions/task_events"), "variables": {"after": str(after)}}
        await ws.send(json.dumps({"id": "1", "type": "subscribe", "payload": body}))
        ready.set()
        while True:
            message = json.loads(await ws.recv())
            if message["type"] == "ping":
                await ws.send(json.dumps({"type": "pong"}))
            elif message["type"] == "next":
                event = message["payload"]["data"]["task_events"]
                received.setdefault((event["task_id"], event["version"]), []).append(
                    time.monotonic()
                )


async def _connections(url: str, stop: asyncio.Event, seen: list[Counter[str]]) -> None:
    conn = await connect(url)
    try:
        while not stop.is_set():
            rows = await conn.fetch(
                "SELECT application_name FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            seen.append(Counter(r[0] or "?" for r in rows))
            await asyncio.sleep(0.05)
    finally:
        await conn.close()


async def one_run(
    setup: str, processes: int, seconds: float, bouncer: Any | None, logs: Path
) -> dict[str, Any]:
    async for url in fresh_pg_database():
        args: list[str] = ["--database-connections", str(CONNECTIONS), "--rate-limit", "0"]
        served = url
        if bouncer is not None:
            served = bouncer.url_of(url)
            args.append("--database-pooled")
            if setup.startswith("pgbouncer + direct URL"):
                args += ["--database-direct-url", url]
            if setup.endswith(", prepared"):
                args.append("--database-pooled-prepared")
        servers: list[Server] = []
        try:
            for i in range(processes):  # one after the other: a busy machine starts them slowly
                servers.append(
                    await asyncio.to_thread(start, served, logs / f"{processes}-{i}", *args)
                )
            return await _measure(servers, url, seconds)
        finally:
            for server in servers:
                await asyncio.to_thread(server.stop)
    raise AssertionError("no database")


async def _measure(servers: list[Server], url: str, seconds: float) -> dict[str, Any]:
    owner = servers[0].owner_token
    assert owner is not None
    async with httpx.AsyncClient(timeout=30) as http:
        worker = await asyncio.to_thread(servers[0].register, owner, "worker")
        tasks = []
        for _ in range(WRITERS):
            packet = {"input": {"project": "load", "assignee": "admin/worker", "packet": _packet()}}
            made = await _post(http, servers[0], owner, HANDOFF, **packet)
            task_id = made["handoff"]["id"]
            await _post(http, servers[0], worker, ACCEPT, id=task_id)
            tasks.append(task_id)
        conn = await connect(url)
        last = await conn.fetchval("SELECT coalesce(max(seq), 0) FROM events")
        await conn.close()
        received: list[dict[tuple[str, int], list[float]]] = [{} for _ in servers]
        readies = [asyncio.Event() for _ in servers]
        subscribers = [
            asyncio.create_task(_subscriber(s, owner, last, received[i], readies[i]))
            for i, s in enumerate(servers)
        ]
        for ready in readies:
            await ready.wait()
        await asyncio.sleep(0.5)  # subscribed: live from here
        stop = asyncio.Event()
        seen: list[Counter[str]] = []
        sampler = asyncio.create_task(_connections(url, stop, seen))
        sent: dict[tuple[str, int], float] = {}
        moves = 0
        deadline = time.monotonic() + seconds

        async def writer(i: int) -> None:
            nonlocal moves
            server, task_id, state = servers[i % len(servers)], tasks[i], "accepted"
            while time.monotonic() < deadline:
                verb = NEXT[state]
                began = time.monotonic()
                moved = (await _post(http, server, owner, MOVE.format(verb=verb), id=task_id))[verb]
                sent[(task_id, moved["version"])] = began
                state = moved["state"]
                moves += 1

        began = time.monotonic()
        await asyncio.gather(*(writer(i) for i in range(WRITERS)))
        elapsed = time.monotonic() - began
        # every subscriber receives every move (the wait ends when they have)
        wait_until = time.monotonic() + 30
        while time.monotonic() < wait_until and not all(
            all(key in got for key in sent) for got in received
        ):
            await asyncio.sleep(0.05)
        stop.set()
        await sampler
        for task in subscribers:
            task.cancel()
        await asyncio.gather(*subscribers, return_exceptions=True)
    latencies = [got[key][0] - at for got in received for key, at in sent.items() if key in got]
    missing = sum(1 for got in received for key in sent if key not in got)
    twice = sum(1 for got in received for key in sent if len(got.get(key, [])) > 1)
    peak = max(seen, key=lambda c: sum(c.values())) if seen else Counter()
    return {
        "moves_per_s": moves / elapsed,
        "fanout_median_ms": statistics.median(latencies) * 1000 if latencies else None,
        "fanout_p95_ms": _p95(latencies) * 1000 if latencies else None,
        "missing": missing,
        "twice": twice,
        "pg_connections": sum(peak.values()),
        "by_application": dict(peak),
    }


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def _packet() -> dict[str, Any]:
    from tests.support.factory import PACKET

    return PACKET


SETUPS = ("direct", "pgbouncer + direct URL", "pgbouncer, no direct URL")
PREPARED = "pgbouncer + direct URL, prepared"  # PgBouncer 1.21 or later only


async def main_async(
    seconds: float,
    counts: list[int],
    logs: str | None = None,
    setups: tuple[str, ...] = SETUPS,
    version: str | None = None,
) -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "support"))  # as pytest has it
    from pgbouncer import DEBIAN, private_pgbouncer

    port = make_url(PG_ADMIN).port or 5432
    rows = []
    with ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="prickle-scale-out-"))
        if logs:
            tmp = logs
        bouncer = stack.enter_context(
            private_pgbouncer(port, pool_size=BOUNCER_POOL, version=version or DEBIAN)
        )
        for processes in counts:
            for setup in setups:
                try:
                    found = await one_run(
                        setup,
                        processes,
                        seconds,
                        None if setup == "direct" else bouncer,
                        Path(tmp) / setup.replace(" ", "_").replace(",", ""),
                    )
                except Exception as error:  # a server that did not start: said, and on
                    print(processes, setup, "failed:", str(error).splitlines()[0], flush=True)
                    continue
                rows.append((processes, setup, found))
                print(processes, setup, json.dumps(found), flush=True)
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
    print(f"\nload average at the end: {' '.join(load)}")
    print(
        "| processes | setup | moves/s | fan-out median ms | fan-out p95 ms | "
        "PostgreSQL connections (peak) | of which |"
    )
    print("|---|---|---|---|---|---|---|")
    for processes, setup, found in rows:
        apps = ", ".join(f"{k or '?'} {v}" for k, v in sorted(found["by_application"].items()))
        print(
            f"| {processes} | {setup} | {found['moves_per_s']:.0f} | "
            f"{found['fanout_median_ms']:.0f} | {found['fanout_p95_ms']:.0f} | "
            f"{found['pg_connections']} | {apps} |"
        )
    lost = sum(f["missing"] + f["twice"] for _, _, f in rows)
    print(f"\nevents missing or received twice, over every subscriber of every run: {lost}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--processes", default="1,2,4")
    parser.add_argument("--logs", default=None, help="keep the servers' logs in this directory")
    parser.add_argument(
        "--setup", choices=(*SETUPS, PREPARED), action="append", help="only these (repeatable)"
    )
    parser.add_argument("--pgbouncer", choices=("1.18", "1.24"), default="1.18")
    args = parser.parse_args()
    counts = [int(p) for p in args.processes.split(",")]
    setups = tuple(args.setup) if args.setup else SETUPS
    asyncio.run(main_async(args.seconds, counts, args.logs, setups, args.pgbouncer))


if __name__ == "__main__":
    main()
