"""prickle-mcp's tools are the server's declarations: a verb a server declares beyond the
packaged ones (with PRICKLE_VERBS and a copy of the table that names it, as the server's
tests/api/test_verb_extension.py adds `pause_task`) is a tool, described by its guide, as
destructive as it is declared, its argument's doc its parameter's, and it makes its move,
with no change to the client. Without a server to read them from, prickle-mcp says so and
stops."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import packet
from harness import ROOT, Server, free_port, running
from test_mcp import PRICKLE_MCP, over_stdio, value

DECLARATION = """
from app.service import acts
from app.service.arguments import Reason
from app.service.verbs import declare

pause_task = declare(
    "pause_task",
    Reason,
    acts.stop,
    description="Pause the run.",
    guide="Pause your run; it waits on `stopped` until its owner resumes it.",
    destructive=True,
)
"""
HANDOFF = "mutation($i: HandoffInput!) { handoff(input: $i) { id } }"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, dict[str, str]]]:
    directory = tmp_path_factory.mktemp("verb")
    table = json.loads((ROOT / "app" / "domain" / "protocol" / "transitions.json").read_text())
    (move,) = [m for m in table["moves"] if (m["from"], m["to"]) == ("working", "waiting")]
    move["verbs"].append("pause_task")
    move["rules"].append({"verb": "pause_task", "actor": "assignee"})
    (directory / "transitions.json").write_text(json.dumps(table))
    (directory / "pause_verbs.py").write_text(DECLARATION)
    path = os.pathsep.join(p for p in (str(directory), os.environ.get("PYTHONPATH")) if p)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PRICKLE_TRANSITIONS", str(directory / "transitions.json"))
        patch.setenv("PRICKLE_VERBS", "pause_verbs")
        patch.setenv("PYTHONPATH", path)
        with running(directory / "server", "--rate-limit", "0") as server:
            tokens = {who: server.token(who) for who in ("alice", "bob")}
            tokens["alice/planner"] = server.register(tokens["alice"], "planner")
            tokens["bob/coder"] = server.register(tokens["bob"], "coder")
            server.allow(tokens["bob"], "alice")
            yield server, tokens


async def test_a_verb_the_server_declares_is_a_tool_that_makes_its_move(
    served: tuple[Server, dict[str, str]],
) -> None:
    server, tokens = served
    given = {"project": "work", "assignee": "bob/coder", "packet": packet()}
    task_id = server.data(HANDOFF, {"i": given}, tokens["alice/planner"])["handoff"]["id"]
    async with over_stdio(server.url, tokens["bob/coder"]) as coder:
        tools = {tool.name: tool for tool in (await coder.list_tools()).tools}
        pause: Any = tools["pause_task"]
        guide = "Pause your run; it waits on `stopped` until its owner resumes it."
        assert pause.description.startswith(guide)
        assert pause.annotations.destructive_hint is True
        reason = pause.input_schema["properties"]["reason"]
        assert reason["description"] == "Why, in a sentence (recorded on the task's event)."
        for verb in ("accept_task", "start_task"):
            value(await coder.call_tool(verb, {"task_id": task_id}))
        paused = value(await coder.call_tool("pause_task", {"task_id": task_id, "reason": "x"}))
    assert (paused["state"], paused["waiting_on"]) == ("waiting", "stopped")
    assert "resume_run" not in paused["allowed_verbs"]  # the assignee's owner resumes it


def test_prickle_mcp_without_its_server_says_so_and_stops() -> None:
    url = f"http://127.0.0.1:{free_port()}/graphql"  # nothing listens there
    command = [PRICKLE_MCP, "--url", url, "--token", "t"]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )
    assert done.returncode == 2
    assert done.stderr.startswith(f"prickle-mcp: could not read the task verbs at {url}: ")
    assert "Traceback" not in done.stderr
