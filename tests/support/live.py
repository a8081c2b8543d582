"""WebSocket clients and a cast of principals for the subscription tests (test_subscriptions_*).

Everything here talks to a real `prickle serve` over real sockets: `opened()` is one
connection of either subprotocol, through the `websockets` library; mutations go over
HTTP. conftest.py's `live_server` is a module-scoped server with the debug hooks on
(`/debug/live` counts the hub's subscribers and the process's asyncio tasks), and its `cast`
a `Cast` on it.

    async with opened(server, token) as live:
        await live.subscribe({"task_id": task_id})
        snapshot = await live.event()
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from factory import PACKET
from server import Server, document, persons
from websockets.asyncio.client import ClientConnection, connect

TRANSPORT = "graphql-transport-ws"
LEGACY = "graphql-ws"
PROTOCOLS = (TRANSPORT, LEGACY)
DEBUG_ENV = {"PRICKLE_DEBUG_HOOKS": "1"}  # mounts /debug/live
ALICE_AND_AGENTS = ("alice", "alice/coder", "alice/writer")  # the cast a test needs least
EVENTS = document("subscriptions/task_events")
BRIEF = """subscription($project: String, $task_id: ID, $assignee: String, $after: String) {
  task_events(project: $project, task_id: $task_id, assignee: $assignee, after: $after) {
    cursor seq kind task_id project from_state to_state waiting_on verb actor version
  }
}"""


# one WebSocket connection


def init_payload(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


@dataclass
class Live:
    ws: ClientConnection
    protocol: str
    pings: int = 0

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send(json.dumps(message))

    async def receive(self, timeout: float = 10) -> dict[str, Any]:
        """The next message that is not a keep-alive (a ping is answered with a pong)."""
        async with asyncio.timeout(timeout):
            while True:
                message = json.loads(await self.ws.recv())
                if message["type"] == "ping":
                    self.pings += 1
                    await self.send({"type": "pong"})
                elif message["type"] not in ("ka", "pong"):
                    return message

    async def subscribe(
        self, variables: dict[str, Any] | None = None, id: str = "1", query: str = EVENTS
    ) -> None:
        kind = "subscribe" if self.protocol == TRANSPORT else "start"
        payload = {"query": query, "variables": variables or {}}
        await self.send({"id": id, "type": kind, "payload": payload})

    async def complete(self, id: str = "1") -> None:
        await self.send({"id": id, "type": "complete" if self.protocol == TRANSPORT else "stop"})

    async def event(self, id: str | None = None, timeout: float = 10) -> dict[str, Any]:
        """The next event; any other message fails the test."""
        message = await self.receive(timeout)
        assert message["type"] in ("next", "data"), message
        assert not message["payload"].get("errors"), message
        if id is not None:
            assert message["id"] == id, message
        return message["payload"]["data"]["task_events"]

    async def events(self, n: int, id: str | None = None, timeout: float = 10) -> list[dict]:
        return [await self.event(id, timeout) for _ in range(n)]

    async def errors(self, id: str = "1") -> list[dict[str, Any]]:
        """The errors that end operation `id` (sent as an error or as a result with errors)."""
        message = await self.receive()
        assert message["id"] == id, message
        if message["type"] == "error":
            payload = message["payload"]
            return payload if isinstance(payload, list) else [payload]
        assert message["type"] in ("next", "data") and message["payload"].get("errors"), message
        return message["payload"]["errors"]

    async def quiet(self, seconds: float = 0.5) -> list[dict[str, Any]]:
        """Whatever arrives within `seconds` (a test asserts it is nothing)."""
        extra: list[dict[str, Any]] = []
        try:
            while True:
                extra.append(await self.receive(seconds))
        except TimeoutError:
            return extra


@asynccontextmanager
async def opened(
    server: Server,
    token: str | None,
    protocol: str = TRANSPORT,
    ack_timeout: float = 10,
    **options: Any,
) -> AsyncIterator[Live]:
    """An acknowledged connection; `options` go to websockets' connect()."""
    options = {"open_timeout": 10, **options}
    async with connect(server.ws_url, subprotocols=[protocol], **options) as ws:  # type: ignore[list-item]
        live = Live(ws, protocol)
        await live.send({"type": "connection_init", "payload": init_payload(token)})
        ack = await live.receive(ack_timeout)
        assert ack == {"type": "connection_ack"}, ack
        yield live


# a cast of principals, fresh for each test


@dataclass
class Cast:
    """Owners with unique handles (`cast.id("alice")`, `cast.id("alice/coder")`) and tokens."""

    server: Server
    suffix: str = field(default_factory=lambda: uuid.uuid4().hex[:6])
    tokens: dict[str, str] = field(default_factory=dict)

    def id(self, name: str) -> str:
        owner, _, agent = name.partition("/")
        return f"{owner}-{self.suffix}" + (f"/{agent}" if agent else "")

    def token(self, name: str) -> str:
        return self.tokens[name]

    def add(self, *names: str) -> Cast:
        """Owners and agents (`"alice"`, `"alice/coder"`): owners first, then their agents."""
        owners = [n for n in names if "/" not in n]
        found = persons(self.server, *(self.id(o) for o in owners))
        self.tokens.update({o: found[self.id(o)] for o in owners})
        for name in (n for n in names if "/" in n):
            owner, _, agent = name.partition("/")
            self.tokens[name] = self.server.register(self.tokens[owner], agent)
        return self

    def handoff(self, by: str, assignee: str, project: str, **packet: Any) -> dict[str, Any]:
        """A task from `by` to `assignee` (both cast names) in `project` (made unique too)."""
        task = {
            "project": self.project(project),
            "assignee": self.id(assignee),
            "packet": {**PACKET, **packet},
        }
        return self.server.run_data("mutations/handoff", {"input": task}, self.token(by))["handoff"]

    def project(self, name: str) -> str:
        return f"{name}-{self.suffix}"

    def move(self, by: str, verb: str, task_id: str, **args: Any) -> dict[str, Any]:
        variables = {"task_id": task_id, **args}
        return self.server.run_data(f"mutations/{verb}", variables, self.token(by))[verb]


# the debug hook


def debug(server: Server) -> dict[str, Any]:
    response = server.client.get(f"{server.base_url}/debug/live")
    assert response.status_code == 200, response.text
    return response.json()


def settle(server: Server, until: Any, timeout: float = 15) -> dict[str, Any]:
    """Poll /debug/live until `until(figures)` holds; the figures then."""
    deadline = time.monotonic() + timeout
    while True:
        figures = debug(server)
        if until(figures) or time.monotonic() > deadline:
            return figures
        time.sleep(0.05)


async def settled(server: Server, until: Any, timeout: float = 15) -> dict[str, Any]:
    """`settle` from a coroutine, without stopping the event loop meanwhile."""
    return await asyncio.to_thread(settle, server, until, timeout)


async def subscribers_reach(server: Server, n: int, timeout: float = 15) -> None:
    """Wait until the hub holds `n` subscribers: their streams are registered, so every
    event committed from now on reaches them live."""
    figures = await settled(server, lambda f: f["subscribers"] == n, timeout)
    assert figures["subscribers"] == n, figures


def last_cursor(server: Server, token: str, project: str) -> str:
    """The cursor of the newest event of `project` the token sees."""
    query = (
        "query($p: String, $a: String) { task_events(project: $p, first: 500, after: $a) "
        "{ edges { cursor } page_info { has_next_page end_cursor } } }"
    )
    after = None
    while True:
        page = server.data(query, {"p": project, "a": after}, token)["task_events"]
        if page["page_info"]["end_cursor"]:
            after = page["page_info"]["end_cursor"]
        if not page["page_info"]["has_next_page"]:
            return after or "0"
