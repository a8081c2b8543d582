"""The floors for fan-out and resume: a bare `websockets` server.

A connection that first sends "listen" receives whatever the "control" connection sends
(a broadcast to every listener); one that first sends "burst" asks with "N SIZE" for N
messages of SIZE bytes in a row, as a replay sends them. Run as
`python -m tests.bench.raw_broadcast PORT`.
"""

from __future__ import annotations

import asyncio
import json
import sys

import websockets
from websockets.asyncio.server import ServerConnection, broadcast, serve


def message_of(size: int) -> str:
    """A JSON message of `size` bytes, shaped like a `next` message."""
    return json.dumps({"type": "next", "payload": "x" * max(0, size - 31)})


async def main(port: int) -> None:
    listeners: set[ServerConnection] = set()

    async def handler(ws: ServerConnection) -> None:
        first = await ws.recv()
        if first == "control":
            async for payload in ws:
                broadcast(listeners, payload)
            return
        if first == "burst":
            async for ask in ws:
                count, size = map(int, str(ask).split())
                message = message_of(size)
                for _ in range(count):
                    await ws.send(message)
            return
        listeners.add(ws)
        try:
            await ws.wait_closed()
        finally:
            listeners.discard(ws)

    async with serve(handler, "127.0.0.1", port, ping_interval=None, max_size=2**24):
        print("ready", flush=True)
        await asyncio.Future()


if __name__ == "__main__":
    assert websockets
    try:
        import uvloop  # the same loop as prickle serve
    except ImportError:
        asyncio.run(main(int(sys.argv[1])))
    else:
        uvloop.run(main(int(sys.argv[1])))
