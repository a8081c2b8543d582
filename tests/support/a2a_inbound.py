"""Helpers of the A2A inbound tests: an agent's base URL, raw JSON-RPC calls, SSE reads, and
the worker's moves made through GraphQL."""

from __future__ import annotations

import json
from typing import Any

import httpx
from live import Cast

VERSION = {"A2A-Version": "1.0"}
NOW = {"returnImmediately": True}  # a SendMessage's configuration: answered at once
RESULT = {
    "summary": "the answer is 42",
    "provenance": "agent_generated",
    "evidence": [{"kind": "test_output", "summary": "computed", "criteria": [0]}],
}


def base(cast: Cast, agent: str) -> str:
    return f"{cast.server.base_url}/a2a/{cast.id(agent)}"


def headers(cast: Cast, who: str | None, **more: str) -> dict[str, str]:
    found = {**VERSION, **more}
    if who is not None:
        found["Authorization"] = f"Bearer {cast.token(who)}"
    return found


def rpc(
    cast: Cast, who: str | None, agent: str, method: str, params: Any, **more: str
) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return httpx.post(base(cast, agent), json=body, headers=headers(cast, who, **more), timeout=30)


def message(text: str, message_id: str, **fields: Any) -> dict[str, Any]:
    return {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}], **fields}


def sse_events(
    cast: Cast, who: str, agent: str, method: str, params: Any, count: int, **more: str
) -> list[tuple[str | None, dict[str, Any]]]:
    """The first `count` events of a streaming method: (SSE id, JSON-RPC result), then the
    connection is dropped."""
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    found: list[tuple[str | None, dict[str, Any]]] = []
    with httpx.stream(
        "POST", base(cast, agent), json=body, headers=headers(cast, who, **more), timeout=30
    ) as response:
        assert response.status_code == 200, response.read()
        event_id: str | None = None
        for line in response.iter_lines():
            if line.startswith("id:"):
                event_id = line[3:].strip()
            elif line.startswith("data:"):
                found.append((event_id, json.loads(line[5:].strip())))
                event_id = None
                if len(found) == count:
                    break
    return found


def work(cast: Cast, agent: str, task_id: str, *verbs: str) -> dict[str, Any]:
    task: dict[str, Any] = {}
    for verb in verbs:
        task = cast.move(agent, verb, task_id)
    return task


def ask(cast: Cast, agent: str, task_id: str, question: str) -> dict[str, Any]:
    return cast.move(agent, "wait_on", task_id, on="human", question=question)


def give_result(cast: Cast, agent: str, task_id: str) -> dict[str, Any]:
    return cast.move(agent, "return_result", task_id, result=RESULT)


def rest_sse_ids(cast: Cast, who: str, agent: str, task_id: str, last: str) -> list[str | None]:
    """The SSE ids of HTTP+JSON's SubscribeToTask after the cursor `last`, to the end."""
    url = f"{base(cast, agent)}/tasks/{task_id}:subscribe"
    found: list[str | None] = []
    wanted = headers(cast, who, **{"Last-Event-ID": last})
    with httpx.stream("GET", url, headers=wanted, timeout=30) as response:
        assert response.status_code == 200, response.read()
        event_id: str | None = None
        for line in response.iter_lines():
            if line.startswith("id:"):
                event_id = line[3:].strip()
            elif line.startswith("data:"):
                found.append(event_id)
                event_id = None
    return found
