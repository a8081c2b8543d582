"""This server beside PostGraphile 4 on the same PostgreSQL tables, and on SQLite alone.

`python -m tests.bench --postgraphile [--rounds 5] [--seconds 2]` (or
`python -m tests.bench.postgraphile`). Run by hand, not by pytest.

PostGraphile 4.14.1 is installed from npm into PRICKLE_BENCH_CACHE (default
~/.cache/prickle-bench), outside the repository, the first time; without `node` and `npm`
the bench says so and skips. 500 tasks are built through this server's API on a fresh
PostgreSQL database (trees: task i's parent is task i // 2); PostGraphile then serves the
same tables, in one process, its relation parent/children named by smart comments (on the
foreign key when the tables declare it, a `@foreignKey` on the table otherwise). The same
page is asked of both and must answer the same (ids, states, project, parent, children)
before anything is timed. Then, in each of the rounds, each shape is run on both servers in
turn (which one first alternates), by tests/bench/rawhttp.py with 16 connections: medians
and ranges of requests/s, CPU per request of the server process and of its PostgreSQL
backends (told apart by application_name), and the client's share of a core. SQLite: the
same tasks, the same query, this server alone.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.bench.bench_server import cpu_seconds
from tests.bench.rawhttp import RawConnection, body_of, run_load
from tests.support.server import PG_ADMIN, free_port, start

VERSION = "4.14.1"
CACHE = Path(os.environ.get("PRICKLE_BENCH_CACHE", Path.home() / ".cache" / "prickle-bench"))
TASKS = 500
SHAPES = ("5", "50", "200", "typename")
CONCURRENCY = 16
RATE_LIMIT = "1000000"  # mutations a second: building the tasks never reaches it
APP_NAME = "postgraphile_bench"  # PostGraphile's backends, told apart from this server's

OURS = """query($first: Int!) { tasks(first: $first) { edges { node {
  id state project parent { id state } children { id state } } } } }"""
THEIRS = """query($first: Int!) { allTasks(first: $first, orderBy: ID_ASC) { edges { node {
  id state project parent { id state } children { id state } } } } }"""
TYPENAME = "{ __typename }"
HANDOFF = "mutation($input: HandoffInput!) { handoff(input: $input) { id } }"
ACCEPT = "mutation($id: ID!) { accept_task(task_id: $id) { id } }"


# PostGraphile, from npm


def postgraphile_cli() -> Path | None:
    """PostGraphile's cli.js, installed on first use; None (said why) without node or npm."""
    home = CACHE / f"postgraphile-{VERSION}"
    cli = home / "node_modules" / "postgraphile" / "cli.js"
    if cli.exists():
        return cli
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        print(f"skipped: no {' or '.join(missing)} on PATH (Node.js 18+ runs PostGraphile 4)")
        return None
    home.mkdir(parents=True, exist_ok=True)
    (home / "package.json").write_text('{"private": true}\n')
    print(f"installing postgraphile@{VERSION} into {home}", flush=True)
    subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--silent", f"postgraphile@{VERSION}"],
        cwd=home,
        check=True,
    )
    return cli if cli.exists() else None


def start_postgraphile(cli: Path, dsn: str, logs: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    command = [
        "node",
        str(cli),
        "--connection",
        f"{dsn}?application_name={APP_NAME}",
        "--schema",
        "public",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--disable-query-log",
        "--simple-collections",
        "both",
    ]
    out = open(logs / "postgraphile.out", "wb")  # noqa: SIM115 - kept open for the process
    process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError((logs / "postgraphile.out").read_text()[-2000:])
        if b"PostGraphile v" in (logs / "postgraphile.out").read_bytes() and port_open(port):
            return process, url
        time.sleep(0.2)
    process.kill()
    raise RuntimeError("PostGraphile did not start in 60 s")


def port_open(port: int) -> bool:
    import socket

    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


async def tag_relations(dsn: str) -> str:
    """Smart comments naming the parent/children relation for PostGraphile: on the foreign
    key if the tables declare it, else a `@foreignKey` on the table. Says which."""
    import asyncpg

    conn = await asyncpg.connect(dsn)
    try:
        names = "@fieldName parent\n@foreignFieldName childrenConnection"
        names += "\n@foreignSimpleFieldName children"
        fk = await conn.fetchval(
            "SELECT conname FROM pg_constraint WHERE conrelid = 'tasks'::regclass"
            " AND contype = 'f' AND conkey = ARRAY[(SELECT attnum FROM pg_attribute"
            " WHERE attrelid = 'tasks'::regclass AND attname = 'parent_task_id')]::smallint[]"
        )
        if fk is not None:
            comment = names.replace("'", "''")
            await conn.execute(f"COMMENT ON CONSTRAINT {fk} ON tasks IS E'{comment}'")
            return f"the foreign key {fk}"
        tag = "@foreignKey (parent_task_id) references tasks (id)|" + names.replace("\n", "|")
        await conn.execute(f"COMMENT ON TABLE tasks IS E'{tag}'")
        return "a @foreignKey smart comment (the tables declare no foreign key)"
    finally:
        await conn.close()


# The tasks, built through this server's API


async def build_tasks(url: str, token: str, count: int = TASKS) -> list[str]:
    """`count` tasks in one project; task i's parent is task i // 2; every third accepted."""
    conn = await RawConnection(url, token).open()
    agent = (await conn.graphql('mutation { register_agent(name: "coder") { token } }'))[
        "register_agent"
    ]["token"]
    worker = await RawConnection(url, agent).open()
    ids: list[str] = []
    try:
        for i in range(count):
            packet = {
                "task": f"task {i}",
                "deliverable_type": "code",
                "acceptance_criteria": ["ok"],
            }
            task: dict[str, Any] = {"project": "graph", "assignee": "admin/coder", "packet": packet}
            if i:
                task["parent_task_id"] = ids[i // 2]
            ids.append((await conn.graphql(HANDOFF, {"input": task}))["handoff"]["id"])
            if i % 3 == 0:
                await worker.graphql(ACCEPT, {"id": ids[-1]})
    finally:
        await conn.close()
        await worker.close()
    return ids


# The same page from both


def page_of(answer: dict[str, Any]) -> list[dict[str, Any]]:
    """A page, normalized: the connection's nodes; children sorted; state lowercase."""
    connection = answer.get("tasks") or answer.get("allTasks") or {}

    def brief(task: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if task is None else {"id": task["id"], "state": task["state"].lower()}

    return [
        {
            "id": node["id"],
            "state": node["state"].lower(),
            "project": node["project"],
            "parent": brief(node["parent"]),
            "children": sorted(
                (brief(c) for c in node["children"]), key=lambda c: c["id"] if c else ""
            ),
        }
        for node in (edge["node"] for edge in connection["edges"])
    ]


async def same_pages(ours: Target, theirs: Target) -> None:
    for first in (5, 50, 200):
        mine = await ours.ask(first)
        other = await theirs.ask(first)
        if mine != other:
            raise AssertionError(f"first: {first} differs: {mine[:2]} vs {other[:2]}")
        if len(mine) != first or not any(task["children"] for task in mine):
            raise AssertionError(f"first: {first}: {len(mine)} tasks, children in none")


# Timing


@dataclass
class Target:
    name: str
    url: str
    token: str | None
    query: str
    pid: int
    backends: Callable[[], Awaitable[dict[int, float]]]
    runs: dict[str, list[dict[str, float]]] = field(default_factory=dict)

    def body(self, shape: str) -> bytes:
        if shape == "typename":
            return body_of(TYPENAME)
        return body_of(self.query, {"first": int(shape)})

    async def ask(self, first: int) -> list[dict[str, Any]]:
        conn = await RawConnection(self.url, self.token).open()
        try:
            return page_of(await conn.graphql(self.query, {"first": first}))
        finally:
            await conn.close()

    async def run(self, shape: str, seconds: float) -> dict[str, float]:
        seen: dict[int, float] = {}
        before_db = await self.backends()
        before_server = cpu_seconds(self.pid)
        sampling = asyncio.create_task(sample(self.backends, seen))
        try:
            load = await run_load(
                self.url, self.token, self.body(shape), concurrency=CONCURRENCY, seconds=seconds
            )
        finally:
            sampling.cancel()
        server = cpu_seconds(self.pid) - before_server
        seen.update(await self.backends())
        database = sum(cpu - before_db.get(pid, 0.0) for pid, cpu in seen.items())
        if load.failed:
            raise RuntimeError(f"{self.name} {shape}: {load.failed} failed: {load.errors}")
        done = max(load.done, 1)
        figures = {
            "rps": load.rate,
            "server_ms": server * 1000 / done,
            "database_ms": database * 1000 / done,
            "client_share": load.client_share,
        }
        self.runs.setdefault(shape, []).append(figures)
        return figures


async def sample(
    backends: Callable[[], Awaitable[dict[int, float]]], seen: dict[int, float]
) -> None:
    """Every 0.2 s, the backends' CPU so far: one that closes in the window is counted up to
    its last sample."""
    while True:
        seen.update(await backends())
        await asyncio.sleep(0.2)


async def backends_by_name(
    dsn: str, postgraphile: bool
) -> Callable[[], Awaitable[dict[int, float]]]:
    """CPU seconds so far of the database's backends of PostGraphile, or of the others."""
    import asyncpg

    conn = await asyncpg.connect(dsn)
    op = "=" if postgraphile else "IS DISTINCT FROM"
    sql = (
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
        f" AND pid <> pg_backend_pid() AND application_name {op} '{APP_NAME}'"
    )
    lock = asyncio.Lock()

    async def listed() -> dict[int, float]:
        async with lock:
            return {row[0]: cpu_seconds(row[0]) for row in await conn.fetch(sql)}

    return listed


async def no_backends() -> dict[int, float]:
    return {}


async def rounds(targets: list[Target], count: int, seconds: float) -> None:
    for target in targets:  # warm up each path
        for shape in SHAPES:
            await run_load(target.url, target.token, target.body(shape), seconds=0.5)
            target.runs.clear()
    for number in range(count):
        order = targets if number % 2 == 0 else targets[::-1]
        for shape in SHAPES:
            for target in order:
                got = await target.run(shape, seconds)
                print(
                    f"round {number + 1} {target.name:>13} {shape:>8}: {got['rps']:7.0f} req/s,"
                    f" server {got['server_ms']:.2f} ms, database {got['database_ms']:.2f} ms,"
                    f" client {got['client_share']:.2f}",
                    flush=True,
                )


def summary(target: Target) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for shape, runs in target.runs.items():
        rates = [run["rps"] for run in runs]
        out[shape] = {
            "rps": statistics.median(rates),
            "rps_range": [min(rates), max(rates)],
            **{
                key: statistics.median(run[key] for run in runs)
                for key in ("server_ms", "database_ms", "client_share")
            },
        }
    return out


# The two databases


async def pg_admin(statement: str) -> None:
    import asyncpg

    admin = await asyncpg.connect(PG_ADMIN, timeout=5)
    try:
        await admin.execute(statement)
    finally:
        await admin.close()


async def on_postgres(cli: Path, tmp: Path, count: int, seconds: float) -> dict[str, Any]:
    name = f"prickle_pgl_{uuid.uuid4().hex[:10]}"
    base = PG_ADMIN.rsplit("/", 1)[0]
    dsn = f"{base}/{name}"
    await pg_admin(f'CREATE DATABASE "{name}"')
    server = start(
        dsn.replace("postgresql://", "postgresql+asyncpg://", 1),
        tmp / "pg",
        "--rate-limit",
        RATE_LIMIT,
    )
    postgraphile = None
    try:
        token = server.owner_token or ""
        await build_tasks(server.base_url, token)
        how = await tag_relations(dsn)
        postgraphile, pgl_url = start_postgraphile(cli, dsn, tmp)
        ours = Target(
            "prickle",
            server.base_url,
            token,
            OURS,
            server.process.pid,
            await backends_by_name(dsn, postgraphile=False),
        )
        theirs = Target(
            "postgraphile",
            pgl_url,
            None,
            THEIRS,
            postgraphile.pid,
            await backends_by_name(dsn, postgraphile=True),
        )
        await same_pages(ours, theirs)
        print(f"the same pages from both (relations through {how})", flush=True)
        await rounds([ours, theirs], count, seconds)
        return {"relations": how, "prickle": summary(ours), "postgraphile": summary(theirs)}
    finally:
        if postgraphile is not None:
            postgraphile.terminate()
            postgraphile.wait(10)
        server.stop()
        await pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


async def on_sqlite(tmp: Path, count: int, seconds: float) -> dict[str, Any]:
    server = start(
        f"sqlite+aiosqlite:///{tmp}/bench.db", tmp / "sqlite", "--rate-limit", RATE_LIMIT
    )
    try:
        token = server.owner_token or ""
        await build_tasks(server.base_url, token)
        ours = Target(
            "prickle sqlite", server.base_url, token, OURS, server.process.pid, no_backends
        )
        await rounds([ours], count, seconds)
        return {"prickle": summary(ours)}
    finally:
        server.stop()


# The table


def table(results: dict[str, Any]) -> str:
    pg, sqlite = results["postgres"], results.get("sqlite")
    lines = [
        "| shape | PostGraphile req/s | ours req/s (PG) | ratio | CPU ms/req PostGraphile:"
        " node + PG | ours: server + PG | ours SQLite req/s | ours SQLite CPU ms/req |"
        " client share (ours PG / theirs) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for shape in SHAPES:
        them, us = pg["postgraphile"][shape], pg["prickle"][shape]
        lite = sqlite["prickle"][shape] if sqlite else None
        label = "`{ __typename }`" if shape == "typename" else f"first: {shape}"
        cells = [
            label,
            rate(them),
            rate(us),
            f"{us['rps'] / them['rps']:.3g}",
            f"{them['server_ms']:.2f} + {them['database_ms']:.2f}",
            f"{us['server_ms']:.2f} + {us['database_ms']:.2f}",
            rate(lite) if lite else "-",
            f"{lite['server_ms']:.2f}" if lite else "-",
            f"{us['client_share']:.2f} / {them['client_share']:.2f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def rate(figures: dict[str, Any]) -> str:
    low, high = figures["rps_range"]
    return f"{figures['rps']:.0f} ({low:.0f}-{high:.0f})"


async def run(count: int, seconds: float, sqlite: bool) -> dict[str, Any] | None:
    cli = postgraphile_cli()
    if cli is None:
        return None
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="prickle-pgl-") as name:
        tmp = Path(name)
        print("== postgres", flush=True)
        results["postgres"] = await on_postgres(cli, tmp, count, seconds)
        if sqlite:
            print("== sqlite", flush=True)
            results["sqlite"] = await on_sqlite(tmp, count, seconds)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.postgraphile")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.0, help="per timed run")
    parser.add_argument("--no-sqlite", action="store_true", help="PostgreSQL only")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    began = time.perf_counter()
    results = asyncio.run(run(args.rounds, args.seconds, not args.no_sqlite))
    if results is None:
        return 0
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    print(f"\n{TASKS} tasks, {args.rounds} rounds of {args.seconds} s, {CONCURRENCY} connections;")
    took = time.perf_counter() - began
    print(f"relations through {results['postgres']['relations']}; took {took:.0f} s\n")
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
