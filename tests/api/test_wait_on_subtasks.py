"""wait_on(on: agent) on a task whose subtasks have all ended resumes at once, through the
API of a running `prickle serve`: the protocol's "a task waiting on `agent` also resumes by
itself when every subtask has ended, if it has any" holds when they ended before the wait.
"""

from __future__ import annotations

from typing import Any

import pytest
from live import PACKET, Cast

EVENTS = """query($id: ID!) {
  task(id: $id) { state waiting_on version events { kind verb actor from_state to_state note } }
}"""


@pytest.fixture
def cast(live_server: Any) -> Cast:
    return Cast(live_server).add("alice", "alice/coder", "alice/writer", "alice/helper")


def working(cast: Cast) -> str:
    t = cast.handoff("alice/coder", "alice/writer", "work")["id"]
    cast.move("alice/writer", "accept_task", t)
    cast.move("alice/writer", "start_task", t)
    return t


def subtask(cast: Cast, parent: str) -> str:
    task = {
        "project": cast.project("work"),
        "assignee": cast.id("alice/helper"),
        "packet": PACKET,
        "parent_task_id": parent,
    }
    done = cast.server.run_data("mutations/handoff", {"input": task}, cast.token("alice/writer"))
    return str(done["handoff"]["id"])


def task(cast: Cast, task_id: str) -> dict[str, Any]:
    return cast.server.data(EVENTS, {"id": task_id}, cast.token("alice"))["task"]


def test_waiting_on_agent_when_every_subtask_has_ended_resumes_at_once(cast: Cast) -> None:
    t = working(cast)
    for _ in range(2):
        cast.move("alice/writer", "cancel_task", subtask(cast, t))
    before = task(cast, t)["version"]
    moved = cast.move("alice/writer", "wait_on", t, on="agent")
    assert (moved["state"], moved["waiting_on"], moved["version"]) == ("working", None, before + 2)
    after = task(cast, t)
    assert after["state"] == "working"
    assert [
        (e["kind"], e["verb"], e["actor"], e["from_state"], e["to_state"])
        for e in after["events"][-2:]
    ] == [
        ("moved", "wait_on", cast.id("alice/writer"), "working", "waiting"),
        ("answered", "wait_on", None, "waiting", "working"),
    ]
    assert after["events"][-1]["note"] == "every subtask has already ended"


def test_a_task_with_a_subtask_still_open_keeps_waiting_until_it_ends(cast: Cast) -> None:
    t = working(cast)
    cast.move("alice/writer", "cancel_task", subtask(cast, t))
    open_one = subtask(cast, t)
    moved = cast.move("alice/writer", "wait_on", t, on="agent")
    assert (moved["state"], moved["waiting_on"]) == ("waiting", "agent")
    cast.move("alice/writer", "cancel_task", open_one)
    assert task(cast, t)["state"] == "working"  # resumed by the last subtask's end


def test_a_task_without_subtasks_waits_for_the_agents_answer(cast: Cast) -> None:
    t = working(cast)
    helper = cast.id("alice/helper")
    moved = cast.move("alice/writer", "wait_on", t, on="agent", agent=helper, question="?")
    assert (moved["state"], moved["waiting_on"]) == ("waiting", "agent")
    assert task(cast, t)["state"] == "waiting"
    assert cast.move("alice/helper", "answer", t, answer="yes")["state"] == "working"
