"""What a database outage costs under load: a real `prickle serve` on a private PostgreSQL
cluster (tests/support/pg_cluster.py), writers handing off and accepting tasks, while the cluster
is restarted fast, restarted as after a crash (immediate), has its backends killed, and is
stopped for a few seconds. Run by hand:

    .venv/bin/python -m tests.bench.outage [--rounds 3] [--writers 8] [--workers 1]

For each kind of outage (medians over the rounds): how long until `/readyz` answers 503
(a stop) and 200 again after the database accepts connections, until the first move
succeeds, and until the server's LISTEN connection is open again; and over the whole run:
the acknowledged moves, how many of them the log lacks (lost: must be 0), the refusals,
and those with an unknown outcome and how many of those had in fact committed.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import asyncpg
import httpx

TESTS = Path(__file__).resolve().parent.parent / "support"
sys.path.insert(0, str(TESTS))

from factory import PACKET  # noqa: E402
from pg_cluster import Cluster, private_cluster  # noqa: E402
from server import Server, start  # noqa: E402

HANDOFF = "mutation($input: HandoffInput!) { handoff(input: $input) { id } }"
ACCEPT = "mutation($id: ID!) { accept_task(task_id: $id) { id } }"
LISTENING = "SELECT backend_start FROM pg_stat_activity WHERE application_name = 'prickle-listen'"


class Load:
    def __init__(self, server: Server, owner: str, agent: str, writers: int) -> None:
        self.server, self.owner, self.agent, self.writers = server, owner, agent, writers
        self.acknowledged: list[tuple[str, str, float]] = []  # (task id, verb, when)
        self.refusals: list[dict[str, Any]] = []
        # refused moves by outcome: (verb, the task's id or, for a handoff, its packet's task)
        self.refused: dict[str, list[tuple[str, str]]] = {"none": [], "unknown": []}
        self.running = True

    async def run(self) -> None:
        async with httpx.AsyncClient(timeout=60) as http:
            await asyncio.gather(*(self._writer(http, n) for n in range(self.writers)))

    async def _writer(self, http: httpx.AsyncClient, n: int) -> None:
        made = 0
        while self.running:
            made += 1
            packet = {**PACKET, "task": f"writer {n} task {made}"}
            task = {"project": "outage", "assignee": "admin/coder", "packet": packet}
            found = await self._send(http, HANDOFF, {"input": task}, self.owner, "handoff")
            if found is not None:
                await self._send(http, ACCEPT, {"id": found["id"]}, self.agent, "accept_task")

    async def _send(
        self, http: httpx.AsyncClient, query: str, variables: dict[str, Any], token: str, verb: str
    ) -> dict[str, Any] | None:
        headers = {"Authorization": f"Bearer {token}"}
        body = {"query": query, "variables": variables}
        try:
            response = await http.post(self.server.graphql_url, json=body, headers=headers)
            answer = response.json()
        except (httpx.HTTPError, ValueError) as error:
            self.refusals.append({"code": f"transport: {type(error).__name__}"})
            return None
        if answer.get("errors"):
            extensions = answer["errors"][0]["extensions"]
            self.refusals.append(extensions)
            outcome = str(extensions.get("outcome"))
            if outcome in self.refused:
                key = (
                    variables["id"]
                    if verb == "accept_task"
                    else variables["input"]["packet"]["task"]
                )
                self.refused[outcome].append((verb, key))
            await asyncio.sleep(0.05)
            return None
        found: dict[str, Any] = answer["data"][verb]
        self.acknowledged.append((found["id"], verb, time.monotonic()))
        return found


async def _poll(http: httpx.AsyncClient, path: str, status: int, since: float) -> float:
    while (await http.get(path)).status_code != status:
        await asyncio.sleep(0.01)
    return time.monotonic() - since


async def _first_move(load: Load, since: float) -> float:
    while not any(when > since for _, _, when in load.acknowledged[-50:]):
        await asyncio.sleep(0.01)
    return next(when for _, _, when in load.acknowledged if when > since) - since


async def _listen_back(cluster: Cluster, accepting_wall: float, workers: int) -> float:
    """Until every worker's LISTEN connection is open again."""
    while True:
        try:
            conn = await asyncpg.connect(cluster.dsn, timeout=2)
            try:
                rows = await conn.fetch(LISTENING)
            finally:
                await conn.close()
            opened = [r["backend_start"].timestamp() for r in rows]
            fresh = [t for t in opened if t >= accepting_wall - 0.5]
            if len(fresh) >= workers:
                return max(max(fresh) - accepting_wall, 0.0)
        except (OSError, asyncpg.PostgresError):
            pass
        await asyncio.sleep(0.05)


async def _kill(cluster: Cluster) -> None:
    conn = await asyncpg.connect(cluster.dsn)
    try:
        await conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = 'prickle' AND pid <> pg_backend_pid()"
        )
    finally:
        await conn.close()


async def _outage(
    kind: str, cluster: Cluster, http: httpx.AsyncClient, load: Load, stopped: float, workers: int
) -> dict[str, float]:
    figures: dict[str, float] = {}
    began = time.monotonic()
    if kind == "kill backends":
        await _kill(cluster)
        accepting, wall = time.monotonic(), time.time()
    else:
        mode = "immediate" if kind == "restart immediate" else "fast"
        await asyncio.to_thread(cluster.stop, mode)
        if kind == "stopped":
            figures["readyz 503 after the stop"] = await _poll(http, "/readyz", 503, began)
            await asyncio.sleep(stopped)
        accepting = await asyncio.to_thread(cluster.start)
        wall = time.time() - (time.monotonic() - accepting)
    figures["readyz 200 after it accepts"] = await _poll(http, "/readyz", 200, accepting)
    figures["first move after it accepts"] = await _first_move(load, accepting)
    figures["LISTEN back after it accepts"] = await _listen_back(cluster, wall, workers)
    await asyncio.sleep(1.0)
    return figures


async def _committed(cluster: Cluster, load: Load) -> tuple[int, dict[str, int]]:
    """Acknowledged moves the log lacks; refused moves that had committed, by outcome."""
    conn = await asyncpg.connect(cluster.dsn)
    try:
        rows = await conn.fetch("SELECT task_id, verb FROM events WHERE project = 'outage'")
        texts = await conn.fetch("SELECT packet->>'task' AS task FROM tasks")
    finally:
        await conn.close()
    logged = {(r["task_id"], r["verb"]) for r in rows}
    lost = sum((task, verb) not in logged for task, verb, _ in load.acknowledged)
    handed = {r["task"] for r in texts}

    def made(verb: str, key: str) -> bool:
        return (key, verb) in logged if verb == "accept_task" else key in handed

    return lost, {o: sum(made(*m) for m in moves) for o, moves in load.refused.items()}


async def run(rounds: int, writers: int, workers: int, stopped: float) -> None:
    kinds = ("restart fast", "restart immediate", "kill backends", "stopped")
    measured: dict[str, list[dict[str, float]]] = {k: [] for k in kinds}
    with private_cluster() as cluster, tempfile.TemporaryDirectory() as logs:
        server = start(cluster.url, Path(logs), "--workers", str(workers), "--rate-limit", "0")
        try:
            owner = server.owner_token or ""
            agent = server.register(owner, "coder")
            load = Load(server, owner, agent, writers)
            loading = asyncio.create_task(load.run())
            async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as http:
                await asyncio.sleep(2)
                for _ in range(rounds):
                    for kind in kinds:
                        figures = await _outage(kind, cluster, http, load, stopped, workers)
                        measured[kind].append(figures)
            load.running = False
            await loading
            lost, made = await _committed(cluster, load)
        finally:
            server.stop()
        log = (Path(logs) / "stderr").read_text()
    _report(measured, load, lost, made, log, writers, workers, stopped)


def _report(
    measured: dict[str, list[dict[str, float]]],
    load: Load,
    lost: int,
    made: dict[str, int],
    log: str,
    writers: int,
    workers: int,
    stopped: float,
) -> None:
    print(f"{writers} writers, --workers {workers}, stopped for {stopped:g} s; medians (s):")
    print("| outage | figure | median | max |")
    print("|---|---|---|---|")
    for kind, runs in measured.items():
        for name in runs[0]:
            values = [r[name] for r in runs]
            print(f"| {kind} | {name} | {statistics.median(values):.3f} | {max(values):.3f} |")
    codes: dict[str, int] = {}
    for refusal in load.refusals:
        key = f"{refusal.get('code')} {refusal.get('outcome', '')}".strip()
        codes[key] = codes.get(key, 0) + 1
    print(f"acknowledged moves: {len(load.acknowledged)}; lost: {lost}")
    print(f"refusals: {codes}")
    for outcome, moves in load.refused.items():
        print(
            f"moves refused, outcome {outcome}: {len(moves)}, of which committed: {made[outcome]}"
        )
    errors = log.count('"level":"error"')
    print(
        f"log: {log.count('the database is unreachable')} outage warnings, "
        f"{log.count('the database is back')} back, {log.count('Traceback')} tracebacks, "
        f"{errors} errors"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--stopped", type=float, default=5.0, help="seconds stopped")
    args = parser.parse_args()
    asyncio.run(run(args.rounds, args.writers, args.workers, args.stopped))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
