"""A task's whole life through the GraphQL API of a running `prickle serve`, and who sees it.

alice's agent alice/planner hands a task to bob's agent bob/coder; bob's gate has no rule,
so it holds the task for bob; bob approves; bob/coder accepts, starts, checkpoints and
returns a result whose evidence covers both criteria, and the default policy completes it.
carol, a third owner, and her agent carol/spy see nothing of it.
"""

from __future__ import annotations

from typing import Any

import pytest
from factory import packet
from jsonschema import Draft202012Validator, FormatChecker
from server import Server, persons, without_optional_nulls

from app.domain.table import task_schema

PROTOCOL_EXTRAS = ("version", "allowed_verbs", "as_protocol")
FILES = ["app/main.py"]  # the handoff's packet names a file
VALIDATOR = Draft202012Validator(task_schema(), format_checker=FormatChecker())


@pytest.fixture(scope="module")
def tokens(api_server: Server) -> dict[str, str]:
    found = persons(api_server, "alice", "bob", "carol")
    for owner, name in (("alice", "planner"), ("bob", "coder"), ("carol", "spy")):
        found[f"{owner}/{name}"] = api_server.register(found[owner], name)
    return found


@pytest.fixture(scope="module")
def story(api_server: Server, tokens: dict[str, str]) -> dict[str, Any]:
    """The task's life, step by step: each step's task as the mutation returned it."""
    steps: dict[str, Any] = {}
    run = api_server.run_data

    def step(name: str, document: str, who: str, **variables: Any) -> dict[str, Any]:
        task = next(iter(run(f"mutations/{document}", variables, tokens[who]).values()))
        steps[name] = task
        return task

    task = step(
        "handoff",
        "handoff",
        "alice/planner",
        input={
            "project": "apps",
            "assignee": "bob/coder",
            "packet": packet(files=FILES),
            "turn_budget": 3,
            "display_title": "Health check",
        },
    )
    task_id = task["id"]
    step("approve", "approve_handoff", "bob", task_id=task_id, reason="alice is a colleague")
    step("accept", "accept_task", "bob/coder", task_id=task_id, expected_version=3)
    step("start", "start_task", "bob/coder", task_id=task_id)
    checkpoint = {"progress": "wrote the handler", "next_steps": ["document it"]}
    step("checkpoint", "save_checkpoint", "bob/coder", task_id=task_id, checkpoint=checkpoint)
    step(
        "return",
        "return_result",
        "bob/coder",
        task_id=task_id,
        result={
            "summary": "GET /health answers 200 and the README documents it",
            "provenance": "agent_generated",
            "evidence": [
                {"kind": "test_output", "summary": "test_health passes", "criteria": [0]},
                {"kind": "commit", "summary": "README section", "criteria": [1], "artifact": 0},
            ],
            "artifacts": [{"ref": "README.md", "commit_sha": "a" * 40}],
            "submission_id": "sub-1",
        },
    )
    return steps


def test_the_gate_holds_the_task_for_the_assignees_owner(story: dict[str, Any]) -> None:
    task = story["handoff"]
    assert (task["state"], task["waiting_on"], task["version"]) == ("waiting", "owner_approval", 2)
    assert task["requester"] == "alice/planner"
    assert task["requested_by"] == {"kind": "agent", "agent_id": "alice/planner", "erased": None}
    assert task["route"] == {"via": "handoff", "capability": None}
    assert task["allowed_verbs"] == ["cancel_task"]  # alice/planner's view


def test_each_step_moves_the_task_as_the_protocol_says(story: dict[str, Any]) -> None:
    seen = [(s["state"], s["waiting_on"], s["version"]) for s in story.values()]
    assert seen == [
        ("waiting", "owner_approval", 2),
        ("routed", None, 3),
        ("accepted", None, 4),
        ("working", None, 5),
        ("working", None, 6),
        ("completed", None, 8),
    ]
    assert story["checkpoint"]["turn_budget"] == 2
    assert story["checkpoint"]["latest_checkpoint_by"] == {
        "agent": "bob/coder",
        "provenance": "agent_generated",
        "handed_back": False,
    }
    result = story["return"]["result"]
    assert (result["status"], result["revision"], result["decided_by_policy"]) == (
        "accepted",
        1,
        "v0",
    )
    assert result["decided_by"] == {"kind": "system"}
    assert result["evidence_report"]["complete"] is True
    assert result["lineage"]["cause"] == {"kind": "none"}


def test_as_protocol_is_valid_against_the_task_schema_after_every_step(
    story: dict[str, Any],
) -> None:
    for name, task in story.items():
        errors = [e.message for e in VALIDATOR.iter_errors(task["as_protocol"])]
        assert errors == [], name


def test_the_typed_selection_equals_as_protocol_without_optional_nulls(
    story: dict[str, Any],
) -> None:
    for name, task in story.items():
        typed = {k: v for k, v in task.items() if k not in PROTOCOL_EXTRAS}
        assert without_optional_nulls(typed, task["as_protocol"]) == task["as_protocol"], name


def test_the_task_query_returns_the_task_with_its_history(
    api_server: Server, tokens: dict[str, str], story
) -> None:
    task_id = story["handoff"]["id"]
    task = api_server.run_data("queries/task", {"id": task_id}, tokens["alice"])["task"]
    assert task["as_protocol"] == story["return"]["as_protocol"]
    assert [e["verb"] for e in task["events"]] == [
        "handoff",
        "handoff",
        "approve_handoff",
        "accept_task",
        "start_task",
        "save_checkpoint",
        "return_result",
        "return_result",
    ]
    assert [e["kind"] for e in task["events"]][:2] == ["created", "moved"]
    assert task["events"][-1]["actor"] is None  # the result policy is the server's move
    assert len(task["checkpoints"]) == 1 and task["checkpoints"][0]["agent"] == "bob/coder"
    assert [r["revision"] for r in task["results"]] == [1]
    assert task["allowed_verbs"] == []


def test_the_tasks_query_lists_the_task_for_both_sides(
    api_server: Server, tokens: dict[str, str], story: dict[str, Any]
) -> None:
    task_id = story["handoff"]["id"]
    for who in ("alice", "alice/planner", "bob", "bob/coder"):
        page = api_server.run_data("queries/tasks", {"project": "apps"}, tokens[who])["tasks"]
        assert [e["node"]["id"] for e in page["edges"]] == [task_id], who
        assert page["total_count"] == 1


def test_a_third_owner_sees_nothing_of_the_task(
    api_server: Server, tokens: dict[str, str], story: dict[str, Any]
) -> None:
    task_id = story["handoff"]["id"]
    for who in ("carol", "carol/spy"):
        token = tokens[who]
        assert api_server.run_data("queries/task", {"id": task_id}, token)["task"] is None
        page = api_server.run_data("queries/tasks", {}, token)["tasks"]
        assert (page["edges"], page["total_count"]) == ([], 0)
        events = api_server.run_data("queries/task_events", {"task_id": task_id}, token)
        assert (events["task_events"]["edges"], events["task_events"]["total_count"]) == ([], 0)
        everything = api_server.run_data("queries/task_events", {}, token)["task_events"]
        assert all(e["node"]["task_id"] != task_id for e in everything["edges"])


@pytest.mark.parametrize(
    "document, variables",
    [
        ("cancel_task", {}),
        ("approve_handoff", {}),
        ("accept_task", {}),
        ("save_checkpoint", {"checkpoint": {"progress": "peeking"}}),
        ("answer", {"answer": "no"}),
    ],
)
def test_a_third_owners_mutations_answer_not_found(
    api_server: Server,
    tokens: dict[str, str],
    story: dict[str, Any],
    document: str,
    variables: dict[str, Any],
) -> None:
    task_id = story["handoff"]["id"]
    for who in ("carol", "carol/spy"):
        body = api_server.run(
            f"mutations/{document}", {"task_id": task_id, **variables}, tokens[who]
        )
        assert body["errors"][0]["extensions"] == {"code": "not_found"}, who
        assert (
            task_id not in body["errors"][0]["message"] or "no task" in body["errors"][0]["message"]
        )


def held_task(api_server: Server, tokens: dict[str, str]) -> dict[str, Any]:
    """alice/planner's task for bob/coder, waiting on bob's approval (bob's gate holds it)."""
    variables = {
        "input": {"project": "apps", "assignee": "bob/coder", "packet": packet(files=FILES)}
    }
    return api_server.run_data("mutations/handoff", variables, tokens["alice/planner"])["handoff"]


def test_a_refused_move_answers_invalid_state_and_changes_nothing(
    api_server: Server, tokens: dict[str, str]
) -> None:
    task = held_task(api_server, tokens)
    before = api_server.run_data("queries/task", {"id": task["id"]}, tokens["bob"])["task"]
    body = api_server.run("mutations/start_task", {"task_id": task["id"]}, tokens["bob/coder"])
    error = body["errors"][0]
    assert error["extensions"] == {
        "code": "invalid_state",
        "state": "waiting",
        "waiting_on": "owner_approval",
    }
    assert error["message"] == "Can't start_task when in waiting (waiting_on owner_approval)"
    after = api_server.run_data("queries/task", {"id": task["id"]}, tokens["bob"])["task"]
    assert after == before
    assert len(after["events"]) == 2


def test_a_stale_expected_version_answers_conflict(
    api_server: Server, tokens: dict[str, str]
) -> None:
    task = held_task(api_server, tokens)
    body = api_server.run(
        "mutations/approve_handoff", {"task_id": task["id"], "expected_version": 1}, tokens["bob"]
    )
    assert body["errors"][0]["extensions"] == {"code": "conflict"}
    assert (
        api_server.run_data("queries/task", {"id": task["id"]}, tokens["bob"])["task"]["version"]
        == 2
    )


def test_the_wrong_principal_answers_forbidden(api_server: Server, tokens: dict[str, str]) -> None:
    task = held_task(api_server, tokens)
    body = api_server.run("mutations/approve_handoff", {"task_id": task["id"]}, tokens["bob/coder"])
    assert body["errors"][0]["extensions"] == {"code": "forbidden"}


@pytest.mark.parametrize("token", [None, "prk_not-a-token", "Basic abc"])
def test_no_token_or_a_bad_token_answers_unauthenticated(
    api_server: Server, token: str | None
) -> None:
    for query in ("{ me { id } }", "{ tasks { total_count } }", "{ task_states { name } }"):
        if token == "Basic abc":
            response = api_server.client.post(
                api_server.graphql_url, json={"query": query}, headers={"Authorization": token}
            )
            body = response.json()
        else:
            body = api_server.post(query, token=token)
        assert body["data"] is None
        assert [e["extensions"]["code"] for e in body["errors"]] == ["unauthenticated"]
    body = api_server.run("mutations/accept_task", {"task_id": "T1"}, token=None)
    assert body["errors"][0]["extensions"]["code"] == "unauthenticated"
