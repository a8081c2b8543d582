"""A GraphQL-over-SSE client for the tests (distinct connections mode), on httpx streaming.

    async with streamed(server, token, {"task_id": task_id}) as stream:
        event_id, snapshot = await stream.event()

Each message is read whole (its `id:`, `event:` and `data:` fields up to the blank line);
comments (`: ping`) are counted. A reader task fills a queue, so a test can wait for the
next message with a timeout without breaking the stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
from live import BRIEF
from server import Server

EVENT_STREAM = "text/event-stream"


@dataclass
class Message:
    event: str
    data: Any
    id: str | None


@dataclass
class Stream:
    response: httpx.Response
    messages: asyncio.Queue[Message | None] = field(default_factory=asyncio.Queue)
    comments: int = 0

    async def read(self) -> None:
        fields: dict[str, str] = {}
        async for line in self.response.aiter_lines():
            if line.startswith(":"):
                self.comments += 1
            elif line:
                name, _, value = line.partition(":")
                fields[name] = value.removeprefix(" ")
            elif fields:
                data = json.loads(fields["data"]) if fields.get("data") else None
                await self.messages.put(Message(fields["event"], data, fields.get("id")))
                fields = {}
        await self.messages.put(None)  # the server ended the stream

    async def message(self, timeout: float = 10) -> Message | None:
        """The next message; None when the stream has ended."""
        async with asyncio.timeout(timeout):
            return await self.messages.get()

    async def event(self, timeout: float = 10) -> tuple[str | None, dict[str, Any]]:
        """The next `next` message's id and its task event; anything else fails the test."""
        message = await self.message(timeout)
        assert message is not None and message.event == "next", message
        assert not message.data.get("errors"), message
        return message.id, message.data["data"]["task_events"]

    async def events(self, n: int) -> list[tuple[str | None, dict[str, Any]]]:
        return [await self.event() for _ in range(n)]

    async def quiet(self, seconds: float = 0.5) -> list[Message | None]:
        """Whatever arrives within `seconds` (a test asserts it is nothing)."""
        extra: list[Message | None] = []
        with contextlib.suppress(TimeoutError):
            while True:
                extra.append(await self.message(seconds))
        return extra


def headers(token: str | None, last_event_id: str | None = None) -> dict[str, str]:
    found = {"Accept": EVENT_STREAM}
    if token:
        found["Authorization"] = f"Bearer {token}"
    if last_event_id is not None:
        found["Last-Event-ID"] = last_event_id
    return found


@asynccontextmanager
async def streamed(
    server: Server,
    token: str | None,
    variables: dict[str, Any] | None = None,
    query: str = BRIEF,
    last_event_id: str | None = None,
) -> AsyncIterator[Stream]:
    """One subscription over SSE (POST); closing the context closes the connection."""
    body = {"query": query, "variables": variables or {}}
    timeout = httpx.Timeout(30, read=None)
    async with (
        httpx.AsyncClient(timeout=timeout) as client,
        client.stream(
            "POST", server.graphql_url, json=body, headers=headers(token, last_event_id)
        ) as response,
    ):
        assert response.status_code == 200, (response.status_code, await response.aread())
        assert response.headers["content-type"].startswith(EVENT_STREAM), response.headers
        stream = Stream(response)
        reader = asyncio.create_task(stream.read())
        try:
            yield stream
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, httpx.HTTPError):
                await reader
