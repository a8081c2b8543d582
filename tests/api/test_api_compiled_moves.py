"""A mutation within the compiled subset (app/api/fast/compiled_moves.py) answers exactly what the
general execution answers, over HTTP against `prickle serve`: for random selections of a
Task's scalars and aliases, for every hot verb, and for the refusals.

Two tasks at the same position take the same verb, one by the compiled document and one by
the same document with `@include(if: true)` on the mutation (a directive the subset leaves
to the general execution, and one that changes nothing). The answers are equal once each
task's id and the moment are written the same.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from factory import PACKET
from graphql import OperationDefinitionNode, parse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from live import Cast
from server import Server
from test_api_compiled import PREFIXES, SCALARS, aliased

from app.api.fast.compiled_moves import plan_of
from app.api.schema import schema

RESULT = {
    "summary": "done",
    "provenance": "agent_generated",
    "evidence": [{"kind": "test_output", "summary": "the tests pass", "criteria": [0, 1]}],
}
# verb: (the arguments it is sent, the verbs that bring a new task to where it applies)
VERBS: dict[str, tuple[str, tuple[str, ...]]] = {
    "handoff": ("input: $input", ()),
    "accept_task": ("task_id: $id", ()),
    "start_task": ("task_id: $id", ("accept_task",)),
    "return_result": ("task_id: $id, result: $result", ("accept_task", "start_task")),
}
DECLARED = {
    "handoff": "$input: HandoffInput!",
    "accept_task": "$id: ID!",
    "start_task": "$id: ID!",
    "return_result": "$id: ID!, $result: ResultInput!",
}
ULID = re.compile(r"\b[0-9A-HJKMNP-TV-Z]{26}\b")
MOMENT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")


def document(verb: str, selection: str, general: bool = False) -> str:
    arguments, _ = VERBS[verb]
    directive = " @include(if: true)" if general else ""
    return f"mutation({DECLARED[verb]}) {{ {verb}({arguments}){directive} {{ {selection} }} }}"


def same_moment_and_ids(text: str) -> str:
    return MOMENT.sub("<at>", ULID.sub("<id>", text))


def text(server: Server, token: str, query: str, variables: dict[str, Any]) -> str:
    body = {"query": query, "variables": variables}
    return server.client.post(server.graphql_url, json=body, headers=server.headers(token)).text


def ready(cast: Cast, verb: str) -> dict[str, Any]:
    """The variables of `verb` for a new task where it applies (or for a new handoff)."""
    if verb == "handoff":
        task = {"project": cast.project("moves"), "assignee": cast.id("alice/coder")}
        return {"input": {**task, "packet": {**PACKET, "task": "compiled"}}}
    task_id = cast.handoff("alice", "alice/coder", "moves")["id"]
    for earlier in VERBS[verb][1]:
        cast.move("alice/coder", earlier, task_id)
    return {"id": task_id, "result": RESULT} if verb == "return_result" else {"id": task_id}


def actor(verb: str) -> str:
    return "alice" if verb == "handoff" else "alice/coder"


def both(cast: Cast, verb: str, selection: str) -> tuple[str, str]:
    """The compiled and the general answer of `verb` with `selection`, each on its task."""
    token = cast.token(actor(verb))
    compiled = text(cast.server, token, document(verb, selection), ready(cast, verb))
    general = text(cast.server, token, document(verb, selection, True), ready(cast, verb))
    return same_moment_and_ids(compiled), same_moment_and_ids(general)


SELECTIONS = st.lists(
    st.tuples(PREFIXES, st.sampled_from(SCALARS)).map(lambda a: aliased(*a)),
    min_size=1,
    max_size=6,
    unique_by=lambda f: f.split(":")[0],
).map(" ".join)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(verb=st.sampled_from(sorted(VERBS)), selection=SELECTIONS)
def test_a_compiled_move_answers_what_the_general_execution_answers(
    cast: Cast, verb: str, selection: str
) -> None:
    operation = parse(document(verb, selection)).definitions[0]
    assert isinstance(operation, OperationDefinitionNode)
    assert plan_of(schema._schema, operation) is not None  # it is within the subset
    compiled, general = both(cast, verb, selection)
    assert compiled == general
    assert '"errors"' not in compiled


def test_every_field_of_a_move_answers_as_in_general(cast: Cast) -> None:
    for verb in VERBS:
        compiled, general = both(cast, verb, " ".join(SCALARS))
        assert compiled == general, verb
        assert '"state"' in compiled and '"errors"' not in compiled


@pytest.mark.parametrize(
    ("verb", "variables", "code"),
    [
        ("accept_task", {"id": "01ZZZZZZZZZZZZZZZZZZZZZZZZ"}, "not_found"),
        ("accept_task", {"id": "a\u0000b"}, "invalid_input"),
        ("accept_task", {"id": None}, "invalid_input"),  # the variable is required
        ("start_task", "routed", "invalid_state"),  # not yet accepted
        ("accept_task", "routed by another", "not_found"),  # writer sees none of coder's
        ("accept_task", "unauthenticated", "unauthenticated"),
    ],
)
def test_a_refused_move_answers_as_in_general(
    cast: Cast, verb: str, variables: Any, code: str
) -> None:
    token = cast.token("alice/coder")
    if variables == "routed by another":
        token = cast.token("alice/writer")
    if variables == "unauthenticated":
        token = ""
    answers = []
    for general in (False, True):
        given_variables = variables
        if isinstance(variables, str):
            given_variables = {"id": cast.handoff("alice", "alice/coder", "moves")["id"]}
        query = document(verb, "id state version", general)
        answers.append(same_moment_and_ids(text(cast.server, token, query, given_variables)))
    assert answers[0] == answers[1]
    assert f'"code":"{code}"' in answers[0].replace(" ", ""), answers[0]


def test_a_stale_expected_version_answers_as_in_general(cast: Cast) -> None:
    token = cast.token("alice/coder")
    query = "mutation($id: ID!) { accept_task(task_id: $id, expected_version: 7)%s { id } }"
    answers = []
    for directive in ("", " @include(if: true)"):
        task_id = cast.handoff("alice", "alice/coder", "moves")["id"]
        answers.append(
            same_moment_and_ids(text(cast.server, token, query % directive, {"id": task_id}))
        )
    assert answers[0] == answers[1]
    assert '"conflict"' in answers[0] and '"data":null' in answers[0].replace(" ", "")


@pytest.mark.parametrize(
    "query",
    [
        "mutation($id: ID!) { accept_task(task_id: $id) { id packet { task } } }",
        "mutation($id: ID!) { accept_task(task_id: $id) { id allowed_verbs } }",
        "mutation($id: ID!) { accept_task(task_id: $id) { ... on Task { id } } }",
        "mutation($id: ID!) { accept_task(task_id: $id) { id @skip(if: false) } }",
        "mutation($id: ID!) { accept_task(task_id: $id) { id id } }",
        "mutation($id: ID!) { a: accept_task(task_id: $id) { id } b: start_task(task_id: $id) { id } }",  # noqa: E501
        'mutation { register_agent(name: "x") { token } }',
        "query($id: ID!) { task(id: $id) { id } }",
    ],
)
def test_what_the_subset_leaves_to_the_general_execution(query: str) -> None:
    operation = parse(query).definitions[0]
    assert isinstance(operation, OperationDefinitionNode)
    assert plan_of(schema._schema, operation) is None
