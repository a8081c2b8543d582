"""`prickle events archive --ended-before DATE [--jsonl FILE]`: the events of tasks that ended
before the date leave the log; a task's own history still reads them; a read of the log from
a cursor before them, by query or subscription, is refused with `cursor_archived` naming the
oldest cursor still served, never answered with a gap; bad input changes nothing."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from server import ROUTE_HANDOFF, Server, free_port, prickle, routed_task
from sse import streamed

PACKET = {"task": "Archive me", "deliverable_type": "code", "acceptance_criteria": ["kept"]}
LOG = "query($after: String, $task_id: ID) { task_events(after: $after, task_id: $task_id) {"
LOG += " total_count edges { cursor node { kind to_state task_id } } } }"
CANCEL = 'mutation($id: ID!) { cancel_task(task_id: $id, reason: "done with it") { state } }'


def _log(server: Server, token: str, **variables: Any) -> dict[str, Any]:
    found: dict[str, Any] = server.data(LOG, variables, token)["task_events"]
    return found


def _archive(server: Server, *args: str) -> Any:
    return prickle("events", "archive", "--database-url", server.database_url, *args)


def _now() -> str:
    time.sleep(0.01)  # past every moment written so far
    return datetime.now(UTC).isoformat()


async def test_archived_events_leave_the_log_and_stay_in_their_tasks_history(
    start_server, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    server = start_server()
    ended, tokens = routed_task(server, PACKET)
    alice, planner = tokens["alice"], tokens["alice/planner"]
    handoff = {"project": "work", "assignee": "bob/coder", "packet": PACKET}
    kept = server.data(ROUTE_HANDOFF, {"input": handoff}, planner)["handoff"]
    server.data(CANCEL, {"id": ended["id"]}, planner)
    first = _log(server, alice)["edges"][0]["cursor"]
    cutoff = _now()

    for bad, says in [
        ("last tuesday", "is not a date"),
        ("2999-01-01", "is not in the past"),
    ]:
        refused = _archive(server, "--ended-before", bad)
        assert refused.returncode == 2 and says in refused.stderr, refused.stderr
    assert _log(server, alice)["total_count"] == 5  # nothing moved

    done = _archive(server, "--ended-before", cutoff)
    assert done.returncode == 0, done.stderr
    assert "archived 3 events" in done.stdout
    oldest = done.stdout.rsplit("cursor ", 1)[1].split()[0]

    history = _log(server, alice, task_id=ended["id"])
    assert [e["node"]["to_state"] for e in history["edges"]] == [
        "requested",
        "routed",
        "cancelled",
    ]
    assert history["total_count"] == 3
    assert _log(server, alice, task_id=kept["id"])["total_count"] == 2
    # the log by cursor: served after the archived events only, the kept task's earlier
    # events included (they lie below the last archived one), so no reader sees a gap
    assert _log(server, alice) == {"total_count": 0, "edges": []}
    refused = server.error(LOG, {"after": first}, alice)
    assert refused["extensions"]["code"] == "cursor_archived"
    assert f"the oldest cursor still served is {oldest}" in refused["message"]
    assert _log(server, alice, after=oldest)["edges"] == []
    async with streamed(server, alice, {"after": first}) as stream:
        message = await stream.message()
    assert message is not None and "cursor_archived" in json.dumps(message.data)

    again = server.data(ROUTE_HANDOFF, {"input": handoff}, planner)["handoff"]
    server.data(CANCEL, {"id": again["id"]}, planner)
    exists = tmp_path / "exists.jsonl"
    exists.write_text("")
    refused = _archive(server, "--ended-before", _now(), "--jsonl", str(exists))
    assert refused.returncode == 2 and "exists" in refused.stderr
    out = tmp_path / "archive.jsonl"
    done = _archive(server, "--ended-before", _now(), "--jsonl", str(out))
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(e["task_id"], e["to_state"]) for e in lines] == [
        (again["id"], "requested"),
        (again["id"], "routed"),
        (again["id"], "cancelled"),
    ]
    assert _log(server, alice, task_id=again["id"])["total_count"] == 0  # in the file only


def test_archiving_waits_for_a_webhook_that_has_not_read_so_far(start_server) -> None:  # type: ignore[no-untyped-def]
    server = start_server("--allow-private-webhooks")
    task, tokens = routed_task(server, PACKET)
    alice, planner = tokens["alice"], tokens["alice/planner"]
    url = f"http://127.0.0.1:{free_port()}/nobody-listens"
    made = server.run_data("mutations/create_webhook", {"input": {"url": url}}, alice)
    hook = made["create_webhook"]["webhook"]
    server.data(CANCEL, {"id": task["id"]}, planner)  # an event it cannot deliver
    refused = _archive(server, "--ended-before", _now())
    assert refused.returncode == 2
    assert "conflict" in refused.stderr and hook["id"] in refused.stderr
    assert _log(server, alice, task_id=task["id"])["total_count"] == 3  # nothing moved
