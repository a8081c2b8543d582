"""What CORS costs a plain POST query (docs/performance.md, "CORS"): two servers on one SQLite
database copy, one without `--cors-origins`, one with three origins listed, loaded in turn
(paired rounds, so that the machine's other load falls on both alike) with `{ me { id } }`
and a bearer token; the second sent with a listed `Origin`, so that its answers carry the
CORS headers. Figures: requests a second at 16 in flight, the server's CPU per request, and
one connection's median latency.

    .venv/bin/python -m tests.bench.cors [ROUNDS]
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.bench.bench_server import cpu_seconds
from tests.bench.rawhttp import RawConnection, body_of
from tests.support.server import Server, module_database, start

ORIGIN = "https://app.example.com"
ORIGINS = f"{ORIGIN}, https://*.preview.example.com, http://localhost:5173"
BODY = body_of("{ me { id } }")
CONCURRENCY = 16
SECONDS = 2.0
LATENCY_REQUESTS = 300


def connection(server: Server, origin: str | None) -> RawConnection:
    raw = RawConnection(server.base_url, server.owner_token)
    if origin:
        raw.head = raw.head.replace(b"Content-Type:", f"Origin: {origin}\r\nContent-Type:".encode())
    return raw


async def throughput(server: Server, origin: str | None) -> dict[str, float]:
    connections = [await connection(server, origin).open() for _ in range(CONCURRENCY)]
    done = 0

    async def loop(raw: RawConnection, until: float) -> None:
        nonlocal done
        while time.monotonic() < until:
            status, answer = await raw.post(BODY)
            assert status == 200 and b'"admin"' in answer, answer
            done += 1

    cpu, began = cpu_seconds(server.process.pid), time.monotonic()
    await asyncio.gather(*(loop(c, began + SECONDS) for c in connections))
    seconds, used = time.monotonic() - began, cpu_seconds(server.process.pid) - cpu
    await asyncio.gather(*(c.close() for c in connections))
    return {"rps": done / seconds, "cpu_us_per_request": used / done * 1e6}


async def latency(server: Server, origin: str | None) -> float:
    raw = await connection(server, origin).open()
    times = []
    for _ in range(LATENCY_REQUESTS):
        began = time.perf_counter()
        await raw.post(BODY)
        times.append(time.perf_counter() - began)
    await raw.close()
    return statistics.median(times) * 1e3


async def measure(plain: Server, cors: Server, rounds: int) -> dict[str, Any]:
    runs: dict[str, list[dict[str, float]]] = {"without": [], "with": []}
    for _ in range(rounds):
        for name, server, origin in (("without", plain, None), ("with", cors, ORIGIN)):
            figures = await throughput(server, origin)
            figures["median_ms"] = await latency(server, origin)
            runs[name].append(figures)
    return {
        name: {k: round(statistics.median(r[k] for r in found), 3) for k in found[0]}
        for name, found in runs.items()
    }


def main(argv: list[str]) -> int:
    rounds = int(argv[0]) if argv else 5
    with tempfile.TemporaryDirectory() as directory:
        base = Path(directory)
        (base / "db").mkdir()
        with module_database(base / "db") as url:
            plain = start(url, base / "plain")
            cors = start(url, base / "cors", "--cors-origins", ORIGINS)
            cors.owner_token = plain.owner_token  # the same database, the same owner
            try:
                print(json.dumps(asyncio.run(measure(plain, cors, rounds)), indent=2))
            finally:
                plain.stop()
                cors.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
