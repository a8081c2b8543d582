"""The floor for fan-out: a bare `websockets` server that broadcasts what its control
connection sends to every other connection. Run as `python -m tests.bench.raw_broadcast PORT`.
"""

from __future__ import annotations

import asyncio
import sys

import websockets
from websockets.asyncio.server import ServerConnection, broadcast, serve


async def main(port: int) -> None:
    listeners: set[ServerConnection] = set()

    async def handler(ws: ServerConnection) -> None:
        first = await ws.recv()
        if first == "control":
            async for payload in ws:
                broadcast(listeners, payload)
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
