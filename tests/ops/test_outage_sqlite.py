"""A SQLite file that cannot grow (a full disk, emulated with `PRAGMA max_page_count`) or
becomes read-only: writes answer `unavailable` (HTTP 503, Retry-After), nothing is half
written, reads still answer, the outage is logged once (a WARNING naming the error's class,
an INFO when writes commit again, no traceback) and the server recovers by itself.

The file is made full or read-only under a real `prickle serve` by the `sqlite_faults` helpers."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a_inbound import VERSION
from factory import PACKET
from server import BACKEND, Server
from sqlalchemy.engine import make_url
from sqlite_faults import faulty

pytestmark = pytest.mark.skipif(BACKEND != "sqlite", reason="a SQLite file's own faults")

HANDOFF = "mutation($input: HandoffInput!) { handoff(input: $input) { id } }"
MOST = 400  # handoffs tried before the file must have been found full


def handoff(server: Server, agent: str, n: int) -> httpx.Response:
    task = {"project": "outage", "assignee": agent, "packet": {**PACKET, "task": f"task {n}"}}
    body = {"query": HANDOFF, "variables": {"input": task}}
    return server.client.post(server.graphql_url, json=body, headers=server.headers())


def log_lines(server: Server) -> list[dict[str, Any]]:
    text = (server.logs / "stderr").read_text()
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def rows(server: Server) -> tuple[int, int, int]:
    """Tasks, events, and tasks without their `created` event, as the file holds them."""
    path = make_url(server.database_url).database
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        tasks = db.execute("SELECT count(*) FROM tasks").fetchone()[0]
        events = db.execute("SELECT count(*) FROM events").fetchone()[0]
        bare = db.execute(
            "SELECT count(*) FROM tasks WHERE id NOT IN "
            "(SELECT task_id FROM events WHERE kind = 'created')"
        ).fetchone()[0]
    return tasks, events, bare


def assert_refused(response: httpx.Response) -> None:
    assert response.status_code == 503, response.text
    assert response.headers["retry-after"] == "1"
    (error,) = response.json()["errors"]
    assert error["extensions"] == {"code": "unavailable", "retry_after": 1.0, "outcome": "none"}
    assert "nothing changed" in error["message"]


def a2a_send(server: Server, n: int) -> httpx.Response:
    """A2A's SendMessage to the agent (JSON-RPC): a handoff as the GraphQL one is."""
    said = {"messageId": f"outage-{n}", "role": "ROLE_USER", "parts": [{"text": f"task {n}"}]}
    params = {"message": said, "configuration": {"returnImmediately": True}}  # not its wait
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}
    headers = {**server.headers(), **VERSION}
    return server.client.post(f"{server.base_url}/a2a/admin/coder", json=body, headers=headers)


def assert_logged_once(server: Server, error_class: str) -> None:
    """One warning per outage and one line when it ends, never one per refused request. A
    full file may still take a small write in place (a token's minute of last use, in a new
    minute): that write ends the outage, and the next refusal begins another, said again."""
    said = [
        x
        for x in log_lines(server)
        if (x["level"] == "warning" and "database" in x["message"])
        or (x["level"] == "info" and "database is back" in x["message"])
    ]
    assert said, "the outage was not logged"
    for n, line in enumerate(said):  # down, back, down, back, ...: each outage said once
        if n % 2 == 0:
            assert line["level"] == "warning", said
            assert "refuses writes" in line["message"] and error_class in line["message"], line
        else:
            assert "database is back" in line["message"], said
    assert len(said) % 2 == 0, f"the last outage never ended: {said}"
    assert "Traceback" not in (server.logs / "stderr").read_text()


@pytest.mark.parametrize("fault", ["full", "read-only"])
def test_a_database_file_that_refuses_writes_answers_unavailable_and_recovers(
    start_server: Any, tmp_path: Path, fault: str
) -> None:
    env, control = faulty(tmp_path)
    server = start_server(env=env)
    server.register(server.owner_token, "coder")
    agent = "admin/coder"
    assert handoff(server, agent, 0).status_code == 200
    control.write_text(fault)
    made = 1
    for n in range(1, MOST):
        response = handoff(server, agent, n)
        if response.json().get("errors"):
            break
        made += 1  # (a full file still has room in its last pages)
    assert_refused(response)
    tasks, events, bare = rows(server)
    assert (tasks, bare) == (made, 0)
    assert events >= tasks
    assert server.data("{ tasks(first: 1) { total_count } }")["tasks"]["total_count"] == made
    assert_refused(handoff(server, agent, MOST))  # refused again, and logged no more
    error = a2a_send(server, MOST).json()["error"]  # and by A2A: its internal error, with ours
    assert error["code"] == -32603 and "nothing changed" in error["message"], error
    assert "unavailable" in str(error["data"]) and "retry_after" in str(error["data"]), error
    assert rows(server)[0] == made
    control.write_text("")
    assert handoff(server, agent, MOST + 1).status_code == 200
    assert rows(server)[0] == made + 1
    assert_logged_once(server, "OperationalError")
