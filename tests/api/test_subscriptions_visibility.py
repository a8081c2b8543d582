"""task_events filters and visibility across owners, live and replayed, over real WebSockets.

alice's agent hands task T to bob's agent; T waits on carol's agent for a while; dave has
nothing to do with it; alice also has a task of her own (O) in the same project. Each
subscriber must receive exactly what its filters select among what it may see: live
(registered before the moves: each event judged by its task as the event left it), and
replayed from cursor 0 (judged by the task as it is now).
"""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from typing import Any

from live import BRIEF, Cast, Live, opened, subscribers_reach

# name -> (who subscribes, filters, in cast names; "T" is the shared task's id)
SUBSCRIPTIONS: dict[str, tuple[str, dict[str, str]]] = {
    "alice_project": ("alice", {"project": "shared"}),
    "alice_other_project": ("alice", {"project": "elsewhere"}),
    "alice_assignee": ("alice", {"assignee": "bob/builder"}),
    "bob_all": ("bob", {}),
    "bob_task": ("bob", {"task_id": "T"}),
    "builder_all": ("bob/builder", {}),
    "carol_all": ("carol", {}),
    "helper_all": ("carol/helper", {}),
    "dave_all": ("dave", {}),
    "dave_project": ("dave", {"project": "shared"}),
    "dave_task": ("dave", {"task_id": "T"}),
}
HANDOFF = ["handoff", "handoff"]  # created, then the gate's move
T_LATER = ["approve_handoff", "accept_task", "start_task", "wait_on", "answer", "cancel_task"]
O_ALL = [*HANDOFF, "accept_task"]

# name -> (verbs on T, verbs on O) it receives live; replayed, T's handoff events come first
EXPECTED: dict[str, tuple[list[str], list[str]]] = {
    "alice_project": (T_LATER, O_ALL),
    "alice_other_project": ([], []),
    "alice_assignee": (T_LATER, []),
    "bob_all": (T_LATER, []),
    "bob_task": (T_LATER, []),
    "builder_all": (T_LATER, []),
    "carol_all": (["wait_on"], []),  # while T waits on carol/helper, and only then
    "helper_all": (["wait_on"], []),
    "dave_all": ([], []),
    "dave_project": ([], []),
    "dave_task": ([], []),
}


CAST = (  # conftest's `cast`
    "alice",
    "bob",
    "carol",
    "dave",
    "alice/coder",
    "alice/writer",
    "bob/builder",
    "carol/helper",
)


def variables(cast: Cast, filters: dict[str, str], t: str) -> dict[str, Any]:
    named = {"project": cast.project, "assignee": cast.id, "task_id": lambda _: t}
    return {name: named[name](value) for name, value in filters.items()}


def the_rest_of_the_story(cast: Cast, t: str) -> str:
    """T's moves after the handoff, then alice's own task O; returns O's id."""
    cast.move("bob", "approve_handoff", t)
    cast.move("bob/builder", "accept_task", t)
    cast.move("bob/builder", "start_task", t)
    cast.move("bob/builder", "wait_on", t, on="agent", agent=cast.id("carol/helper"), question="?")
    cast.move("carol/helper", "answer", t, answer="yes")
    cast.move("alice/coder", "cancel_task", t)
    own = cast.handoff("alice/coder", "alice/writer", "shared")
    cast.move("alice/writer", "accept_task", own["id"])
    return own["id"]


async def subscribe_all(
    stack: AsyncExitStack, cast: Cast, t: str, after: str | None
) -> dict[str, Live]:
    lives = {}
    for name, (who, filters) in SUBSCRIPTIONS.items():
        live = await stack.enter_async_context(opened(cast.server, cast.token(who)))
        await live.subscribe({**variables(cast, filters, t), "after": after}, query=BRIEF)
        lives[name] = live
    return lives


async def received(lives: dict[str, Live]) -> dict[str, list[dict[str, Any]]]:
    """Everything each subscription got until it has been quiet for a second."""
    got = await asyncio.gather(*(live.quiet(1.0) for live in lives.values()))
    for name, messages in zip(lives, got, strict=True):
        for m in messages:
            assert m["type"] == "next" and not m["payload"].get("errors"), (name, m)
    return {
        name: [m["payload"]["data"]["task_events"] for m in messages]
        for name, messages in zip(lives, got, strict=True)
    }


def verbs(events: list[dict[str, Any]], task_id: str) -> list[str]:
    return [e["verb"] for e in events if e["task_id"] == task_id]


async def test_live_subscribers_get_what_their_filters_select_among_what_they_see(
    cast: Cast,
) -> None:
    t = cast.handoff("alice/coder", "bob/builder", "shared")["id"]  # bob's gate holds it
    await subscribers_reach(cast.server, 0)
    async with AsyncExitStack() as stack:
        lives = await subscribe_all(stack, cast, t, after=None)
        assert (await lives["bob_task"].event())["kind"] == "snapshot"
        await subscribers_reach(cast.server, len(SUBSCRIPTIONS))
        own = await asyncio.to_thread(the_rest_of_the_story, cast, t)
        got = await received(lives)
    assert {name: (verbs(got[name], t), verbs(got[name], own)) for name in got} == EXPECTED
    assert all(not {e["task_id"] for e in events} - {t, own} for events in got.values())


async def test_replayed_subscribers_get_the_same_and_the_events_before_them(
    cast: Cast,
) -> None:
    t = cast.handoff("alice/coder", "bob/builder", "shared")["id"]
    own = the_rest_of_the_story(cast, t)
    async with AsyncExitStack() as stack:
        got = await received(await subscribe_all(stack, cast, t, after="0"))
    expected = {
        name: ([*HANDOFF, *on_t] if on_t == T_LATER else on_t, on_o)
        for name, (on_t, on_o) in EXPECTED.items()
    }
    # a replay judges each event by its task as it is now, as HTTP task_events does: T no
    # longer waits on carol/helper, so carol and her agent replay none of T's events
    expected["carol_all"] = expected["helper_all"] = ([], [])
    assert {name: (verbs(got[name], t), verbs(got[name], own)) for name in got} == expected
