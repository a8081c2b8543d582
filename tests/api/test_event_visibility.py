"""HTTP `task_events` and a subscription's replay judge visibility by the same rule: each
event by its task as it is now. A live subscription judges each event by the task as the
event left it, which is the task as it is at the moment the event happens.

bob's agent asks carol's agent (wait_on(on: agent)) while it works on alice's task; carol and
her agent see the task only while it waits on that agent.
"""

from __future__ import annotations

from typing import Any

import pytest
from live import BRIEF, Cast, opened, subscribers_reach

HISTORY = """query($t: ID) {
  task_events(task_id: $t, first: 100) { total_count edges { node { verb } } }
}"""


@pytest.fixture
def cast(live_server: Any) -> Cast:
    return Cast(live_server).add(
        "alice", "bob", "carol", "alice/coder", "bob/builder", "carol/helper"
    )


def history(cast: Cast, who: str, task_id: str) -> list[str]:
    page = cast.server.data(HISTORY, {"t": task_id}, cast.token(who))["task_events"]
    assert page["total_count"] == len(page["edges"])
    return [e["node"]["verb"] for e in page["edges"]]


async def replayed(cast: Cast, who: str, task_id: str) -> list[str]:
    async with opened(cast.server, cast.token(who)) as live:
        await live.subscribe({"task_id": task_id, "after": "0"}, query=BRIEF)
        return [m["payload"]["data"]["task_events"]["verb"] for m in await live.quiet(1.0)]


def asked(cast: Cast) -> str:
    t = cast.handoff("alice/coder", "bob/builder", "shared")["id"]
    cast.move("bob", "approve_handoff", t)
    cast.move("bob/builder", "accept_task", t)
    cast.move("bob/builder", "start_task", t)
    agent = cast.id("carol/helper")
    cast.move("bob/builder", "wait_on", t, on="agent", agent=agent, question="?")
    return t


ALL = ["handoff", "handoff", "approve_handoff", "accept_task", "start_task", "wait_on"]


async def test_while_a_task_waits_on_an_agent_its_whole_history_shows_to_that_agent(
    cast: Cast,
) -> None:
    t = asked(cast)
    for who in ("carol/helper", "carol"):
        assert history(cast, who, t) == ALL
        assert await replayed(cast, who, t) == ALL


async def test_once_it_answered_the_agent_sees_nothing_of_it_over_http_or_replayed(
    cast: Cast,
) -> None:
    t = asked(cast)
    await subscribers_reach(cast.server, 0)
    async with opened(cast.server, cast.token("carol/helper")) as live:
        await live.subscribe({}, query=BRIEF)
        await subscribers_reach(cast.server, 1)
        cast.move("carol/helper", "answer", t, answer="yes")
        cast.move("bob/builder", "save_checkpoint", t, checkpoint={"progress": "on"})
        assert await live.quiet(0.5) == []  # the answer left the task invisible to it
    for who in ("carol/helper", "carol"):
        assert history(cast, who, t) == []
        assert await replayed(cast, who, t) == []
    assert history(cast, "alice", t)[-2:] == ["answer", "save_checkpoint"]
    assert (await replayed(cast, "alice", t))[-2:] == ["answer", "save_checkpoint"]


async def test_a_live_event_is_judged_by_the_task_as_the_event_left_it(cast: Cast) -> None:
    t = cast.handoff("alice/coder", "bob/builder", "shared")["id"]
    for verb in ("approve_handoff", "accept_task", "start_task"):
        cast.move("bob" if verb == "approve_handoff" else "bob/builder", verb, t)
    await subscribers_reach(cast.server, 0)
    async with opened(cast.server, cast.token("carol/helper")) as live:
        await live.subscribe({}, query=BRIEF)
        await subscribers_reach(cast.server, 1)
        agent = cast.id("carol/helper")
        cast.move("bob/builder", "wait_on", t, on="agent", agent=agent, question="?")
        got = await live.event()
        assert (got["task_id"], got["verb"], got["waiting_on"]) == (t, "wait_on", "agent")
