"""`python -m tests.bench.a2a_waiting [--backend sqlite|postgres|both] [--count 1000] [--hold 10]`

What a blocking A2A `SendMessage` costs while it waits, beside an idle stream: one
`prickle serve` per phase (a scratch database: SQLite, or PostgreSQL on PRICKLE_TEST_PG,
dropped after; `--a2a-send-wait 3600`, so that nothing ends by its bound), one client
process on 127.0.0.1 holding `--count` requests open at once, each on its own connection:

- waiting sends: `SendMessage` without `returnImmediately`, each a new task nobody works
  on, so each waits (counted as open once the server lists every task they made);
- idle subscriptions: `SubscribeToTask` (SSE) on as many tasks made before (each open
  once its first event, the task, has arrived).

For each phase: the server's RSS growth per open request (KiB), its CPU per request opened
(ms; a waiting send's includes making its task: the handoff alone, measured on the tasks
made for the other phase, is printed beside), and its CPU while they are held, `--hold`
seconds (per cent of one core). Then the client drops every request at once and the server
is asked for a task: the answer's time says whether it has let go of them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

from tests.bench.a2a import cpu_now
from tests.bench.bench_server import rss_kib
from tests.support.server import BACKEND, Server, module_database, start

ENV = {"PRICKLE_RATE_LIMIT": "0", "PRICKLE_STREAMS_PER_PRINCIPAL": "100000"}
HEADERS = {"A2A-Version": "1.0"}


def said(project: str) -> dict[str, Any]:
    return {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "contextId": project,
        "parts": [{"text": "wait for me"}],
    }


def rpc(method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


async def listed(http: httpx.AsyncClient, base: str, project: str) -> int:
    answer = (await http.post(base, json=rpc("ListTasks", {"contextId": project}))).json()
    return int(answer["result"].get("totalSize", 0))


async def until_listed(
    http: httpx.AsyncClient, base: str, project: str, sends: list[asyncio.Task[Any]]
) -> None:
    """Until the server lists a task for each send (a send answered meanwhile: refused)."""
    while await listed(http, base, project) < len(sends):
        answered = [s for s in sends if s.done()]
        assert not answered, f"a send was answered before its bound: {answered[0].result().text}"
        await asyncio.sleep(0.2)


async def waiting_sends(
    http: httpx.AsyncClient, base: str, count: int, figures: dict[str, Any], measure: Any
) -> list[asyncio.Task[Any]]:
    project = "waiting"
    sends = [
        asyncio.create_task(http.post(base, json=rpc("SendMessage", {"message": said(project)})))
        for _ in range(count)
    ]
    await until_listed(http, base, project, sends)
    await asyncio.sleep(1)  # the last ones past their handoff, into their wait
    assert not any(s.done() for s in sends), "a send answered before its bound"
    return sends


async def subscriptions(
    http: httpx.AsyncClient, base: str, count: int, figures: dict[str, Any], measure: Any
) -> list[asyncio.Task[Any]]:
    made = []
    cpu = (await measure())[1]
    now = {"returnImmediately": True}
    for _ in range(count):
        params = {"message": said("idle"), "configuration": now}
        answer = (await http.post(base, json=rpc("SendMessage", params))).json()
        made.append(answer["result"]["task"]["id"])
    figures["handoff_cpu_ms"] = ((await measure())[1] - cpu) * 1000 / count
    figures["before"] = await measure()
    opened: list[asyncio.Event] = []

    async def follow(task_id: str, first: asyncio.Event) -> None:
        body = rpc("SubscribeToTask", {"id": task_id})
        async with http.stream("POST", base, json=body) as stream:
            async for line in stream.aiter_lines():
                if line.startswith("data:"):
                    first.set()

    streams = []
    for task_id in made:
        first = asyncio.Event()
        opened.append(first)
        streams.append(asyncio.create_task(follow(task_id, first)))
    await asyncio.gather(*(o.wait() for o in opened))
    return streams


async def phase(server: Server, url: str, kind: str, count: int, hold: float) -> dict[str, Any]:
    server.register(server.owner_token, "worker")
    base = f"{server.base_url}/a2a/admin/worker"
    headers = {**HEADERS, "Authorization": f"Bearer {server.owner_token}"}
    limits = httpx.Limits(max_connections=count + 20, max_keepalive_connections=count + 20)
    figures: dict[str, Any] = {}

    async def measure() -> tuple[int, float]:  # cpu_now runs its own loop (PostgreSQL's pids)
        return rss_kib(server.process.pid), await asyncio.to_thread(cpu_now, server, url)

    async with httpx.AsyncClient(headers=headers, timeout=None, limits=limits) as http:
        await listed(http, base, "warm")  # the A2A routes are built on their first request
        figures["before"] = await measure()
        opener = waiting_sends if kind == "waiting" else subscriptions
        held = await opener(http, base, count, figures, measure)
        (rss0, cpu0), (rss1, cpu1) = figures.pop("before"), await measure()
        await asyncio.sleep(hold)
        rss2, cpu2 = await measure()
        for request in held:
            request.cancel()
        await asyncio.gather(*held, return_exceptions=True)
    async with httpx.AsyncClient(headers=headers, timeout=None) as http:
        started = time.perf_counter()
        await listed(http, base, "after")
        answered_ms = (time.perf_counter() - started) * 1000
    return {
        **figures,
        "rss_per_request_kib": (rss1 - rss0) / count,
        "cpu_per_open_ms": (cpu1 - cpu0) * 1000 / count,
        "cpu_held_percent": (cpu2 - cpu1) * 100 / hold,
        "rss_held_growth_kib": rss2 - rss1,
        "after_drop_ms": answered_ms,
    }


def one(kind: str, count: int, hold: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as directory, module_database(Path(directory)) as url:
        server = start(url, Path(directory) / "logs", "--a2a-send-wait", "3600", env=ENV)
        try:
            return asyncio.run(phase(server, url, kind, count, hold))
        finally:
            server.stop()


def table(results: dict[str, dict[str, dict[str, Any]]], count: int) -> str:
    lines = [
        f"| backend | {count:,} held at once | RSS per request (KiB) | server CPU per request "
        "opened (ms) | server CPU while held (% of a core) | a request after they drop (ms) |",
        "|---|---|---|---|---|---|",
    ]
    for backend, phases in results.items():
        for kind, name in (("waiting", "waiting sends"), ("idle", "idle SubscribeToTask")):
            f = phases[kind]
            opened = f"{f['cpu_per_open_ms']:.2f}"
            if "handoff_cpu_ms" in f:
                opened += f" (their tasks' handoffs before: {f['handoff_cpu_ms']:.2f})"
            lines.append(
                f"| {backend} | {name} | {f['rss_per_request_kib']:.1f} | {opened} "
                f"| {f['cpu_held_percent']:.2f} | {f['after_drop_ms']:.1f} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default=BACKEND)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--hold", type=float, default=10.0)
    parser.add_argument("--json", choices=["waiting", "idle"], help="one phase, as JSON")
    args = parser.parse_args()
    if args.json:
        print(json.dumps(one(args.json, args.count, args.hold)))
        return
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    results: dict[str, dict[str, dict[str, Any]]] = {}
    for backend in backends:
        env = {**os.environ, "PRICKLE_TEST_BACKEND": backend}
        for kind in ("waiting", "idle"):
            command = [sys.executable, "-m", "tests.bench.a2a_waiting", "--json", kind]
            command += ["--count", str(args.count), "--hold", str(args.hold)]
            done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
            assert done.returncode == 0, done.stderr[-3000:]
            results.setdefault(backend, {})[kind] = json.loads(done.stdout.strip().splitlines()[-1])
    print(table(results, args.count))


if __name__ == "__main__":
    main()
