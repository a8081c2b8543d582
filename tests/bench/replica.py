"""`python -m tests.bench.replica [--seconds S] [--processes P] [--delays 0,50]`

Reads from a streaming replica under a mixed load: a private PostgreSQL cluster and a hot
standby of it (tests/support/pg_cluster.py), P `prickle serve` processes on them with
`--database-read-url` and `--database-connections 8`. For each replay delay D (the
standby's `recovery_min_apply_delay`: 0, or a standby D ms behind):

- 8 writers, each with a token of its own and a task of its own, spread over the
  processes: a move (stop_run / resume_run), then its task read 3 times, each request to
  the next process (a client behind a load balancer), sending back the `Prickle-Position`
  its last response answered;
- 4 readers (the assignee's token, no writes): a page of tasks and each task, all along.

The same load runs first on P processes without the read URL, for comparison.

It reports the reads a second, the share of the routed reads the standby served (summed
over every process's `/metrics`), why the primary served the others (lagging: not replayed
within PRICKLE_DB_READ_WAIT; unavailable), the read latency (median, p95), and the stale
reads: a writer reading its task at a version older than its own last move, a reader
reading a task older than it read it before. That last figure must be 0.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from tests.support.server import Server, start

WRITERS = 8
READERS = 4
CONNECTIONS = 8
READS_AFTER_A_MOVE = 3
NEXT = {"accepted": "stop_run", "waiting": "resume_run"}
MOVE = "mutation($id: ID!) {{ {verb}(task_id: $id) {{ state version }} }}"
TASK = "query($id: ID!) { task(id: $id) { version } }"
PAGE = "{ tasks(first: 20) { edges { node { id version } } } }"
HANDOFF = "mutation($input: HandoffInput!) { handoff(input: $input) { id } }"
ACCEPT = "mutation($id: ID!) { accept_task(task_id: $id) { id } }"
TOKEN = "mutation { create_token { token } }"
POSITION = "prickle-position"
ROUTED = re.compile(r'^prickle_routed_reads_total\{served="(\w+)",why="(\w*)"\} (\S+)$')


class Client:
    """A client behind a load balancer: each request to the next process, the position its
    last response answered sent back."""

    def __init__(self, http: httpx.AsyncClient, servers: list[Server], token: str, at: int):
        self.http, self.servers, self.token, self.at = http, servers, token, at
        self.position: str | None = None

    async def post(self, query: str, **variables: Any) -> Any:
        server = self.servers[self.at % len(self.servers)]
        self.at += 1
        headers = {"Authorization": f"Bearer {self.token}"}
        if self.position:
            headers[POSITION] = self.position
        response = await self.http.post(
            server.graphql_url, json={"query": query, "variables": variables}, headers=headers
        )
        body = response.json()
        assert "errors" not in body, body
        self.position = response.headers.get(POSITION, self.position)
        return body["data"]


def _routed(servers: list[Server]) -> dict[str, float]:
    counts = {"replica": 0.0, "lagging": 0.0, "unavailable": 0.0}
    for server in servers:
        for line in httpx.get(f"{server.base_url}/metrics").text.splitlines():
            found = ROUTED.match(line)
            if found:
                counts[found[2] or found[1]] += float(found[3])
    return counts


async def measure(servers: list[Server], owner: str, seconds: float) -> dict[str, Any]:
    async with httpx.AsyncClient(timeout=30) as http:
        admin = Client(http, servers, owner, 0)
        name = f"w{time.time_ns()}"
        worker_token = await asyncio.to_thread(servers[0].register, owner, name)
        handle = f"admin/{name}"
        worker = Client(http, servers, worker_token, 0)
        tasks = []
        for _ in range(WRITERS):
            packet = _packet()
            variables = {"project": "load", "assignee": handle, "packet": packet}
            made = await admin.post(HANDOFF, input=variables)
            await worker.post(ACCEPT, id=made["handoff"]["id"])
            tasks.append(made["handoff"]["id"])
        writers = []
        for i in range(WRITERS):  # a token each: each its own client
            token = (await admin.post(TOKEN))["create_token"]["token"]
            writers.append(Client(http, servers, token, i))
        readers = [Client(http, servers, worker_token, i) for i in range(READERS)]
        stale: list[Any] = []
        latencies: list[float] = []
        deadline = time.monotonic() + seconds

        async def read(client: Client, task_id: str) -> int:
            began = time.monotonic()
            version = int((await client.post(TASK, id=task_id))["task"]["version"])
            latencies.append(time.monotonic() - began)
            return version

        async def writing(client: Client, task_id: str) -> None:
            state = "accepted"
            while time.monotonic() < deadline:
                verb = NEXT[state]
                moved = (await client.post(MOVE.format(verb=verb), id=task_id))[verb]
                state = moved["state"]
                for _ in range(READS_AFTER_A_MOVE):
                    got = await read(client, task_id)
                    if got < moved["version"]:
                        stale.append(("own write", task_id, got, moved["version"]))

        async def reading(client: Client) -> None:
            last: dict[str, int] = {}
            while time.monotonic() < deadline:
                began = time.monotonic()
                page = (await client.post(PAGE))["tasks"]["edges"]
                latencies.append(time.monotonic() - began)
                for edge in page:
                    node = edge["node"]
                    if node["version"] < last.get(node["id"], 0):
                        stale.append(("backwards", node["id"], node["version"]))
                    last[node["id"]] = node["version"]
                for task_id in tasks[:4]:
                    got = await read(client, task_id)
                    if got < last.get(task_id, 0):
                        stale.append(("backwards", task_id, got, last[task_id]))
                    last[task_id] = got

        before = await asyncio.to_thread(_routed, servers)
        began = time.monotonic()
        await asyncio.gather(
            *(writing(c, t) for c, t in zip(writers, tasks, strict=True)),
            *(reading(c) for c in readers),
        )
        elapsed = time.monotonic() - began
        after = await asyncio.to_thread(_routed, servers)
    routed = {k: after[k] - before[k] for k in after}
    total = sum(routed.values()) or 1
    ordered = sorted(latencies)
    return {
        "reads_per_s": len(latencies) / elapsed,
        "replica_share": routed["replica"] / total,
        "primary_lagging": routed["lagging"] / total,
        "primary_unavailable": routed["unavailable"] / total,
        "read_median_ms": statistics.median(ordered) * 1000,
        "read_p95_ms": ordered[int(0.95 * (len(ordered) - 1))] * 1000,
        "stale": len(stale),
    }


def _packet() -> dict[str, Any]:
    from tests.support.factory import PACKET

    return PACKET


async def main_async(seconds: float, processes: int, delays: list[int]) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/, as pytest has it
    from pg_cluster import private_cluster, private_standby

    rows: list[tuple[str, dict[str, Any]]] = []
    with (
        tempfile.TemporaryDirectory(prefix="prickle-replica-") as tmp,
        private_cluster() as primary,
        private_standby(primary) as standby,
    ):
        common = ["--database-connections", str(CONNECTIONS), "--rate-limit", "0"]
        owner: str | None = None  # the first server's, made on the empty database
        for replica in (False, True):  # the primary alone first, for comparison
            args = [*common, *(["--database-read-url", standby.url] if replica else [])]
            servers = []
            try:
                for i in range(processes):
                    logs = Path(tmp) / f"server-{replica}-{i}"
                    servers.append(await asyncio.to_thread(start, primary.url, logs, *args))
                owner = owner or servers[0].owner_token
                assert owner is not None
                for delay in delays if replica else [0]:
                    standby.psql(f"ALTER SYSTEM SET recovery_min_apply_delay = '{delay}ms'")
                    standby.psql("SELECT pg_reload_conf()")
                    found = await measure(servers, owner, seconds)
                    setup = f"standby {delay} ms behind" if replica else "no read URL"
                    rows.append((setup, found))
                    print(setup, found, flush=True)
            finally:
                for server in servers:
                    await asyncio.to_thread(server.stop)
    print(
        f"\n{processes} processes, {WRITERS} writers ({READS_AFTER_A_MOVE} reads after each "
        f"move), {READERS} readers, {seconds:.0f} s each"
    )
    print(
        "| setup | reads/s | served by the standby | primary: lagging | primary: unavailable"
        " | read median ms | read p95 ms | stale reads |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for setup, f in rows:
        print(
            f"| {setup} | {f['reads_per_s']:.0f} | {f['replica_share']:.0%} | "
            f"{f['primary_lagging']:.0%} | {f['primary_unavailable']:.0%} | "
            f"{f['read_median_ms']:.1f} | {f['read_p95_ms']:.1f} | {f['stale']} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--delays", default="0,50,500", help="the standby's replay delays, ms")
    args = parser.parse_args()
    delays = [int(d) for d in args.delays.split(",")]
    asyncio.run(main_async(args.seconds, args.processes, delays))


if __name__ == "__main__":
    main()
