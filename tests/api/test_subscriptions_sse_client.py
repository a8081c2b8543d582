"""task_events through the npm `graphql-sse` client (createClient, distinct connections
mode) in node, against a real `prickle serve`.

The test installs `graphql-sse@2` itself, once, into `.cache/npm-graphql-sse/` (the
tests' npm helper): where node or npm is missing the test skips and says so, except under
CI, where that fails the run.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import npm
import pytest
from live import Cast

pytestmark = pytest.mark.once  # the same on either backend: not run on PostgreSQL

CAST = ("alice", "alice/coder", "alice/writer")  # conftest's `cast`
PACKAGE = "graphql-sse@2"

SCRIPT = r"""
const { createClient } = require('graphql-sse');
const [url, token, taskId, count, lastEventId] = process.argv.slice(2);
const headers = token ? { Authorization: `Bearer ${token}` } : {};
if (lastEventId) headers['Last-Event-ID'] = lastEventId;
const client = createClient({ url, headers, retryAttempts: 0 });
const query = `subscription($task_id: ID) {
  task_events(task_id: $task_id) { cursor seq kind verb to_state }
}`;
(async () => {
  let n = 0;
  try {
    for await (const result of client.iterate({ query, variables: { task_id: taskId } })) {
      console.log(JSON.stringify(result));
      if (++n >= Number(count)) break;
    }
  } finally {
    client.dispose();
  }
})().catch((error) => {
  console.error(String(error));
  process.exit(1);
});
"""


@pytest.fixture(scope="module")
def node_modules() -> Path:
    """Where `graphql-sse` is installed (installed now if it is not yet)."""
    return npm.installed("graphql-sse", (PACKAGE,), "graphql-sse", node=18)


async def _client(
    modules: Path,
    tmp_path: Path,
    url: str,
    token: str | None,
    task_id: str,
    count: int,
    last_event_id: str = "",
) -> asyncio.subprocess.Process:
    script = tmp_path / "subscribe.cjs"
    script.write_text(SCRIPT)
    return await asyncio.create_subprocess_exec(
        "node",
        str(script),
        url,
        token or "",
        task_id,
        str(count),
        last_event_id,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "NODE_PATH": str(modules)},
    )


async def _line(client: asyncio.subprocess.Process) -> dict[str, Any]:
    assert client.stdout is not None
    line = await asyncio.wait_for(client.stdout.readline(), timeout=20)
    assert line, "the client ended early"
    result: dict[str, Any] = json.loads(line)
    assert not result.get("errors"), result
    return result["data"]["task_events"]


async def test_graphql_sse_client_receives_live_events(
    cast: Cast, node_modules: Path, tmp_path: Path
) -> None:
    task = cast.handoff("alice/coder", "alice/writer", "npm")
    url = cast.server.graphql_url
    client = await _client(node_modules, tmp_path, url, cast.token("alice"), task["id"], 4)
    try:
        snapshot = await _line(client)  # the subscription is registered: moves reach it live
        assert (snapshot["kind"], snapshot["to_state"]) == ("snapshot", "routed")
        verbs = ["accept_task", "start_task", "stop_run"]
        for verb in verbs:
            by = "alice" if verb == "stop_run" else "alice/writer"
            await asyncio.to_thread(cast.move, by, verb, task["id"])
        events = [await _line(client) for _ in verbs]
        assert [e["verb"] for e in events] == verbs
        seqs = [snapshot["seq"], *(e["seq"] for e in events)]
        assert seqs == sorted(set(seqs))
        assert await asyncio.wait_for(client.wait(), timeout=20) == 0
    finally:
        if client.returncode is None:
            client.kill()
            await client.wait()


async def test_graphql_sse_client_resumes_with_last_event_id_exactly_after_it(
    cast: Cast, node_modules: Path, tmp_path: Path
) -> None:
    """A reconnect sending `Last-Event-ID` (graphql-sse sends it as a header it is given)
    gets exactly the events made while no client was connected, then the live ones."""
    task = cast.handoff("alice/coder", "alice/writer", "npm-resume")
    url, token = cast.server.graphql_url, cast.token("alice")
    first = await _client(node_modules, tmp_path, url, token, task["id"], 2)
    try:
        snapshot = await _line(first)
        await asyncio.to_thread(cast.move, "alice/writer", "accept_task", task["id"])
        accepted = await _line(first)
        assert await asyncio.wait_for(first.wait(), timeout=20) == 0
    finally:
        if first.returncode is None:
            first.kill()
            await first.wait()
    assert accepted["verb"] == "accept_task"
    await asyncio.to_thread(cast.move, "alice/writer", "start_task", task["id"])  # missed
    await asyncio.to_thread(cast.move, "alice", "stop_run", task["id"])  # missed
    again = await _client(
        node_modules, tmp_path, url, token, task["id"], 3, last_event_id=accepted["cursor"]
    )
    try:
        missed = [await _line(again) for _ in range(2)]
        await asyncio.to_thread(cast.move, "alice", "resume_run", task["id"])
        live = await _line(again)
        assert await asyncio.wait_for(again.wait(), timeout=20) == 0
    finally:
        if again.returncode is None:
            again.kill()
            await again.wait()
    assert [e["verb"] for e in missed] == ["start_task", "stop_run"]
    assert live["verb"] == "resume_run"
    seqs = [e["seq"] for e in (snapshot, accepted, *missed, live)]
    assert seqs == sorted(set(seqs)), "a gap or a duplicate across the reconnect"


async def test_graphql_sse_client_is_told_of_a_bad_token(
    cast: Cast, node_modules: Path, tmp_path: Path
) -> None:
    url = cast.server.graphql_url
    client = await _client(node_modules, tmp_path, url, "not-a-token", "T", 1)
    _, stderr = await asyncio.wait_for(client.communicate(), timeout=20)
    assert client.returncode == 1
    assert "401" in stderr.decode(), stderr
