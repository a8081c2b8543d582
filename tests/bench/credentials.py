"""`python -m tests.bench.credentials [--backend sqlite|postgres|both] [--before REV]
[--requests 1000] [--rounds 5]`

What proving a token on every request costs (app/service/auth.py): the server's CPU per
authenticated request, before and after, in one run. Two `prickle serve` side by side on
scratch databases of their own: one of this tree, one of the tree at `--before` (extracted
with `git archive`; by default 9b58353, the last commit whose cache trusted announcements).
One client on 127.0.0.1 sends `{ me { id } }` with a token the server has already seen, one
request at a time, `--requests` a round; rounds alternate between the two servers, so that
whatever else runs on the machine weighs on both alike. Figures: medians over `--rounds`
rounds of the server process's CPU per request (and on PostgreSQL its database backends'),
and of the wall time per request; the clock ticks are 10 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx

from tests.bench.bench_server import cpu_seconds
from tests.support.server import PG_ADMIN, ROOT, Server, free_port, owner_token_in, pg_admin_execute

BEFORE = "9b58353"
ME = {"query": "{ me { id } }"}
ENV = {"PRICKLE_RATE_LIMIT": "0", "PRICKLE_LOG_LEVEL": "warning"}


def extracted(rev: str, into: Path) -> Path:
    """The tree at `rev`, written out under `into`."""
    tree = into / f"prickle-{rev}"
    tree.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", rev], cwd=ROOT, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    return tree


def serve(tree: Path, url: str, logs: Path) -> Server:
    """`prickle serve` of the tree (its `app` package, imported from its own directory)."""
    logs.mkdir(parents=True)
    port = free_port()
    command = [sys.executable, "-m", "app.cli", "serve", "--port", str(port)]
    with open(logs / "stdout", "wb") as out, open(logs / "stderr", "wb") as err:
        process = subprocess.Popen(
            [*command, "--database-url", url],
            cwd=tree,
            stdout=out,
            stderr=err,
            env={**os.environ, **ENV},
        )
    server = Server(f"http://127.0.0.1:{port}", url, process, logs)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if server.client.get(f"{server.base_url}/healthz", timeout=2).status_code == 200:
                break
        except httpx.TransportError:
            time.sleep(0.1)
    else:
        raise RuntimeError(server.output())
    server.owner_token = owner_token_in((logs / "stdout").read_text())
    return server


def backends(url: str) -> list[int]:
    """The pids of the database's PostgreSQL backends (none on SQLite)."""
    if url.startswith("sqlite"):
        return []
    import asyncpg

    async def listed() -> list[int]:
        conn = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://", 1))
        try:
            rows = await conn.fetch(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
                " AND pid <> pg_backend_pid()"
            )
        finally:
            await conn.close()
        return [row[0] for row in rows]

    return asyncio.run(listed())


def round_of(server: Server, requests: int, commits: bool = False) -> dict[str, float]:
    """`requests` requests of `me`: per request, the server's and its backends' CPU (ms)
    and the wall time (ms). `commits` (SQLite): each request after a commit of the bench's
    own to the file, so that the server finds its data_version moved every time."""
    writer = None
    if commits:
        path = server.database_url.split(":///", 1)[1]
        writer = sqlite3.connect(path)
        writer.execute("CREATE TABLE IF NOT EXISTS bench_commits (n INTEGER)")
    headers = {"Authorization": f"Bearer {server.owner_token}"}
    url = f"{server.base_url}/graphql"
    pids = backends(server.database_url)
    server_before = cpu_seconds(server.process.pid)
    database_before = {pid: cpu_seconds(pid) for pid in pids}
    started = time.perf_counter()
    for n in range(requests):
        if writer is not None:
            writer.execute("INSERT INTO bench_commits VALUES (?)", (n,))
            writer.commit()
        answer = server.client.post(url, json=ME, headers=headers)
        assert answer.status_code == 200 and "errors" not in answer.json(), answer.text
    wall = time.perf_counter() - started
    if writer is not None:
        writer.close()
    database = sum(cpu_seconds(pid) - t for pid, t in database_before.items())
    return {
        "server_cpu": (cpu_seconds(server.process.pid) - server_before) * 1000 / requests,
        "database_cpu": database * 1000 / requests,
        "wall": wall * 1000 / requests,
    }


def bench(backend: str, before: str, requests: int, rounds: int, scratch: Path) -> None:
    trees = {"before": extracted(before, scratch / backend), "after": ROOT}
    urls: dict[str, str] = {}
    for name in trees:
        if backend == "sqlite":
            urls[name] = f"sqlite+aiosqlite:///{scratch / f'{backend}-{name}.db'}"
        else:
            database = f"bench_credentials_{uuid.uuid4().hex[:8]}"
            asyncio.run(pg_admin_execute(f'CREATE DATABASE "{database}"'))
            base = PG_ADMIN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+asyncpg://", 1)
            urls[name] = f"{base}/{database}"
    servers: dict[str, Server] = {}
    try:
        for name, tree in trees.items():
            servers[name] = serve(tree, urls[name], scratch / f"{backend}-{name}-logs")
        for server in servers.values():
            round_of(server, requests // 5)  # warm up: the token is known, the code is hot
        ways = [False, True] if backend == "sqlite" else [False]
        figures = {(name, way): [] for way in ways for name in servers}
        for _ in range(rounds):
            for name, way in figures:
                figures[name, way].append(round_of(servers[name], requests, way))
        print(f"{backend}: {requests} requests of `me` a round, medians of {rounds} rounds")
        print("| server | requests | server CPU/request | database CPU/request | wall/request |")
        print("|---|---|---|---|---|")
        for (name, way), runs in figures.items():
            median = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
            label = f"{name} ({before})" if name == "before" else name
            kind = "each after another connection's commit" if way else "alone"
            print(
                f"| {label} | {kind} | {median['server_cpu']:.3f} ms"
                f" | {median['database_cpu']:.3f} ms | {median['wall']:.3f} ms |"
            )
    finally:
        for server in servers.values():
            server.stop()
        for url in urls.values():
            if not url.startswith("sqlite"):
                name = url.rsplit("/", 1)[1]
                asyncio.run(pg_admin_execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.credentials")
    parser.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument("--before", default=BEFORE, help="the revision to compare with")
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    chosen = ("sqlite", "postgres") if args.backend == "both" else (args.backend,)
    with tempfile.TemporaryDirectory() as directory:
        for backend in chosen:
            bench(backend, args.before, args.requests, args.rounds, Path(directory))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
