"""Project members added and removed through the API of a running `prickle serve`: who may
remove whom, and how HTTP reads and live subscriptions follow the change at once.

alice's agents work on tasks of alice's project; carol is a member of it for a while. carol's
own task (carol -> carol/helper) gives her subscription events she always sees, so that
"nothing of the project" is checked against the next event that does arrive.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

import pytest
from live import BRIEF, DEBUG_ENV, Cast, Live, opened, subscribers_reach

POSTGRES = os.environ.get("PRICKLE_TEST_BACKEND", "sqlite") == "postgres"

TASK = "query($id: ID!) { task(id: $id) { id } }"
EVENTS = (
    "query($t: ID) { task_events(task_id: $t, first: 100) { total_count edges { node { verb } } } }"
)


@pytest.fixture
def cast(live_server: Any) -> Cast:
    return Cast(live_server).add(
        "alice", "bob", "carol", "alice/coder", "alice/writer", "carol/helper"
    )


def membership(cast: Cast, verb: str, by: str, project: str, handle: str) -> dict[str, Any]:
    """The whole response body of add_project_member / remove_project_member."""
    variables = {"project": cast.project(project), "handle": cast.id(handle)}
    return cast.server.run(f"mutations/{verb}_project_member", variables, cast.token(by))


def code(body: dict[str, Any]) -> str:
    assert body.get("errors") and body["data"] is None, body
    return str(body["errors"][0]["extensions"]["code"])


def sees(cast: Cast, who: str, task_id: str) -> bool:
    task = cast.server.data(TASK, {"id": task_id}, cast.token(who))["task"]
    events = cast.server.data(EVENTS, {"t": task_id}, cast.token(who))["task_events"]
    assert (task is None) == (events["total_count"] == 0), (task, events)
    return task is not None


def test_only_an_administrator_removes_members_and_never_the_last_administrator(
    cast: Cast,
) -> None:
    t = cast.handoff("alice/coder", "alice/writer", "team")["id"]  # alice founds "team"
    assert membership(cast, "add", "alice", "team", "carol")["data"] == {"add_project_member": True}
    assert membership(cast, "add", "alice", "team", "bob")["data"]
    assert code(membership(cast, "remove", "carol", "team", "bob")) == "forbidden"
    assert code(membership(cast, "remove", "alice/coder", "team", "bob")) == "forbidden"
    assert code(membership(cast, "remove", "alice", "team", "alice")) == "conflict"
    assert code(membership(cast, "remove", "bob", "team", "alice")) == "forbidden"
    assert code(membership(cast, "remove", "alice", "nowhere", "bob")) == "not_found"
    assert code(membership(cast, "remove", "alice", "team", "nobody")) == "not_found"
    assert code(membership(cast, "remove", "alice", "team", "Bad Handle")) == "invalid_input"
    assert sees(cast, "bob", t) and sees(cast, "carol", t)  # the refusals changed nothing
    assert membership(cast, "remove", "alice", "team", "bob")["data"] == {
        "remove_project_member": True
    }
    assert not sees(cast, "bob", t)  # at once, on the next read
    assert sees(cast, "carol", t) and sees(cast, "alice", t)
    assert code(membership(cast, "remove", "alice", "team", "bob")) == "not_found"  # not twice


async def next_event(live: Live) -> dict[str, Any]:
    return await live.event(timeout=10)


async def test_a_live_subscription_follows_membership_from_the_next_event(cast: Cast) -> None:
    t = cast.handoff("alice/coder", "alice/writer", "team")["id"]
    mine = cast.handoff("carol", "carol/helper", "own")["id"]
    await subscribers_reach(cast.server, 0)
    async with opened(cast.server, cast.token("carol")) as live:
        await live.subscribe(query=BRIEF)
        await subscribers_reach(cast.server, 1)

        cast.move("alice/writer", "accept_task", t)  # not carol's to see yet
        cast.move("carol/helper", "accept_task", mine)
        assert (await next_event(live))["task_id"] == mine

        assert membership(cast, "add", "alice", "team", "carol")["data"]
        cast.move("alice/writer", "start_task", t)
        got = await next_event(live)
        assert (got["task_id"], got["verb"]) == (t, "start_task")

        assert membership(cast, "remove", "alice", "team", "carol")["data"]
        assert not sees(cast, "carol", t)
        cast.move("alice/writer", "wait_on", t, on="human", question="which?")
        cast.move("carol/helper", "start_task", mine)
        got = await next_event(live)
        assert (got["task_id"], got["verb"]) == (mine, "start_task")
        assert await live.quiet(0.3) == []


async def test_a_person_with_two_subscriptions_follows_membership_in_both(cast: Cast) -> None:
    t = cast.handoff("alice/coder", "alice/writer", "team")["id"]
    await subscribers_reach(cast.server, 0)
    async with (
        opened(cast.server, cast.token("carol")) as one,
        opened(cast.server, cast.token("carol")) as two,
    ):
        await one.subscribe({"project": cast.project("team")}, query=BRIEF)
        await two.subscribe({"task_id": t}, query=BRIEF)  # invisible: no snapshot
        await subscribers_reach(cast.server, 2)
        assert membership(cast, "add", "alice", "team", "carol")["data"]
        cast.move("alice/writer", "accept_task", t)
        got = await asyncio.gather(next_event(one), next_event(two))
        assert [e["verb"] for e in got] == ["accept_task", "accept_task"]


@pytest.mark.skipif(not POSTGRES, reason="several processes share a PostgreSQL database")
async def test_a_membership_changed_through_another_process_applies_from_the_next_event(
    start_server: Any,
) -> None:
    one, other = start_server(), start_server(env=DEBUG_ENV)
    cast = Cast(one).add("alice", "carol", "alice/coder", "alice/writer", "carol/helper")
    t = cast.handoff("alice/coder", "alice/writer", "team")["id"]
    mine = cast.handoff("carol", "carol/helper", "own")["id"]
    async with opened(other, cast.token("carol")) as live:
        await live.subscribe(query=BRIEF)
        await subscribers_reach(other, 1)
        assert membership(cast, "add", "alice", "team", "carol")["data"]
        cast.move("alice/writer", "accept_task", t)
        got = await next_event(live)
        assert (got["task_id"], got["verb"]) == (t, "accept_task")
        assert membership(cast, "remove", "alice", "team", "carol")["data"]
        cast.move("alice/writer", "start_task", t)
        cast.move("carol/helper", "accept_task", mine)
        got = await next_event(live)
        assert (got["task_id"], got["verb"]) == (mine, "accept_task")


HOLD = """query($id: ID!) { task(id: $id) { id gate_hold { owner rule_id
  rule { id effect project requester_owner priority } } } }"""


def gate_hold(cast: Cast, who: str, task_id: str) -> Any:
    task = cast.server.data(HOLD, {"id": task_id}, cast.token(who))["task"]
    assert task is not None, f"{who} does not see {task_id}"
    return task["gate_hold"]


def test_only_the_owner_who_may_approve_reads_the_gate_rule_that_held_a_handoff(
    cast: Cast,
) -> None:
    rule = {"effect": "hold", "project": cast.project("gated"), "priority": 5}
    made = cast.server.run_data("mutations/set_gate_rule", {"input": rule}, cast.token("bob"))
    rule_id = made["set_gate_rule"]["id"]
    cast.add("bob/builder")
    held = cast.handoff("alice/coder", "bob/builder", "gated")["id"]
    assert membership(cast, "add", "alice", "gated", "carol")["data"]  # carol sees the task

    hold = gate_hold(cast, "bob", held)
    assert hold["owner"] == cast.id("bob") and hold["rule_id"] == rule_id
    assert hold["rule"] == {
        "id": rule_id,
        "effect": "hold",
        "project": cast.project("gated"),
        "requester_owner": None,
        "priority": 5,
    }
    for other in ("alice", "carol", "alice/coder", "bob/builder"):  # never another's rules
        assert gate_hold(cast, other, held) is None, other

    unmatched = cast.handoff("alice/coder", "bob/builder", "open")["id"]  # no rule matches
    assert gate_hold(cast, "bob", unmatched) == {
        "owner": cast.id("bob"),
        "rule_id": None,
        "rule": None,
    }

    cast.server.run_data("mutations/delete_gate_rule", {"id": rule_id}, cast.token("bob"))
    assert gate_hold(cast, "bob", held) == {
        "owner": cast.id("bob"),
        "rule_id": rule_id,
        "rule": None,
    }
    cast.move("bob", "approve_handoff", held)
    assert gate_hold(cast, "bob", held) is None  # no longer held
