"""A load client that costs almost nothing: raw HTTP/1.1 over asyncio streams.

Each connection keeps one keep-alive socket and sends one request at a time (the body is
encoded by the caller, once, when it can be); a response is read by its Content-Length.
No pooling, no cookie jar, no header models: the server, not the client, must saturate on a
2-core machine. `Load.client_cpu` reports the share of a core the client process used.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

Body = bytes | Callable[[int], bytes]  # a fixed body, or one made per request from its number


class RawConnection:
    """One keep-alive HTTP/1.1 connection that POSTs JSON."""

    def __init__(self, url: str, token: str | None = None, path: str = "/graphql") -> None:
        parts = urlsplit(url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        auth = f"Authorization: Bearer {token}\r\n" if token else ""
        self.head = (
            f"POST {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n{auth}"
            "Content-Type: application/json\r\nContent-Length: "
        ).encode()
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> RawConnection:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        return self

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            with contextlib.suppress(OSError):
                await self.writer.wait_closed()

    async def post(self, body: bytes) -> tuple[int, bytes]:
        """Send one request; its status and body."""
        if self.writer is None or self.reader is None:
            await self.open()
        assert self.writer is not None and self.reader is not None
        self.writer.write(self.head + str(len(body)).encode() + b"\r\n\r\n" + body)
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head[9:12])
        length = 0
        for line in head.split(b"\r\n")[1:]:
            if line[:15].lower() == b"content-length:":
                length = int(line[15:])
        return status, await self.reader.readexactly(length)

    async def graphql(self, query: str, variables: dict[str, Any] | None = None) -> Any:
        """One GraphQL request, decoded; raises on an error (for setup, not the timed loop)."""
        status, raw = await self.post(
            json.dumps({"query": query, "variables": variables or {}}).encode()
        )
        answer = json.loads(raw)
        if status != 200 or answer.get("errors"):
            raise RuntimeError(f"{status}: {answer}")
        return answer["data"]


def body_of(query: str, variables: dict[str, Any] | None = None) -> bytes:
    return json.dumps({"query": query, "variables": variables or {}}).encode()


@dataclass
class Load:
    """What a timed run did: requests answered, failures, seconds, the client's own CPU."""

    done: int = 0
    failed: int = 0
    seconds: float = 0.0
    client_cpu: float = 0.0  # seconds of this process's CPU during the run
    errors: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.done / self.seconds if self.seconds else 0.0

    @property
    def client_share(self) -> float:
        """The client's CPU as a share of one core."""
        return self.client_cpu / self.seconds if self.seconds else 0.0


async def run_load(
    url: str,
    token: str | None,
    body: Body,
    *,
    concurrency: int = 16,
    seconds: float = 2.0,
    check: Callable[[bytes], bool] | None = None,
) -> Load:
    """Keep `concurrency` requests in flight for `seconds`; count the answered ones.

    A response is a failure when its status is not 200 or `check` (given its body) says so;
    by default a body holding `"errors"` fails."""
    connections = [await RawConnection(url, token).open() for _ in range(concurrency)]
    load = Load()
    number = 0
    ok = check or (lambda raw: b'"errors"' not in raw)

    def next_body() -> bytes:
        nonlocal number
        number += 1
        return body if isinstance(body, bytes) else body(number)

    async def loop(connection: RawConnection, until: float) -> None:
        while time.monotonic() < until:
            status, raw = await connection.post(next_body())
            if status == 200 and ok(raw):
                load.done += 1
            else:
                load.failed += 1
                if len(load.errors) < 3:
                    load.errors.append(raw[:300].decode(errors="replace"))

    cpu, started = os.times(), time.monotonic()
    until = started + seconds
    try:
        await asyncio.gather(*(loop(c, until) for c in connections))
    finally:
        load.seconds = time.monotonic() - started
        after = os.times()
        load.client_cpu = (after.user - cpu.user) + (after.system - cpu.system)
        await asyncio.gather(*(c.close() for c in connections))
    return load
