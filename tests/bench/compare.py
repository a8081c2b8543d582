"""`python -m tests.bench.compare --before DIR [--backend sqlite|postgres]`
`python -m tests.bench.compare --without NAME [--backend ...]`: this tree beside itself with
one fast path taken off (tests/bench/without/sitecustomize.py names them) as "before".

Moves beside the floor, for two source trees side by side in one run: this tree's server
and the one in DIR (say `git archive <commit> | tar -x -C DIR`), each on a fresh database
of its own, both running throughout; each run measures `{ __typename }` then moves on
the one, then on the other (which goes first alternates), with the raw client
(tests/bench/rawhttp.py). Prints each run's figures and the medians as JSON, and the
paired change (`paired`): each run's after ÷ before, with its median and range.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import uuid
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from tests.bench import bench_server as b
from tests.bench.run import BENCH_RATE_LIMIT, _loop_factory, pg_admin
from tests.bench.without.sitecustomize import WITHOUT
from tests.support.server import PG_ADMIN, ROOT, start


async def database(backend: str, tmp: Path, name: str, stack: AsyncExitStack) -> str:
    if backend == "sqlite":
        return f"sqlite+aiosqlite:///{tmp}/{name}.db"
    db = f"prickle_cmp_{name}_{uuid.uuid4().hex[:8]}"
    await pg_admin(f'CREATE DATABASE "{db}"')
    stack.push_async_callback(pg_admin, f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
    base = PG_ADMIN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+asyncpg://", 1)
    return f"{base}/{db}"


async def measured(setup: b.Setup, backends: Any, name: str) -> dict[str, float]:
    run = b.raw_typenames if name == "typename" else b.raw_lifecycles
    before = b.cpu_now(setup, await backends())
    load = await run(setup)
    after = b.cpu_now(setup, await backends())
    if load.failed or not load.done:
        raise RuntimeError(f"{name}: {load.failed} failed: {load.errors}")
    figures = b.cpu_per_op(before, after, load.done)
    figures.update(rate=load.rate, client_share=load.client_share)
    return figures


async def compare(
    before_root: Path, backend: str, runs: int, without: str | None = None
) -> dict[str, Any]:
    trees = {"before": before_root, "after": ROOT}
    envs = {"before": b.without(without), "after": b.without(None)}
    results: dict[str, dict[str, list[dict[str, float]]]] = {
        tree: {"typename": [], "move": []} for tree in trees
    }
    with tempfile.TemporaryDirectory(prefix="prickle-compare-") as tmp:
        async with AsyncExitStack() as stack:
            setups, listed = {}, {}
            for tree, root in trees.items():
                url = await database(backend, Path(tmp), tree, stack)
                server = start(
                    url,
                    Path(tmp) / tree,
                    "--rate-limit",
                    str(BENCH_RATE_LIMIT),
                    env=envs[tree],
                    root=root,
                )
                stack.callback(server.stop)
                http = await stack.enter_async_context(b.client(server.base_url))
                setup = b.Setup(server, server.owner_token or "", "", http)
                made = await setup.gql('mutation { register_agent(name: "coder") { token } }')
                setup.agent = made["register_agent"]["token"]
                setups[tree] = setup
                listed[tree] = await stack.enter_async_context(b.backends_of(url))
                await b.raw_typenames(setup, 0.5)  # warm up both paths
                await b.raw_lifecycles(setup, 0.5)
            for run in range(runs):  # the order alternates, so neither always goes first
                for tree in sorted(setups, reverse=bool(run % 2)):
                    setup = setups[tree]
                    for name in ("typename", "move"):
                        results[tree][name].append(await measured(setup, listed[tree], name))
    figures = {tree: b.summary(runs_of) for tree, runs_of in results.items()}
    figures["paired"] = paired(figures["before"], figures["after"])
    return figures


def paired(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Each run's after ÷ before (the two trees measured one right after the other), their
    median and range: on a machine whose speed drifts between runs, each run's pair shares
    that run's speed, so this moves less than the ratio of the two trees' medians."""
    changes = {
        "cpu_ratio": [
            a / b for a, b in zip(after["cpu_ratios"], before["cpu_ratios"], strict=True)
        ],
        "move_cpu": [
            a / b
            for a, b in zip(
                after["move"]["server_cpu_runs"], before["move"]["server_cpu_runs"], strict=True
            )
        ],
    }
    return {
        name: {"median": statistics.median(runs), "low": min(runs), "high": max(runs), "runs": runs}
        for name, runs in changes.items()
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.compare")
    parser.add_argument("--before", type=Path, help="the other source tree")
    parser.add_argument("--without", choices=sorted(WITHOUT), help="this tree less a fast path")
    parser.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--runs", type=int, default=b.RUNS)
    args = parser.parse_args(argv)
    if args.before is None and args.without is None:
        parser.error("--before DIR or --without NAME (or both)")
    with asyncio.Runner(loop_factory=_loop_factory()) as runner:
        before = ROOT if args.before is None else args.before.resolve()
        figures = runner.run(compare(before, args.backend, args.runs, args.without))
    print(json.dumps(figures))
    for name, change in figures.pop("paired").items():
        print(
            f"paired after ÷ before, {name}: {change['median']:.3f}",
            f"({change['low']:.3f} to {change['high']:.3f})",
            file=sys.stderr,
        )
    for tree, summary in figures.items():
        print(
            tree,
            "cpu ratio",
            f"{summary['cpu_ratio']:.2f}",
            [round(r, 2) for r in summary["cpu_ratios"]],
            "move ms",
            f"{summary['move']['server_cpu']:.3f}",
            "typename ms",
            f"{summary['typename']['server_cpu']:.3f}",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
