"""Task-graph reads: a page of tasks with parent and children, at first: 5 / 50 / 200.

    python -m tests.bench.reads --backend postgres            # this checkout
    python -m tests.bench.reads --backend both --base DIR     # beside another checkout

With `--base`, a second `prickle serve` runs from DIR (a checkout of another revision, same
migrations) on the same database, and the two are measured in alternating rounds. 500 tasks
are made through the API (every third a subtask of an earlier one); the load client is
tests/bench/rawhttp.py (16 keep-alive connections). Each figure is the median of the rounds,
with its range; CPU per request is the server process's and PostgreSQL's backends'.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

from tests.bench import bench_server as b
from tests.bench.rawhttp import RawConnection, body_of, run_load
from tests.support.server import (
    PG_ADMIN,
    ROOT,
    Server,
    _wait_until_healthy,
    free_port,
    owner_token_in,
)

TASKS = 500
SIZES = (5, 50, 200)
PAGE = """query($first: Int!) { tasks(first: $first) { edges { node { id state project
  parent { id state } children { id state } } } } }"""
HANDOFF = "mutation($input: HandoffInput!) { handoff(input: $input) { id } }"


def serve(root: Path, url: str, logs: Path) -> Server:
    """`prickle serve` from the checkout at `root` (its own `app` package)."""
    logs.mkdir(parents=True, exist_ok=True)
    port = free_port()
    command = [sys.executable, "-m", "app.cli", "serve", "--port", str(port)]
    command += ["--database-url", url, "--rate-limit", "100000"]
    with open(logs / "stdout", "wb") as out, open(logs / "stderr", "wb") as err:
        process = subprocess.Popen(command, cwd=root, stdout=out, stderr=err, env=dict(os.environ))
    server = Server(f"http://127.0.0.1:{port}", url, process, logs)
    try:
        _wait_until_healthy(server)
    except BaseException:
        server.stop()
        raise
    server.owner_token = owner_token_in((logs / "stdout").read_text())
    return server


async def populate(url: str, token: str, register: bool = True) -> None:
    """TASKS tasks, owner to its agent (admin/coder, registered unless it is already);
    every third a subtask of an earlier one."""
    conn = await RawConnection(url, token).open()
    try:
        if register:
            await conn.graphql('mutation { register_agent(name: "coder") { token } }')
        made: list[str] = []
        for i in range(TASKS):
            extra = {"parent_task_id": made[i // 3]} if i % 3 == 2 else {}
            found = await conn.graphql(HANDOFF, {"input": b.handoff_input("graph", **extra)})
            made.append(found["handoff"]["id"])
    finally:
        await conn.close()


async def page_of(server: Server, first: int) -> Any:
    conn = await RawConnection(server.base_url, server.owner_token).open()
    try:
        return await conn.graphql(PAGE, {"first": first})
    finally:
        await conn.close()


async def one_round(server: Server, first: int, seconds: float) -> dict[str, float]:
    async with b.backends_of(server.database_url) as backends:
        before = b.cpu_seconds(server.process.pid), await backends()
        db_before = {pid: b.cpu_seconds(pid) for pid in before[1]}
        load = await run_load(
            server.base_url, server.owner_token, body_of(PAGE, {"first": first}), seconds=seconds
        )
        pids = await backends()
        server_cpu = b.cpu_seconds(server.process.pid) - before[0]
        db_cpu = sum(b.cpu_seconds(p) - db_before.get(p, 0.0) for p in pids)
    if load.failed:
        raise RuntimeError(f"{load.failed} requests failed: {load.errors}")
    done = max(load.done, 1)
    return {
        "rps": load.rate,
        "server_ms": server_cpu * 1000 / done,
        "db_ms": db_cpu * 1000 / done,
        "client_share": load.client_share,
        # PostgreSQL backends that were not there before the run: connections the pool opened
        "new_connections": len(set(pids) - set(before[1])),
    }


async def in_run(setup: b.Setup) -> dict[str, Any]:
    """`python -m tests.bench`'s measure: this server alone, medians of its runs."""
    await populate(setup.server.base_url, setup.owner, register=False)
    figures: dict[str, Any] = {}
    for first in SIZES:
        await one_round(setup.server, first, 0.5)
        rounds = [await one_round(setup.server, first, b.WINDOW) for _ in range(b.RUNS)]
        figures[f"first_{first}"] = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
    return figures


def summary(rounds: list[dict[str, float]]) -> dict[str, Any]:
    return {
        key: {
            "median": round(statistics.median(r[key] for r in rounds), 3),
            "range": [round(min(r[key] for r in rounds), 3), round(max(r[key] for r in rounds), 3)],
        }
        for key in rounds[0]
    }


async def measure(url: str, tmp: Path, base: Path | None, runs: int, seconds: float) -> Any:
    servers = {"this": serve(ROOT, url, tmp / "this")}
    try:
        token = servers["this"].owner_token or ""
        await populate(servers["this"].base_url, token)
        if base is not None:
            servers["base"] = serve(base, url, tmp / "base")
            servers["base"].owner_token = token
        for first in SIZES:  # the same answer from both before timing
            answers = [await page_of(s, first) for s in servers.values()]
            assert all(a == answers[0] for a in answers), f"answers differ at first: {first}"
        figures: dict[str, Any] = {}
        for first in SIZES:
            rounds: dict[str, list[dict[str, float]]] = {name: [] for name in servers}
            for server in servers.values():  # warm up
                await one_round(server, first, 0.5)
            for _ in range(runs):
                for name, server in servers.items():
                    rounds[name].append(await one_round(server, first, seconds))
            figures[f"first_{first}"] = {name: summary(r) for name, r in rounds.items()}
            if base is not None:
                ratios = [
                    t["rps"] / o["rps"] for t, o in zip(rounds["this"], rounds["base"], strict=True)
                ]
                figures[f"first_{first}"]["ratio"] = round(statistics.median(ratios), 2)
            print(f"first: {first}", json.dumps(figures[f"first_{first}"]), flush=True)
        return figures
    finally:
        for server in servers.values():
            server.stop()


async def run_backend(backend: str, base: Path | None, runs: int, seconds: float) -> Any:
    with tempfile.TemporaryDirectory(prefix="prickle-reads-") as tmp:
        if backend == "sqlite":
            return await measure(
                f"sqlite+aiosqlite:///{tmp}/reads.db", Path(tmp), base, runs, seconds
            )
        from tests.bench.run import pg_admin

        name = f"prickle_reads_{uuid.uuid4().hex[:10]}"
        await pg_admin(f'CREATE DATABASE "{name}"')
        try:
            root = PG_ADMIN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+asyncpg://", 1)
            return await measure(f"{root}/{name}", Path(tmp), base, runs, seconds)
        finally:
            await pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.reads")
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--base", type=Path, help="a checkout to measure beside this one")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args(argv)
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    results = {}
    for backend in backends:
        print(f"== {backend}", flush=True)
        results[backend] = asyncio.run(run_backend(backend, args.base, args.runs, args.seconds))
    print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
