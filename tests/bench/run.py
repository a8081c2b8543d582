"""`python -m tests.bench [--backend sqlite|postgres|both] [--fast-paths on|off|both]
[--output docs/performance.md]`

Each backend is measured with the fast paths on and off (`PRICKLE_FAST_PATHS`), one column
each, so that what they are worth stands beside the plain path's figures.

`python -m tests.bench --before DIR [...]`: every column twice, for this tree's server and
for the one in DIR (say `git archive <commit> | tar -x -C DIR`), one right after the other,
the order alternating from column to column; the same load client measures both.

`python -m tests.bench --without NAME [...]`: the same, this tree beside itself less one fast
path (tests/bench/without/sitecustomize.py names them).

`python -m tests.bench --postgraphile [--rounds 5] [--seconds 2]`: this server beside
PostGraphile on the same tables (tests/bench/postgraphile.py), alone.
`python -m tests.bench --foreign-keys [--backend ...]`: moves with and without the foreign
keys (tests/bench/foreign_keys.py), alone.

For each backend: a fresh database, a real `prickle serve` on a free 127.0.0.1 port, every
measure beside its floor in the same run, medians of 5; then the table in docs/performance.md.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import resource
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from tests.bench import bench_server as b
from tests.bench import reads
from tests.support.server import PG_ADMIN, ROOT, start

BENCH_RATE_LIMIT = 1_000_000  # mutations a second per principal: never reached
KEPT = "## Analysis"  # docs/performance.md from this heading on is written by hand

TARGETS = {
    "http": (
        "server CPU per move ÷ per `{ __typename }` (database's backends counted in)",
        "<=",
        {"sqlite": 2.5, "postgres": 3.5},
    ),
    "fanout": ("last of 1,000 subscribers receives an event ÷ raw `websockets` broadcast", "<=", 3),
    "memory": ("RSS per idle subscription at 1,000 open (KiB)", "<=", 64),
    "sql": ("SQL statements, tasks(first: 500) with nested lists vs first: 5", "==", None),
    "resume": ("resume 10,000 events back: events/s ÷ raw SELECT rows/s", ">=", 0.3),
    "resume_batches": (
        "resume 10,000 events back in batches of 1,000: events/s ÷ raw SELECT rows/s",
        ">=",
        0.3,
    ),
}


def raise_open_files(wanted: int = 8192) -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


async def pg_admin(statement: str) -> None:
    import asyncpg

    admin = await asyncpg.connect(PG_ADMIN, timeout=5)
    try:
        await admin.execute(statement)
    finally:
        await admin.close()


MEASURES = ("fanout", "http", "sql", "resume", "resume_batches", "reads")


async def measure(
    url: str,
    logs: Path,
    measures: tuple[str, ...] = MEASURES,
    fast: bool = True,
    root: Path = ROOT,
    less: str | None = None,
) -> dict[str, Any]:
    # the server inherits this process's raised open-file limit; its mutation rate limit is
    # high enough never to refuse the bench's thousands a second, and still checked on each
    env = {"PRICKLE_FAST_PATHS": "on" if fast else "off", **b.without(less)}
    server = start(url, logs, "--rate-limit", str(BENCH_RATE_LIMIT), env=env, root=root)
    try:
        async with b.client(server.base_url) as http:
            setup = b.Setup(server, server.owner_token or "", "", http)
            setup.pool = [b.client(server.base_url) for _ in range(b.CONCURRENCY)]
            registered = await setup.gql('mutation { register_agent(name: "coder") { token } }')
            setup.agent = registered["register_agent"]["token"]
            figures: dict[str, Any] = {}
            # fan-out first: its RSS delta on a fresh server, not on a heap the other
            # measures have grown (freed memory would be reused and hide the cost)
            for name, fn in (
                ("fanout", b.fan_out),
                ("http", b.http_ratio),
                ("sql", b.sql_statements),
                ("resume", b.resume),
                ("resume_batches", b.resume_batches),
                ("reads", reads.in_run),  # last: its 500 tasks would change the others'
            ):
                if name not in measures:
                    continue
                began = time.perf_counter()
                figures[name] = await fn(setup)
                figures[name]["seconds"] = round(time.perf_counter() - began, 1)
                print(name, json.dumps(figures[name]), flush=True)
            for pooled in setup.pool:
                await pooled.aclose()
            return figures
    finally:
        server.stop()


async def run_backend(
    backend: str,
    measures: tuple[str, ...] = MEASURES,
    fast: bool = True,
    root: Path = ROOT,
    less: str | None = None,
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="prickle-bench-") as tmp:
        if backend == "sqlite":
            url = f"sqlite+aiosqlite:///{tmp}/bench.db"
            return await measure(url, Path(tmp) / "logs", measures, fast, root, less)
        name = f"prickle_bench_{uuid.uuid4().hex[:10]}"
        await pg_admin(f'CREATE DATABASE "{name}"')
        try:
            base = PG_ADMIN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+asyncpg://", 1)
            return await measure(f"{base}/{name}", Path(tmp) / "logs", measures, fast, root, less)
        finally:
            await pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def column(backend: str, fast: bool) -> str:
    """A column of the report: the backend, and the fast paths' position."""
    return f"{backend}, fast paths {'on' if fast else 'off'}"


def backend_of(name: str) -> str:
    return name.split(",", 1)[0]


def holds(key: str, figures: dict[str, Any], backend: str) -> tuple[str, bool]:
    if key == "sql":
        few, many = figures["sql"]["first_5"], figures["sql"]["first_500"]
        return f"{many} vs {few}", many == few
    value = figures["memory_value"] if key == "memory" else figures[key]["ratio"]
    _, op, target = TARGETS[key]
    if isinstance(target, dict):
        target = target[backend_of(backend)]
    ok = value >= target if op == ">=" else value <= target
    return f"{value:.3g}", ok


def report(results: dict[str, dict[str, Any]], limit: int, total_s: float) -> str:
    env = b.environment()
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    backends = list(results)
    lines = [
        "# Performance",
        "",
        "Measured by `python -m tests.bench --backend both` (see `tests/bench/`): real",
        "`prickle serve` processes on 127.0.0.1, each measure beside its floor in the same run,",
        f"medians of {b.RUNS} runs. The load client is in the bench process: for the HTTP",
        "measures, tests/bench/rawhttp.py (raw HTTP/1.1 keep-alive over asyncio streams,",
        f"{b.CONCURRENCY} requests in flight, one at a time per loop; its own CPU share is shown)",
        "gives the primary figures, server CPU per operation with the database's backends",
        "counted in, and httpx.AsyncClient the figures beside them; the `websockets` client for",
        "both sides of the fan-out and of the resume's bare-server line.",
        "",
        (
            f"Machine: {env['nproc']} cores, {env['memory_gib']} GiB, Python {env['python']}, "
            f"open-file limit {limit}; {now}; the whole run took {total_s:.0f} s. The machine "
            "is shared, so absolute figures move from run to run; the ratios are what the "
            "targets judge."
        ),
        "",
        "## Targets",
        "",
        "| measure | target | " + " | ".join(backends) + " |",
        "|---|---|" + "---|" * len(backends),
    ]
    for key, (label, op, target) in TARGETS.items():
        cells = []
        for backend in backends:
            if ("memory_value" if key == "memory" else key) not in results[backend]:
                continue
            value, ok = holds(key, results[backend], backend)
            cells.append(f"{value} {'holds' if ok else '**misses**'}")
        sign = op.replace(">=", "≥").replace("<=", "≤")
        if target is None:
            goal = "the same"
        elif isinstance(target, dict):
            goal = ", ".join(f"{sign} {t} ({name})" for name, t in target.items())
        else:
            goal = f"{sign} {target}"
        if cells:
            lines.append(f"| {label} | {goal} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "## The figures behind them",
        "",
        "| figure | " + " | ".join(backends) + " |",
        "|---|" + "---|" * len(backends),
    ]
    rows = [
        ("server CPU per move ÷ per `{ __typename }`, each run", "http", "raw.cpu_ratios", None),
        ("server CPU per `{ __typename }` (ms)", "http", "raw.typename.server_cpu", "{:.3f}"),
        ("server CPU per move (ms)", "http", "raw.move.server_cpu", "{:.3f}"),
        (
            "CPU per `{ __typename }` (ms): server / database / client",
            "http",
            "raw.typename",
            "cpu",
        ),
        ("CPU per move (ms): server / database / client", "http", "raw.move", "cpu"),
        ("`{ __typename }` requests/s", "http", "raw.typename.rate", "{:.0f}"),
        (
            "moves/s (handoff, accept_task, start_task, return_result)",
            "http",
            "raw.move.rate",
            "{:.0f}",
        ),
        ("moves/s ÷ `{ __typename }` requests/s", "http", "raw.rate_ratio", "{:.3g}"),
        ("raw client's CPU share of a core: typename / moves", "http", "raw", "share"),
        (
            "httpx client: server CPU per move ÷ per `{ __typename }`",
            "http",
            "httpx.cpu_ratio",
            "{:.3g}",
        ),
        (
            "httpx client: moves/s ÷ `{ __typename }` requests/s",
            "http",
            "httpx.rate_ratio",
            "{:.3g}",
        ),
        (
            "httpx client: CPU per `{ __typename }` (ms): server / database / client",
            "http",
            "httpx.typename",
            "cpu",
        ),
        (
            "httpx client: CPU per move (ms): server / database / client",
            "http",
            "httpx.move",
            "cpu",
        ),
        ("fan-out to 1,000: last arrival (ms)", "fanout", "fanout_s", "ms"),
        ("raw `websockets` broadcast to 1,000 (ms)", "fanout", "raw_s", "ms"),
        ("event payload (bytes; the raw one the same)", "fanout", "payload_bytes", "{}"),
        ("fan-out ratio, each run", "fanout", "ratios", None),
        ("RSS per subscription (KiB)", "fanout", "rss_per_sub_kib", "{:.1f}"),
        (
            "raw `websockets` server: RSS per connection (KiB)",
            "fanout",
            "raw_rss_per_conn_kib",
            "{:.1f}",
        ),
        ("SQL statements, first: 5", "sql", "first_5", "{}"),
        ("SQL statements, first: 500", "sql", "first_500", "{}"),
        ("resume: events/s", "resume", "events_per_s", "{:.0f}"),
        ("raw SELECT of the same rows: rows/s", "resume", "raw_rows_per_s", "{:.0f}"),
        ("resume ratio, each run", "resume", "ratios", None),
        (
            "bare `websockets` server, 10,000 messages of the same size: messages/s",
            "resume",
            "bare_messages_per_s",
            "{:.0f}",
        ),
        (
            "GraphQL execution of the resume's selection for one event, in process (µs)",
            "resume",
            "execute_us",
            "{:.0f}",
        ),
        (
            "the most one message per event allows: that ÷ raw SELECT rows/s",
            "resume",
            "bare_ratio",
            "{:.3g}",
        ),
    ]
    for first in reads.SIZES:
        rows.append(
            (
                f"task-graph page, first: {first}: requests/s",
                "reads",
                f"first_{first}.rps",
                "{:.0f}",
            )
        )
        rows.append(
            (
                f"task-graph page, first: {first}: CPU per request (ms): server / database",
                "reads",
                f"first_{first}",
                "reads_cpu",
            )
        )
    for label, group, key, fmt in rows:
        cells = []
        if not all(group in results[backend] for backend in backends):
            continue
        for backend in backends:
            value = results[backend][group]
            for part in key.split("."):
                value = value[part]
            if fmt is None:
                cells.append(", ".join(f"{v:.3g}" for v in value))
            elif fmt == "cpu":
                cells.append(
                    " / ".join(f"{value[p]:.2f}" for p in ("server", "database", "client"))
                )
            elif fmt == "share":
                cells.append(
                    " / ".join(f"{value[p]['client_share']:.0%}" for p in ("typename", "move"))
                )
            elif fmt == "reads_cpu":
                cells.append(f"{value['server_ms']:.2f} / {value['db_ms']:.2f}")
            elif fmt == "ms":
                cells.append(f"{value * 1000:.1f}")
            else:
                cells.append(fmt.format(value))
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench")
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument(
        "--fast-paths",
        choices=["on", "off", "both"],
        default="both",
        help="PRICKLE_FAST_PATHS of the servers measured (both: a column each)",
    )
    parser.add_argument("--before", type=Path, help="another source tree, measured beside")
    parser.add_argument("--without", help="this tree less one fast path, measured beside")
    parser.add_argument("--output", default=str(ROOT / "docs" / "performance.md"))
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument(
        "--only", nargs="+", choices=MEASURES, default=list(MEASURES), help="these measures"
    )
    parser.add_argument("--postgraphile", action="store_true", help="beside PostGraphile only")
    parser.add_argument("--foreign-keys", action="store_true", help="what foreign keys cost only")
    args, rest = parser.parse_known_args(argv)
    if args.postgraphile:  # its own measure; the arguments it does not know go to it
        from tests.bench import postgraphile

        return postgraphile.main(rest)
    if args.foreign_keys:
        from tests.bench import foreign_keys

        return foreign_keys.main([*rest, "--backend", args.backend])
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    limit = raise_open_files()
    if limit < 2 * b.SUBSCRIBERS + 100:
        print(
            f"open-file limit {limit} is too low for {b.SUBSCRIBERS} connections", file=sys.stderr
        )
        return 2
    began = time.perf_counter()
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    positions = {"on": [True], "off": [False], "both": [True, False]}[args.fast_paths]
    trees: list[tuple[str, Path, str | None]] = [("", ROOT, None)]
    if args.before is not None:  # each column for both trees; which goes first alternates
        trees = [(", before", args.before.resolve(), None), (", after", ROOT, None)]
    if args.without is not None:
        trees = [(f", without {args.without}", ROOT, args.without), (", all", ROOT, None)]
    results = {}
    for backend in backends:
        for fast in positions:
            for tree, root, less in trees:
                name = column(backend, fast) + tree
                print(f"== {name}", flush=True)
                with asyncio.Runner(loop_factory=_loop_factory()) as runner:
                    measured = run_backend(backend, tuple(args.only), fast, root, less)
                    results[name] = runner.run(measured)
                if "fanout" in results[name]:
                    results[name]["memory_value"] = results[name]["fanout"]["rss_per_sub_kib"]
            trees.reverse()
    text = report(results, limit, time.perf_counter() - began)
    print(text)
    if not args.no_write and args.before is None and args.without is None:  # compared: printed
        output = Path(args.output)
        kept = output.read_text() if output.exists() else ""
        if KEPT in kept:  # the hand-written analysis below the figures stays
            text += "\n" + kept[kept.index(KEPT) :]
        output.write_text(text)
    return 0


def _loop_factory():  # type: ignore[no-untyped-def]
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop
