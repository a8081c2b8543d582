"""`prickle-mcp` driven by the MCP SDK's own client, over stdio and over streamable HTTP:
two agents hand a task over, accept it and return its result with tool calls alone."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from conftest import Cast, packet, result
from harness import free_port
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, TextContent, TextResourceContents

PRICKLE_MCP = str(Path(sys.executable).parent / "prickle-mcp")
ROOT = Path(__file__).resolve().parents[3]


def task_verbs() -> set[str]:
    """The server's task verbs: each Mutation field of schema.graphql taking a task_id."""
    from graphql import build_schema

    mutation = build_schema((ROOT / "schema.graphql").read_text()).mutation_type
    assert mutation is not None
    return {name for name, field in mutation.fields.items() if "task_id" in field.args}


TOOLS = task_verbs() | {
    "list_my_tasks",
    "wait_for_work",
    "get_task",
    "handoff",
    "request_capability",
}


@asynccontextmanager
async def over_stdio(url: str, token: str) -> AsyncIterator[ClientSession]:
    server = StdioServerParameters(command=PRICKLE_MCP, args=["--url", url, "--token", token])
    async with AsyncExitStack() as stack:
        read, write = await stack.enter_async_context(stdio_client(server))
        session = await stack.enter_async_context(ClientSession(read, write))
        await session.initialize()
        yield session


@asynccontextmanager
async def over_http(mcp_url: str, token: str) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"}
    async with AsyncExitStack() as stack:
        http = await stack.enter_async_context(httpx2.AsyncClient(headers=headers, timeout=30))
        read, write = await stack.enter_async_context(
            streamable_http_client(mcp_url, http_client=http)
        )
        session = await stack.enter_async_context(ClientSession(read, write))
        await session.initialize()
        yield session


@pytest.fixture(scope="module")
def http_mcp(cast: Cast, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`prickle-mcp --transport streamable-http` without a token of its own: each request's
    Authorization header names its agent."""
    port = free_port()
    logs = tmp_path_factory.mktemp("mcp") / "log"
    command = [PRICKLE_MCP, "--url", cast.url, "--transport", "streamable-http"]
    with open(logs, "wb") as log:
        process = subprocess.Popen([*command, "--port", str(port)], stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            assert process.poll() is None, logs.read_text()
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def value(called: CallToolResult) -> Any:
    assert not called.is_error, called.content
    content = called.structured_content
    return (
        content["result"] if isinstance(content, dict) and set(content) == {"result"} else content
    )


def error_text(called: CallToolResult) -> str:
    """A tool error's text, after the SDK's "Error executing tool NAME: "."""
    assert called.is_error
    first = called.content[0]
    assert isinstance(first, TextContent)
    return first.text.split(": ", 1)[1] if first.text.startswith("Error executing") else first.text


async def round_trip(planner: ClientSession, coder: ClientSession) -> str:
    """handoff -> accept -> start -> checkpoint -> result, by tool calls; the task's id."""
    task = value(
        await planner.call_tool(
            "handoff", {"project": "mcp", "assignee": "bob/coder", "packet": packet()}
        )
    )
    assert task["state"] == "routed"
    inbox = value(await coder.call_tool("list_my_tasks", {"state": "routed", "project": "mcp"}))
    assert task["id"] in [t["id"] for t in inbox["tasks"]]
    task_id = task["id"]
    accepted = value(await coder.call_tool("accept_task", {"task_id": task_id}))
    assert accepted["state"] == "accepted" and "start_task" in accepted["allowed_verbs"]
    working = value(
        await coder.call_tool(
            "start_task", {"task_id": task_id, "expected_version": accepted["version"]}
        )
    )
    assert working["state"] == "working"
    saved = value(
        await coder.call_tool(
            "save_checkpoint", {"task_id": task_id, "checkpoint": {"progress": "half way"}}
        )
    )
    assert saved["latest_checkpoint"]["progress"] == "half way"
    done = value(await coder.call_tool("return_result", {"task_id": task_id, "result": result()}))
    assert done["state"] == "completed"
    seen = value(await planner.call_tool("get_task", {"task_id": task_id}))
    assert seen["state"] == "completed" and seen["result"]["summary"] == result()["summary"]
    return str(task_id)


async def test_stdio_two_agents_round_trip(cast: Cast) -> None:
    async with (
        over_stdio(cast.url, cast.tokens["alice/planner"]) as planner,
        over_stdio(cast.url, cast.tokens["bob/coder"]) as coder,
    ):
        tools = (await planner.list_tools()).tools
        assert {tool.name for tool in tools} == TOOLS
        handoff = next(tool for tool in tools if tool.name == "handoff")
        shape = handoff.input_schema["properties"]["packet"]
        assert shape["required"] == ["task", "deliverable_type", "acceptance_criteria"]
        assert "code" in shape["properties"]["deliverable_type"]["enum"]
        task_id = await round_trip(planner, coder)

        refused = await coder.call_tool("accept_task", {"task_id": task_id})
        text = error_text(refused)
        assert text.startswith("invalid_state:") and "allowed_verbs" in text

        resource = await planner.read_resource(f"prickle://tasks/{task_id}")
        first = resource.contents[0]
        assert isinstance(first, TextResourceContents)
        assert json.loads(first.text)["state"] == "completed"
        history = await planner.read_resource(f"prickle://tasks/{task_id}/history")
        first = history.contents[0]
        assert isinstance(first, TextResourceContents)
        moves = [event["to_state"] for event in json.loads(first.text)]
        assert moves[-1] == "completed" and "accepted" in moves


async def test_streamable_http_two_agents_round_trip(cast: Cast, http_mcp: str) -> None:
    async with (
        over_http(http_mcp, cast.tokens["alice/planner"]) as planner,
        over_http(http_mcp, cast.tokens["bob/coder"]) as coder,
    ):
        assert {tool.name for tool in (await coder.list_tools()).tools} == TOOLS
        task_id = await round_trip(planner, coder)
        other = value(
            await planner.call_tool(
                "handoff", {"project": "mcp", "assignee": "bob/coder", "packet": packet()}
            )
        )
        refused = await planner.call_tool("accept_task", {"task_id": other["id"]})
        assert error_text(refused).startswith("forbidden:")
        missing = await coder.call_tool("get_task", {"task_id": "no-such-task"})
        assert error_text(missing).startswith("not_found:")
        assert task_id != other["id"]


async def test_a_tool_error_for_bad_input_says_what_to_fix(cast: Cast) -> None:
    async with over_stdio(cast.url, cast.tokens["alice/planner"]) as planner:
        called = await planner.call_tool(
            "handoff",
            {"project": "mcp", "assignee": "bob/coder", "packet": packet(acceptance_criteria=[])},
        )
        assert error_text(called).startswith("invalid_input:")


async def test_wait_on_hand_back_and_cancel_task_by_tool_calls(cast: Cast, http_mcp: str) -> None:
    async with (
        over_http(http_mcp, cast.tokens["alice/planner"]) as planner,
        over_http(http_mcp, cast.tokens["bob/coder"]) as coder,
    ):
        tools = {tool.name: tool for tool in (await coder.list_tools()).tools}
        checkpoint = tools["save_checkpoint"].input_schema["properties"]["checkpoint"]
        assert checkpoint["required"] == ["progress"]
        returned = tools["return_result"].input_schema["properties"]["result"]
        assert {"summary", "evidence", "provenance"} <= set(returned["required"])

        async def handed() -> str:
            task = {"project": "mcp", "assignee": "bob/coder", "packet": packet()}
            return str(value(await planner.call_tool("handoff", task))["id"])

        waiting, back, called_off = await handed(), await handed(), await handed()
        await coder.call_tool("accept_task", {"task_id": waiting})
        await coder.call_tool("start_task", {"task_id": waiting})
        asked = {"task_id": waiting, "on": "human", "question": "Which port?"}
        paused = value(await coder.call_tool("wait_on", asked))
        assert paused["state"] == "waiting" and paused["waiting_on"] == "human"

        reason = {"task_id": back, "reason": "not mine", "checkpoint": {"progress": "read it"}}
        assert value(await coder.call_tool("hand_back", reason))["state"] == "returned"

        cancelled = value(await planner.call_tool("cancel_task", {"task_id": called_off}))
        assert cancelled["state"] == "cancelled" and cancelled["allowed_verbs"] == []
        refused = await coder.call_tool("cancel_task", {"task_id": waiting})
        assert error_text(refused).startswith("forbidden:")
