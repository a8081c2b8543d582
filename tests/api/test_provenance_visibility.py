"""provenance_status compares hashes only of tasks the caller may see, through the API of a
running `prickle serve`: citing a task the assignee cannot see, with its true hash or not,
leaves the result `claimed`, so the status reveals nothing about that task.
"""

from __future__ import annotations

from typing import Any

import pytest
from live import Cast

from app.domain.clock import sha256_of

RESULT = {
    "summary": "done",
    "provenance": "agent_generated",
    "evidence": [{"kind": "link", "summary": "it", "url": "https://example.com", "criteria": [0]}],
}
DETAIL = """query($id: ID!) {
  task(id: $id) { as_protocol checkpoints { id sha256 } }
}"""


@pytest.fixture
def cast(live_server: Any) -> Cast:
    return Cast(live_server).add("alice", "bob", "alice/coder", "alice/writer", "bob/builder")


def started(cast: Cast, by: str, assignee: str, project: str) -> str:
    t = cast.handoff(by, assignee, project)["id"]
    if assignee.split("/")[0] != by.split("/")[0]:
        cast.move(assignee.split("/")[0], "approve_handoff", t)
    cast.move(assignee, "accept_task", t)
    cast.move(assignee, "start_task", t)
    return str(t)


def cited(cast: Cast, task_id: str, checkpoint: bool) -> dict[str, Any]:
    """The context item citing the task's packet (or its checkpoint) with its true hash."""
    seen = cast.server.data(DETAIL, {"id": task_id}, cast.token("alice"))["task"]
    if not checkpoint:
        packet = seen["as_protocol"]["packet"]
        return {"kind": "packet", "task_id": task_id, "sha256": sha256_of(packet)}
    saved = seen["checkpoints"][-1]
    return {
        "kind": "checkpoint",
        "task_id": task_id,
        "checkpoint_id": saved["id"],
        "sha256": saved["sha256"],
    }


def status(cast: Cast, by: str, task_id: str, context: list[dict[str, Any]]) -> str:
    done = cast.move(by, "return_result", task_id, result={**RESULT, "context": context})
    return str(done["result"]["provenance_status"])


def builder_task(cast: Cast) -> str:
    own = started(cast, "alice/coder", "bob/builder", "shared")
    cast.move("bob/builder", "save_checkpoint", own, checkpoint={"progress": "mine"})
    return own


@pytest.mark.parametrize("checkpoint", [False, True], ids=["packet", "checkpoint"])
def test_a_true_hash_of_an_invisible_task_is_only_claimed(cast: Cast, checkpoint: bool) -> None:
    secret = started(cast, "alice/coder", "alice/writer", "private")  # bob's agent sees nothing
    cast.move("alice/writer", "save_checkpoint", secret, checkpoint={"progress": "secret"})
    invisible = cited(cast, secret, checkpoint)
    wrong = {**invisible, "sha256": "0" * 64}
    for context, expected in (([], "attested"), ([invisible], "claimed"), ([wrong], "claimed")):
        own = builder_task(cast)
        assert status(cast, "bob/builder", own, [cited(cast, own, checkpoint), *context]) == (
            expected
        )


def test_a_true_hash_of_a_task_the_caller_sees_is_attested(cast: Cast) -> None:
    other = builder_task(cast)
    own = builder_task(cast)
    context = [cited(cast, other, False), cited(cast, other, True)]
    assert status(cast, "bob/builder", own, context) == "attested"
