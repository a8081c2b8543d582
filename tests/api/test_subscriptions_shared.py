"""Subscribers of one document share each event's execution only with the same viewer:
each still gets the answer for itself (a task's allowed_verbs differ between principals),
and subscribers of the same viewer get identical messages."""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack

from live import Cast, opened, subscribers_reach
from server import Server

WITH_VERBS = """subscription($project: String) {
  task_events(project: $project) { seq verb task { id state allowed_verbs } }
}"""
VERBS_NOW = "query($id: ID!) { task(id: $id) { allowed_verbs } }"


async def test_each_viewer_gets_its_own_answer_and_one_viewers_subscribers_the_same(
    live_server: Server,
) -> None:
    cast = Cast(live_server).add("alice", "bob", "alice/coder", "bob/builder")
    project = cast.project("shared")
    t = cast.handoff("alice/coder", "bob/builder", "shared")["id"]  # bob's gate holds it
    async with AsyncExitStack() as stack:
        lives = {}
        for name in ("alice", "alice_again", "bob", "bob/builder"):
            live = await stack.enter_async_context(
                opened(live_server, cast.token(name.removesuffix("_again")))
            )
            await live.subscribe({"project": project}, query=WITH_VERBS)
            lives[name] = live
        await subscribers_reach(live_server, len(lives))
        await asyncio.to_thread(cast.move, "bob", "approve_handoff", t)
        got = {name: await live.event() for name, live in lives.items()}
    now = {
        name: live_server.data(VERBS_NOW, {"id": t}, cast.token(name))["task"]["allowed_verbs"]
        for name in ("alice", "bob", "bob/builder")
    }
    assert {name: event["verb"] for name, event in got.items()} == dict.fromkeys(
        lives, "approve_handoff"
    )
    assert got["alice"] == got["alice_again"]
    assert {name: got[name]["task"]["allowed_verbs"] for name in now} == now
    assert len({tuple(verbs) for verbs in now.values()}) == 3, now  # the test tells them apart
