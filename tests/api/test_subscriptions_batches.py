"""task_event_batches over real WebSockets: a subscriber far behind catches up in full
lists, resumes from the middle with exactly the rest, then hears each move live; the same
visibility as task_events; a batch size out of bounds is refused."""

from __future__ import annotations

from typing import Any

import pytest
from live import PROTOCOLS, Cast, Live, opened
from server import document

CAST = ("alice", "bob", "alice/coder", "alice/writer")
BATCHES = document("subscriptions/task_event_batches")
CYCLE = [("alice/writer", "accept_task"), ("alice", "stop_run"), ("alice", "resume_run")]


async def _batch(live: Live) -> list[dict[str, Any]]:
    message = await live.receive()
    assert message["type"] in ("next", "data") and not message["payload"].get("errors"), message
    batch: list[dict[str, Any]] = message["payload"]["data"]["task_event_batches"]
    return batch


async def _batches(live: Live, total: int) -> list[list[dict[str, Any]]]:
    out: list[list[dict[str, Any]]] = []
    while sum(len(b) for b in out) < total:
        out.append(await _batch(live))
    return out


def _project_with_history(cast: Cast, name: str) -> tuple[str, int]:
    """Three tasks in a fresh project, each handed off and moved round: 11 events in all."""
    tasks = [cast.handoff("alice/coder", "alice/writer", name) for _ in range(3)]
    for task in tasks:
        for by, verb in CYCLE[: 1 + (task is tasks[0]) * 2]:
            cast.move(by, verb, task["id"])
    return tasks[0]["project"], 3 * 2 + 3 + 2


async def test_a_subscriber_far_behind_catches_up_in_full_batches_then_hears_each_move(
    cast: Cast,
) -> None:
    project, count = _project_with_history(cast, "catchup")
    async with opened(cast.server, cast.token("alice")) as live:
        await live.subscribe({"project": project, "after": "0", "batch_size": 4}, query=BATCHES)
        batches = await _batches(live, count)
        assert [len(b) for b in batches] == [4, 4, 3]
        events = [e for b in batches for e in b]
        seqs = [e["seq"] for e in events]
        assert seqs == sorted(set(seqs))
        assert all(e["project"] == project and e["task"]["state"] for e in events)
        assert [e["cursor"] for e in events] == [str(s) for s in seqs]
        task = cast.handoff("alice/coder", "alice/writer", "catchup")
        live_events = [e for b in await _batches(live, 2) for e in b]
        assert [(e["kind"], e["task_id"]) for e in live_events] == [
            ("created", task["id"]),
            ("moved", task["id"]),
        ]
        assert live_events[0]["seq"] > seqs[-1]
        assert await live.quiet() == []


async def test_a_batch_subscription_resumed_from_the_middle_gets_exactly_the_rest(
    cast: Cast,
) -> None:
    project, count = _project_with_history(cast, "middle")
    async with opened(cast.server, cast.token("alice")) as live:
        await live.subscribe({"project": project, "after": "0", "batch_size": 1000}, query=BATCHES)
        everything = [e for b in await _batches(live, count) for e in b]
    middle = everything[4]["cursor"]
    async with opened(cast.server, cast.token("alice")) as live:
        await live.subscribe({"project": project, "after": middle, "batch_size": 3}, query=BATCHES)
        rest = [e for b in await _batches(live, count - 5) for e in b]
        assert await live.quiet() == []
    assert rest == everything[5:]


async def test_a_batch_subscription_shows_only_what_task_events_shows(cast: Cast) -> None:
    project, _ = _project_with_history(cast, "private")
    async with opened(cast.server, cast.token("bob")) as live:
        await live.subscribe({"project": project, "after": "0"}, query=BATCHES)
        assert await live.quiet() == []


@pytest.mark.parametrize("size", [0, 1001, -5])
async def test_a_batch_size_out_of_bounds_is_invalid_input(cast: Cast, size: int) -> None:
    async with opened(cast.server, cast.token("alice")) as live:
        await live.subscribe({"after": "0", "batch_size": size}, query=BATCHES)
        errors = await live.errors()
    assert [e["extensions"]["code"] for e in errors] == ["invalid_input"]
    assert "batch_size" in errors[0]["message"]


PLAIN = """fragment Where on TaskEvent { project task: task_id }
subscription($project: String, $after: String) {
  task_event_batches(project: $project, after: $after, batch_size: 5) {
    __typename cursor seq kind from_state to_state waiting_on verb actor at version note
    ...Where
    ... on TaskEvent { seq }
  }
}"""


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_selection_of_plain_fields_answers_as_the_full_document_does(
    cast: Cast, protocol: str
) -> None:
    project, count = _project_with_history(cast, f"plain-{protocol.split('-')[1]}")
    async with opened(cast.server, cast.token("alice")) as live:
        await live.subscribe({"project": project, "after": "0", "batch_size": 5}, query=BATCHES)
        full = [e for b in await _batches(live, count) for e in b]
    async with opened(cast.server, cast.token("alice"), protocol) as live:
        await live.subscribe({"project": project, "after": "0"}, query=PLAIN)
        plain = [e for b in await _batches(live, count) for e in b]
    assert len(plain) == len(full) == count
    for p, f in zip(plain, full, strict=True):
        assert p.pop("__typename") == "TaskEvent"
        assert p.pop("task") == f["task_id"]
        assert p == {k: f[k] for k in p}
        assert list(p)[:3] == ["cursor", "seq", "kind"]
