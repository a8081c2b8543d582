"""prickle-mcp's tools as an agent developer meets them, through the MCP SDK's client: a tool
for every task verb of the server's schema, each with its annotations and an exact schema;
bounded lists; waiting for work; every bad argument a tool error (never a traceback on the
server's stderr); the package's version; `--help`; and the MCP Inspector CLI's listing."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from conftest import Cast, packet, result
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from test_mcp import PRICKLE_MCP, ROOT, TOOLS, error_text, over_stdio, value


@asynccontextmanager
async def logged_stdio(url: str, token: str, log: Path) -> AsyncIterator[ClientSession]:
    """`over_stdio` whose server writes its stderr to `log`."""
    server = StdioServerParameters(command=PRICKLE_MCP, args=["--url", url, "--token", token])
    with open(log, "w") as errlog:
        async with AsyncExitStack() as stack:
            read, write = await stack.enter_async_context(stdio_client(server, errlog=errlog))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            yield session


async def handed(planner: ClientSession, project: str, assignee: str = "bob/coder") -> str:
    task = {"project": project, "assignee": assignee, "packet": packet()}
    return str(value(await planner.call_tool("handoff", task))["id"])


async def test_every_tool_is_annotated_and_the_server_names_its_version(cast: Cast) -> None:
    server = StdioServerParameters(
        command=PRICKLE_MCP, args=["--url", cast.url, "--token", cast.tokens["bob/coder"]]
    )
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        started = await session.initialize()
        assert started.server_info.version == metadata.version("prickle-client")
        tools = (await session.list_tools()).tools
    assert {tool.name for tool in tools} == TOOLS
    for tool in tools:
        hints = tool.annotations
        assert hints is not None, tool.name
        assert None not in (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint)
        assert tool.description and "Error" not in tool.description
    by_name = {tool.name: tool for tool in tools}
    assert by_name["get_task"].annotations.read_only_hint  # type: ignore[union-attr]
    assert by_name["cancel_task"].annotations.destructive_hint  # type: ignore[union-attr]
    assert not by_name["accept_task"].annotations.read_only_hint  # type: ignore[union-attr]


async def test_the_schemas_are_exact(cast: Cast) -> None:
    async with over_stdio(cast.url, cast.tokens["bob/coder"]) as coder:
        tools = {tool.name: tool.input_schema for tool in (await coder.list_tools()).tools}
    wait_on = tools["wait_on"]
    assert wait_on["properties"]["on"]["enum"] == ["human", "agent", "subtasks"]
    (condition,) = wait_on["allOf"]
    assert condition["if"]["properties"]["on"] == {"const": "agent"}
    assert condition["then"]["required"] == ["agent"]
    assert condition["else"]["properties"]["agent"] == {"type": "null"}
    artifacts = tools["return_result"]["properties"]["result"]["properties"]["artifacts"]
    assert artifacts["items"]["required"] == ["ref"]  # sha256 and commit_sha may be null
    listing = tools["list_my_tasks"]["properties"]
    assert (listing["limit"]["default"], listing["limit"]["maximum"]) == (20, 100)
    assert "required" not in tools["list_my_tasks"]
    assert tools["decide_result"]["required"] == ["task_id", "decision"]
    assert tools["wait_for_work"]["properties"]["timeout_seconds"]["maximum"] == 60


async def test_list_my_tasks_is_bounded_and_goes_on_from_its_cursor(cast: Cast) -> None:
    token = cast.server.register(cast.tokens["bob"], "lister")
    async with (
        over_stdio(cast.url, cast.tokens["alice/planner"]) as planner,
        over_stdio(cast.url, token) as lister,
    ):
        made = [await handed(planner, "lists", "bob/lister") for _ in range(23)]
        first = value(await lister.call_tool("list_my_tasks", {}))
        assert [t["id"] for t in first["tasks"]] == made[:20]
        rest = value(await lister.call_tool("list_my_tasks", {"cursor": first["next_cursor"]}))
        assert [t["id"] for t in rest["tasks"]] == made[20:] and rest["next_cursor"] is None
        three = value(await lister.call_tool("list_my_tasks", {"limit": 3, "state": "routed"}))
        assert len(three["tasks"]) == 3


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        pytest.param("list_my_tasks", {"state": "finished"}, id="state-not-a-state"),
        pytest.param("list_my_tasks", {"limit": 101}, id="limit-over-100"),
        pytest.param("list_my_tasks", {"limit": 0}, id="limit-0"),
        pytest.param("list_my_tasks", {"cursor": "not a cursor"}, id="bad-cursor"),
        pytest.param("wait_for_work", {"timeout_seconds": 61}, id="wait-over-60"),
        pytest.param("wait_on", {"task_id": "t", "on": "agent"}, id="wait-on-agent-naming-none"),
        pytest.param("wait_on", {"task_id": "t", "on": "human", "agent": "a/b"}, id="human-agent"),
        pytest.param("decide_result", {"task_id": "t", "decision": "maybe"}, id="decision"),
        pytest.param("return_result", {"task_id": "t", "result": "done"}, id="result-text"),
        pytest.param("get_task", {}, id="no-task-id"),
    ],
)
async def test_a_bad_argument_is_a_tool_error_and_no_traceback(
    cast: Cast, tmp_path: Path, tool: str, arguments: dict[str, Any]
) -> None:
    log = tmp_path / "stderr"
    async with logged_stdio(cast.url, cast.tokens["bob/coder"], log) as coder:
        called = await coder.call_tool(tool, arguments)
        assert called.is_error
        assert error_text(called)
    assert "Traceback" not in log.read_text()


async def test_wait_on_an_agent_by_tool_and_its_answer_by_that_agent(cast: Cast) -> None:
    async with (
        over_stdio(cast.url, cast.tokens["alice/planner"]) as planner,
        over_stdio(cast.url, cast.tokens["bob/coder"]) as coder,
        over_stdio(cast.url, cast.tokens["bob/helper"]) as helper,
    ):
        task_id = await handed(planner, "asks")
        await coder.call_tool("accept_task", {"task_id": task_id})
        alone = await coder.call_tool("wait_on", {"task_id": task_id, "on": "subtasks"})
        assert error_text(alone).startswith("invalid_input:")  # it has no subtasks
        asked = {"task_id": task_id, "on": "agent", "agent": "bob/helper", "question": "db?"}
        waiting = value(await coder.call_tool("wait_on", asked))
        assert waiting["question"]["answerers"] == ["bob/helper"]
        refused = await planner.call_tool("answer", {"task_id": task_id, "answer": "no"})
        text = error_text(refused)
        assert text.startswith("forbidden:") and "allowed_verbs now: cancel_task" in text
        seen = value(await helper.call_tool("get_task", {"task_id": task_id}))
        assert "answer" in seen["allowed_verbs"]
        answered = value(await helper.call_tool("answer", {"task_id": task_id, "answer": "pg"}))
        assert (answered["state"], answered["question"]) == ("accepted", None)


async def test_an_owner_decides_a_result_by_tool(cast: Cast) -> None:
    async with (
        over_stdio(cast.url, cast.tokens["alice/planner"]) as planner,
        over_stdio(cast.url, cast.tokens["bob/coder"]) as coder,
        over_stdio(cast.url, cast.tokens["alice"]) as alice,
    ):
        task_id = await handed(planner, "review")  # alice reviews the results of `review`
        await coder.call_tool("accept_task", {"task_id": task_id})
        sent = value(
            await coder.call_tool("return_result", {"task_id": task_id, "result": result()})
        )
        assert sent["state"] == "approval" and "decide_result" not in sent["allowed_verbs"]
        decided = {"task_id": task_id, "decision": "accept", "reason": "good"}
        assert value(await alice.call_tool("decide_result", decided))["state"] == "completed"


async def test_wait_for_work_returns_work_waiting_then_blocks_until_more_is_routed(
    cast: Cast,
) -> None:
    token = cast.server.register(cast.tokens["bob"], "waiter")
    async with (
        over_stdio(cast.url, cast.tokens["alice/planner"]) as planner,
        over_stdio(cast.url, token) as waiter,
    ):
        first = await handed(planner, "work", "bob/waiter")
        found = value(await waiter.call_tool("wait_for_work", {"timeout_seconds": 5}))
        assert [t["id"] for t in found["tasks"]] == [first]
        await waiter.call_tool("accept_task", {"task_id": first})
        idle = value(await waiter.call_tool("wait_for_work", {"timeout_seconds": 1}))
        assert idle["tasks"] == []

        async def later() -> str:
            await asyncio.sleep(1.5)
            return await handed(planner, "work", "bob/waiter")

        sent = asyncio.create_task(later())
        woken = value(
            await waiter.call_tool(
                "wait_for_work", {"timeout_seconds": 30, "cursor": idle["cursor"]}
            )
        )
        assert [t["id"] for t in woken["tasks"]] == [await sent]
        assert woken["cursor"] is not None
        await waiter.call_tool("accept_task", {"task_id": woken["tasks"][0]["id"]})
        quiet = value(
            await waiter.call_tool(
                "wait_for_work", {"timeout_seconds": 1, "cursor": woken["cursor"]}
            )
        )
        assert quiet["tasks"] == []  # the accept came after the cursor: no work in it
        assert int(quiet["cursor"]) > int(woken["cursor"])


async def test_by_default_evidence_of_the_right_shape_completes_as_the_tool_says(
    cast: Cast,
) -> None:
    async with (
        over_stdio(cast.url, cast.tokens["alice/planner"]) as planner,
        over_stdio(cast.url, cast.tokens["bob/coder"]) as coder,
    ):
        tools = {tool.name: tool for tool in (await coder.list_tools()).tools}
        said = " ".join((tools["return_result"].description or "").split())
        assert "even evidence that covers no criterion" in said
        assert "require_complete_evidence" in said
        uncited = result(evidence=[{"kind": "note", "summary": "it works"}])
        for project, ends in (("lenient", "completed"), ("strict", "working")):
            task_id = await handed(planner, project)
            await coder.call_tool("accept_task", {"task_id": task_id})
            sent = {"task_id": task_id, "result": uncited}
            done = value(await coder.call_tool("return_result", sent))
            assert done["state"] == ends, project
            assert done["result"]["evidence_report"]["uncovered"] == [0, 1]
            if project == "lenient":  # alice asks for complete evidence from here on
                with cast.client("alice") as alice:
                    alice.set_result_rule(
                        {"policy": "require_complete_evidence", "project": "strict"}
                    )


def test_help_describes_each_option() -> None:
    done = subprocess.run([PRICKLE_MCP, "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    for option, words in {
        "--url": "GraphQL endpoint",
        "--token": "token",
        "--transport": "streamable-http",
        "--host": "address",
        "--port": "port",
        "--version": "version",
    }.items():
        assert option in done.stdout and words in done.stdout, option
    shown = subprocess.run([PRICKLE_MCP, "--version"], capture_output=True, text=True, timeout=60)
    assert shown.stdout.strip() == f"prickle-mcp {metadata.version('prickle-client')}"


# the MCP Inspector's command line, from npm (as tests/api/test_subscriptions_sse_client.py installs
# graphql-sse): skipped with a reason where node or npm is missing, failed instead under CI

INSPECTOR = "@modelcontextprotocol/inspector@0.15"
CACHE = ROOT / ".cache" / "npm-mcp"


def _required() -> bool:
    return os.environ.get("CI") == "true" or os.environ.get("PRICKLE_REQUIRE_NPM") == "1"


@pytest.fixture(scope="module")
def inspector() -> Path:
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        reason = f"no {' and no '.join(missing)} on PATH: install Node.js 18+ with npm"
        if _required():
            pytest.fail(reason)
        pytest.skip(reason)
    command = CACHE / "node_modules" / ".bin" / "mcp-inspector"
    if not command.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            ["npm", "install", "--prefix", str(CACHE), "--no-audit", "--no-fund", INSPECTOR],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, f"npm install {INSPECTOR} failed:\n{done.stderr}"
    return command


def test_the_mcp_inspector_lists_every_tool(cast: Cast, inspector: Path) -> None:
    args = ["--url", cast.url, "--token", cast.tokens["bob/coder"]]
    done = subprocess.run(
        [str(inspector), "--cli", PRICKLE_MCP, *args, "--method", "tools/list"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)["tools"]
    assert {tool["name"] for tool in listed} == TOOLS
    assert all("annotations" in tool for tool in listed)
