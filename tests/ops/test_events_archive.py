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

from receiver import Receiver
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
    # the log's newest event is never moved (SQLite numbers the next after it): a newer task
    newest = server.data(ROUTE_HANDOFF, {"input": handoff}, planner)["handoff"]
    first = _log(server, alice)["edges"][0]["cursor"]
    cutoff = _now()

    for bad, says in [
        ("last tuesday", "is not a date"),
        ("2999-01-01", "is not in the past"),
    ]:
        refused = _archive(server, "--ended-before", bad)
        assert refused.returncode == 2 and says in refused.stderr, refused.stderr
    assert _log(server, alice)["total_count"] == 7  # nothing moved

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
    served = _log(server, alice)
    assert [e["node"]["task_id"] for e in served["edges"]] == [newest["id"]] * 2
    refused = server.error(LOG, {"after": first}, alice)
    assert refused["extensions"]["code"] == "cursor_archived"
    assert f"the oldest cursor still served is {oldest}" in refused["message"]
    assert _log(server, alice, after=oldest)["edges"] == served["edges"]
    async with streamed(server, alice, {"after": first}) as stream:
        message = await stream.message()
    assert message is not None and "cursor_archived" in json.dumps(message.data)

    again = server.data(ROUTE_HANDOFF, {"input": handoff}, planner)["handoff"]
    server.data(CANCEL, {"id": again["id"]}, planner)
    server.data(ROUTE_HANDOFF, {"input": handoff}, planner)  # newer than its events
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
    handoff = {"project": "work", "assignee": "bob/coder", "packet": PACKET}
    server.data(ROUTE_HANDOFF, {"input": handoff}, planner)  # newer: the cancel may move
    refused = _archive(server, "--ended-before", _now())
    assert refused.returncode == 2
    assert "conflict" in refused.stderr and hook["id"] in refused.stderr
    assert _log(server, alice, task_id=task["id"])["total_count"] == 3  # nothing moved


def test_a_webhook_enabled_again_behind_the_archive_delivers_the_archived_events(
    start_server, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    quick = {"PRICKLE_WEBHOOK_BACKOFF": "0.2", "PRICKLE_WEBHOOK_GIVE_UP_SECONDS": "1"}
    server = start_server("--allow-private-webhooks", env=quick)
    task, tokens = routed_task(server, PACKET)
    alice, planner = tokens["alice"], tokens["alice/planner"]
    with Receiver() as receiver:
        receiver.status = 500
        made = server.run_data("mutations/create_webhook", {"input": {"url": receiver.url}}, alice)
        hook = made["create_webhook"]["webhook"]["id"]
        server.data(CANCEL, {"id": task["id"]}, planner)  # it fails to deliver this, then stops
        _until(lambda: not _webhook(server, alice, hook)["enabled"])
        handoff = {"project": "work", "assignee": "bob/coder", "packet": PACKET}
        later = server.data(ROUTE_HANDOFF, {"input": handoff}, planner)["handoff"]

        # into a file, the events would leave the database, the disabled webhook's with them
        refused = _archive(server, "--ended-before", _now(), "--jsonl", str(tmp_path / "a.jsonl"))
        assert refused.returncode == 2 and hook in refused.stderr, refused.stderr
        assert not (tmp_path / "a.jsonl").exists()
        done = _archive(server, "--ended-before", _now())
        assert done.returncode == 0 and "archived 3 events" in done.stdout, done.stderr
        assert _log(server, alice, task_id=task["id"])["total_count"] == 3  # in its history

        receiver.status = 200
        server.run_data("mutations/enable_webhook", {"id": hook}, alice)
        got = [r.data for r in receiver.wait_for(3)]
    archived, *live = got
    assert (archived["task_id"], archived["to_state"]) == (task["id"], "cancelled")
    assert [e["task_id"] for e in live] == [later["id"]] * 2
    assert [e["seq"] for e in got] == sorted(e["seq"] for e in got)


def _webhook(server: Server, token: str, webhook_id: str) -> dict[str, Any]:
    found = server.run_data("queries/webhooks", {}, token)["webhooks"]
    [webhook] = [w for w in found if w["id"] == webhook_id]
    return webhook


def _until(check: Any, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.05)


def test_the_newest_event_stays_in_the_log_so_no_seq_is_given_twice(start_server) -> None:  # type: ignore[no-untyped-def]
    server = start_server()
    task, tokens = routed_task(server, PACKET)
    alice, planner = tokens["alice"], tokens["alice/planner"]
    server.data(CANCEL, {"id": task["id"]}, planner)  # the log's newest event: seq 3
    done = _archive(server, "--ended-before", _now())
    assert done.returncode == 0 and "archived 2 events" in done.stdout, done.stderr
    handoff = {"project": "work", "assignee": "bob/coder", "packet": PACKET}
    later = server.data(ROUTE_HANDOFF, {"input": handoff}, planner)["handoff"]
    mine = _log(server, alice, task_id=later["id"])["edges"]
    assert [int(e["cursor"]) for e in mine] == [4, 5]
    history = _log(server, alice, task_id=task["id"])
    assert [e["node"]["to_state"] for e in history["edges"]] == ["requested", "routed", "cancelled"]
