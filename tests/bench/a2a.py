"""`python -m tests.bench.a2a [--backend sqlite|postgres|both] [--tasks 200] [--rounds 5]`

A2A beside GraphQL on one `prickle serve` (a scratch database: SQLite, or PostgreSQL on
PRICKLE_TEST_PG, dropped after), one client on 127.0.0.1 sending one request at a time:

- A2A: `SendMessage` to the agent (JSON-RPC, a handoff by the owner, a fresh messageId
  each), then `GetTask` of each task it made;
- GraphQL: the `handoff` mutation, then the `task` query of each, each selecting what the
  A2A answer carries (id, state, waiting_on, version, allowed_verbs, project, the result).

Each round makes `--tasks` tasks each way and reads them back, each operation timed on its
own; the figures are the medians over `--rounds` rounds: wall milliseconds per call, and
the server's CPU per call (on PostgreSQL with its backends' CPU counted in). The ratio is
GraphQL ÷ A2A: 1 is as fast, below 1 A2A is slower.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from tests.bench.bench_server import cpu_seconds
from tests.bench.webhooks import _backends
from tests.support.server import BACKEND, Server, module_database, start

ENV = {"PRICKLE_RATE_LIMIT": "0"}
Figure = tuple[float, float]  # wall ms, server CPU ms: per call
FIELDS = "id state waiting_on version allowed_verbs project result { summary }"
HANDOFF = f"mutation($input: HandoffInput!) {{ handoff(input: $input) {{ {FIELDS} }} }}"
TASK = f"query($id: ID!) {{ task(id: $id) {{ {FIELDS} }} }}"
PACKET = {"task": "ping", "deliverable_type": "answer", "acceptance_criteria": ["pinged"]}


def a2a_send(http: httpx.Client, base: str) -> str:
    said = {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "contextId": "bench",
        "parts": [{"text": "ping"}, {"data": {"acceptance_criteria": ["pinged"]}}],
    }
    params = {"message": said, "configuration": {"returnImmediately": True}}  # not its wait
    task_id: str = _rpc(http, base, "SendMessage", params)["task"]["id"]
    return task_id


def a2a_get(http: httpx.Client, base: str, task_id: str) -> None:
    _rpc(http, base, "GetTask", {"id": task_id})


def graphql_handoff(http: httpx.Client, url: str) -> str:
    task = {"project": "bench", "assignee": "admin/worker", "packet": PACKET}
    task_id: str = _graphql(http, url, HANDOFF, {"input": task})["handoff"]["id"]
    return task_id


def graphql_task(http: httpx.Client, url: str, task_id: str) -> None:
    _graphql(http, url, TASK, {"id": task_id})


def _rpc(http: httpx.Client, base: str, method: str, params: Any) -> Any:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    answer = http.post(base, json=body).json()
    assert "result" in answer, answer
    return answer["result"]


def _graphql(http: httpx.Client, url: str, query: str, variables: Any) -> Any:
    answer = http.post(url, json={"query": query, "variables": variables}).json()
    assert not answer.get("errors"), answer
    return answer["data"]


def cpu_now(server: Server, url: str) -> float:
    pids = [server.process.pid]
    if not url.startswith("sqlite"):
        pids += asyncio.run(_backends(url))
    return sum(cpu_seconds(pid) for pid in pids)


def timed(server: Server, url: str, calls: list[Callable[[], Any]]) -> tuple[Figure, list[Any]]:
    """(wall ms, server CPU ms) per call, and what each call returned."""
    cpu, start = cpu_now(server, url), time.perf_counter()
    answers = [call() for call in calls]
    wall = (time.perf_counter() - start) * 1000 / len(calls)
    return (wall, (cpu_now(server, url) - cpu) * 1000 / len(calls)), answers


def one_round(server: Server, url: str, http: httpx.Client, count: int) -> dict[str, Figure]:
    """`count` tasks made and read back each way: each operation's figures."""
    base, graphql = f"{server.base_url}/a2a/admin/worker", server.graphql_url
    figures: dict[str, Figure] = {}
    figures["send"], sent = timed(server, url, [lambda: a2a_send(http, base)] * count)
    gets = [functools.partial(a2a_get, http, base, task_id) for task_id in sent]
    figures["get"], _ = timed(server, url, gets)
    figures["handoff"], made = timed(server, url, [lambda: graphql_handoff(http, graphql)] * count)
    reads = [functools.partial(graphql_task, http, graphql, task_id) for task_id in made]
    figures["task"], _ = timed(server, url, reads)
    return figures


def run(server: Server, url: str, tasks: int, rounds: int) -> dict[str, Any]:
    token = server.owner_token
    server.register(token, "worker")
    headers = {"Authorization": f"Bearer {token}", "A2A-Version": "1.0"}
    runs: list[dict[str, Figure]] = []
    with httpx.Client(headers=headers, timeout=30) as http:
        one_round(server, url, http, 20)  # warm: the A2A routes are built on their first request
        runs = [one_round(server, url, http, tasks) for _ in range(rounds)]
    return {
        name: {
            "wall_ms": statistics.median(r[name][0] for r in runs),
            "cpu_ms": statistics.median(r[name][1] for r in runs),
        }
        for name in runs[0]
    }


def one_backend(tasks: int, rounds: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as directory, module_database(Path(directory)) as url:
        server = start(url, Path(directory) / "logs", env=ENV)
        try:
            return run(server, url, tasks, rounds)
        finally:
            server.stop()


ROWS = (("send", "handoff", "SendMessage ÷ handoff"), ("get", "task", "GetTask ÷ task"))


def table(results: dict[str, dict[str, Any]]) -> str:
    lines = [
        "| backend | A2A | GraphQL | A2A ms | GraphQL ms | ratio (wall) "
        "| A2A CPU ms | GraphQL CPU ms | ratio (CPU) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for backend, f in results.items():
        for a2a, graphql, _ in ROWS:
            a, g = f[a2a], f[graphql]
            lines.append(
                f"| {backend} | {a2a} | {graphql} | {a['wall_ms']:.2f} | {g['wall_ms']:.2f}"
                f" | {g['wall_ms'] / a['wall_ms']:.2f} | {a['cpu_ms']:.2f} | {g['cpu_ms']:.2f}"
                f" | {g['cpu_ms'] / a['cpu_ms']:.2f} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default=BACKEND)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="one backend's figures as JSON")
    args = parser.parse_args()
    if args.json:
        print(json.dumps(one_backend(args.tasks, args.rounds)))
        return
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    results = {}
    for backend in backends:
        env = {**os.environ, "PRICKLE_TEST_BACKEND": backend}
        command = [sys.executable, "-m", "tests.bench.a2a", "--json"]
        command += ["--tasks", str(args.tasks), "--rounds", str(args.rounds)]
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
        results[backend] = json.loads(done.stdout.strip().splitlines()[-1])
    print(table(results))


if __name__ == "__main__":
    main()
