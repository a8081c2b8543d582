"""A wait someone can answer, and a Task that says what it asks, through the API of a running
`prickle serve`: wait_on(on: agent) with nobody to answer (no agent named and no subtask, an
unknown agent, the assignee itself) is refused and changes nothing; a waiting task's
`question` names what is asked and who may answer it, and those are the ones `answer` lets in.
"""

from __future__ import annotations

from typing import Any

import pytest
from live import PACKET, Cast

pytestmark = pytest.mark.api_and_storage

CAST = ("alice", "bob", "alice/coder", "alice/writer", "bob/helper")

QUESTION = """query($id: ID!) {
  task(id: $id) {
    state waiting_on version allowed_verbs as_protocol
    question { on question asked_by agent answerers resumes_when_subtasks_end }
    events { kind }
  }
}"""


def working(cast: Cast) -> str:
    t = cast.handoff("alice/coder", "alice/writer", "work")["id"]
    cast.move("alice/writer", "accept_task", t)
    cast.move("alice/writer", "start_task", t)
    return t


def read(cast: Cast, task_id: str, by: str = "alice") -> dict[str, Any]:
    return cast.server.data(QUESTION, {"id": task_id}, cast.token(by))["task"]


def refused(cast: Cast, task_id: str, **args: Any) -> dict[str, Any]:
    body = cast.server.run(
        "mutations/wait_on", {"task_id": task_id, **args}, cast.token("alice/writer")
    )
    assert body.get("errors") and not body["data"], body
    return body["errors"][0]


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        pytest.param({"on": "agent"}, "invalid_input", "names the agent to wait on", id="none"),
        pytest.param(
            {"on": "agent", "agent": "nobody-here/ghost"}, "not_found", "no agent", id="unknown"
        ),
        pytest.param({"on": "agent", "agent": "SELF"}, "invalid_input", "itself", id="itself"),
    ],
)
def test_a_wait_on_agent_nobody_would_answer_is_refused_and_changes_nothing(
    cast: Cast, args: dict[str, Any], code: str, message: str
) -> None:
    t = working(cast)
    if args.get("agent") == "SELF":
        args = {**args, "agent": cast.id("alice/writer")}
    before = read(cast, t)
    error = refused(cast, t, **args)
    assert error["extensions"]["code"] == code
    assert message in error["message"]
    assert read(cast, t) == before


def test_a_task_with_an_open_subtask_may_wait_on_agent_naming_none(cast: Cast) -> None:
    t = working(cast)
    sub = {"project": cast.project("work"), "assignee": cast.id("bob/helper"), "packet": PACKET}
    sub["parent_task_id"] = t
    cast.server.run_data("mutations/handoff", {"input": sub}, cast.token("alice/writer"))
    moved = cast.move("alice/writer", "wait_on", t, on="agent", question="the subtask's answer")
    assert (moved["state"], moved["waiting_on"]) == ("waiting", "agent")
    assert moved["question"] == {
        "on": "agent",
        "question": "the subtask's answer",
        "asked_by": cast.id("alice/writer"),
        "agent": None,
        "answerers": [],
        "resumes_when_subtasks_end": True,
    }


def test_a_wait_on_an_agent_names_it_as_the_one_who_answers(cast: Cast) -> None:
    t = working(cast)
    helper = cast.id("bob/helper")
    cast.move("alice/writer", "wait_on", t, on="agent", agent=helper, question="which db?")
    seen = read(cast, t, "bob/helper")  # the agent waited on sees the task meanwhile
    assert seen["question"] == {
        "on": "agent",
        "question": "which db?",
        "asked_by": cast.id("alice/writer"),
        "agent": helper,
        "answerers": [helper],
        "resumes_when_subtasks_end": True,
    }
    assert "answer" in seen["allowed_verbs"]
    assert "answer" not in read(cast, t)["allowed_verbs"]  # alice may not answer for bob's
    assert set(seen["as_protocol"]) == set(read(cast, t)["as_protocol"])
    assert "question" not in seen["as_protocol"]  # the protocol's object stays exact
    assert cast.move("bob/helper", "answer", t, answer="postgres")["question"] is None


def test_a_wait_on_a_human_names_the_persons_who_may_answer(cast: Cast) -> None:
    t = cast.handoff("alice/coder", "bob/helper", "work")["id"]  # alice's agent asks bob's
    cast.move("bob", "approve_handoff", t)  # bob's gate held it for him
    cast.move("bob/helper", "accept_task", t)
    moved = cast.move("bob/helper", "wait_on", t, on="human", question="which region?")
    answerers = moved["question"]["answerers"]
    assert sorted(answerers) == sorted([cast.id("alice"), cast.id("bob")])
    for person in ("alice", "bob"):
        assert "answer" in read(cast, t, person)["allowed_verbs"]
    assert "answer" not in read(cast, t, "bob/helper")["allowed_verbs"]
    assert cast.move("alice", "answer", t, answer="eu")["state"] == "accepted"


def test_an_idempotency_key_reused_for_another_request_is_a_conflict_naming_it(
    cast: Cast,
) -> None:
    task = {"project": cast.project("keys"), "assignee": cast.id("alice/writer"), "packet": PACKET}
    task["idempotency_key"] = "run-7"
    token = cast.token("alice/coder")
    first = cast.server.run_data("mutations/handoff", {"input": task}, token)["handoff"]
    again = cast.server.run_data("mutations/handoff", {"input": task}, token)["handoff"]
    assert again["id"] == first["id"]
    for changed in (
        {"packet": {**PACKET, "task": "another thing"}},
        {"assignee": cast.id("bob/helper")},
        {"project": cast.project("other")},
    ):
        body = cast.server.run("mutations/handoff", {"input": {**task, **changed}}, token)
        assert body["errors"][0]["extensions"]["code"] == "conflict", body
        assert "'run-7'" in body["errors"][0]["message"]
    assert read(cast, first["id"])["version"] == first["version"]


@pytest.mark.once
def test_every_cursor_argument_is_a_string() -> None:
    from graphql import build_schema

    from app.api.schema import sdl

    built = build_schema(sdl())
    cursors = {
        f"{root.name}.{name}": str(field.args["after"].type)
        for root in (built.query_type, built.subscription_type)
        if root is not None
        for name, field in root.fields.items()
        if "after" in field.args
    }
    assert "Query.webhook_deliveries" in cursors
    assert set(cursors.values()) == {"String"}, cursors
