"""Bad input and oversized queries get a clear error code, and the server keeps serving."""

from __future__ import annotations

import pytest
from factory import PACKET
from server import Server

from app.api.schema import MAX_ALIASES, MAX_DEPTH, MAX_TOKENS
from app.main import MAX_BODY_BYTES

HANDOFF = "mutation($input: HandoffInput!) { handoff(input: $input) { id } }"


def code_of(server: Server, query: str, variables: dict | None = None) -> str:
    return server.error(query, variables)["extensions"]["code"]


def test_a_query_deeper_than_the_limit_is_too_complex(api_server: Server) -> None:
    deep = (
        "{ tasks { edges { node { " + "parent { " * MAX_DEPTH + "id" + " }" * MAX_DEPTH + " } } } }"
    )
    error = api_server.error(deep)
    assert error["extensions"] == {"code": "query_too_complex"}
    assert "depth" in error["message"]
    assert api_server.data("{ me { id } }") == {"me": {"id": "admin"}}


def test_a_query_just_within_the_depth_limit_runs(api_server: Server) -> None:
    nested = "parent { " * (MAX_DEPTH - 4) + "id" + " }" * (MAX_DEPTH - 4)
    assert (
        api_server.data("{ tasks { edges { node { " + nested + " } } } }")["tasks"]["edges"] == []
    )


def test_too_many_aliases_are_too_complex(api_server: Server) -> None:
    aliases = " ".join(f"m{i}: me {{ id }}" for i in range(MAX_ALIASES + 1))
    error = api_server.error("{ " + aliases + " }")
    assert error["extensions"] == {"code": "query_too_complex"}
    assert api_server.data("{ " + " ".join(f"m{i}: me {{ id }}" for i in range(3)) + " }")


def test_too_many_tokens_are_too_complex(api_server: Server) -> None:
    fields = " ".join(["id"] * MAX_TOKENS)
    error = api_server.error("{ me { " + fields + " } }")
    assert error["extensions"] == {"code": "query_too_complex"}
    assert "tokens" in error["message"]


def test_a_body_over_the_size_limit_is_refused_with_a_code(api_server: Server) -> None:
    huge = {"query": "{ me { id } }", "variables": {"pad": "x" * MAX_BODY_BYTES}}
    response = api_server.client.post(
        api_server.graphql_url, json=huge, headers=api_server.headers()
    )
    assert response.status_code == 413
    assert response.json()["errors"][0]["extensions"] == {"code": "query_too_complex"}
    assert api_server.data("{ me { id } }")


def test_a_chunked_body_over_the_size_limit_is_refused_too(api_server: Server) -> None:
    """Without a Content-Length the server counts what arrives and stops at the limit."""

    def chunks():  # type: ignore[no-untyped-def]
        yield b'{"query": "{ me { id } }", "variables": {"pad": "'
        for _ in range(MAX_BODY_BYTES // 65536 + 2):
            yield b"x" * 65536
        yield b'"}}'

    headers = {**api_server.headers(), "content-type": "application/json"}
    response = api_server.client.post(api_server.graphql_url, content=chunks(), headers=headers)
    assert "content-length" not in response.request.headers
    assert response.status_code == 413
    assert response.json()["errors"][0]["extensions"] == {"code": "query_too_complex"}
    assert api_server.data("{ me { id } }")


def test_a_chunked_body_within_the_limit_is_served(api_server: Server) -> None:
    def chunks():  # type: ignore[no-untyped-def]
        yield b'{"query": "{ me '
        yield b'{ id } }"}'

    headers = {**api_server.headers(), "content-type": "application/json"}
    response = api_server.client.post(api_server.graphql_url, content=chunks(), headers=headers)
    assert "content-length" not in response.request.headers
    assert response.json() == {"data": {"me": {"id": "admin"}}}


@pytest.mark.parametrize("first", [501, -1, 10_000])
def test_first_outside_0_to_500_is_invalid_input(api_server: Server, first: int) -> None:
    error = api_server.error("query($f: Int!) { tasks(first: $f) { total_count } }", {"f": first})
    assert error["extensions"] == {"code": "invalid_input"}
    assert "first" in error["message"]
    events = api_server.error(
        "query($f: Int!) { task_events(first: $f) { total_count } }", {"f": first}
    )
    assert events["extensions"] == {"code": "invalid_input"}


@pytest.mark.parametrize(
    "query, variables",
    [
        ("query($id: ID!) { task(id: $id) { id } }", {"id": "not an id!"}),
        ("query($id: ID!) { task(id: $id) { id } }", {"id": "x" * 65}),
        ("query($a: String) { tasks(after: $a) { total_count } }", {"a": "../../etc"}),
        ("query($a: String) { task_events(after: $a) { total_count } }", {"a": "seven"}),
        ("mutation($id: ID!) { accept_task(task_id: $id) { id } }", {"id": "a b"}),
    ],
)
def test_malformed_ids_and_cursors_are_invalid_input(api_server: Server, query, variables) -> None:  # type: ignore[no-untyped-def]
    body = api_server.post(query, variables)
    assert body["errors"][0]["extensions"]["code"] == "invalid_input", body


@pytest.mark.parametrize(
    "field, value",
    [
        ("task", "x" * 501),
        ("acceptance_criteria", []),
        ("acceptance_criteria", ["ok"] * 21),
        ("context", "x" * 4001),
        ("files", ["f"] * 51),
    ],
)
def test_oversized_or_empty_packet_fields_are_invalid_input(
    api_server: Server, field, value
) -> None:  # type: ignore[no-untyped-def]
    variables = {
        "input": {"project": "p", "assignee": "admin/a", "packet": {**PACKET, field: value}}
    }
    error = api_server.error(HANDOFF, variables)
    assert error["extensions"] == {"code": "invalid_input"}
    assert f"packet.{field}" in error["message"] or "packet" in error["message"]


@pytest.mark.parametrize(
    "changes",
    [
        {"project": "Not A Slug"},
        {"assignee": "no-slash"},
        {"display_title": "x" * 201},
        {"turn_budget": 101},
        {"idempotency_key": "k" * 201},
    ],
)
def test_bad_handoff_fields_are_invalid_input(api_server: Server, changes) -> None:  # type: ignore[no-untyped-def]
    variables = {"input": {"project": "p", "assignee": "admin/a", "packet": PACKET, **changes}}
    assert code_of(api_server, HANDOFF, variables) == "invalid_input"


@pytest.mark.parametrize(
    "query, variables",
    [
        ("{ me { id ", None),  # a syntax error
        ("{ me { nope } }", None),  # an unknown field
        ("query($s: TaskState) { tasks(state: $s) { total_count } }", {"s": "sleeping"}),
        ("query($f: Int!) { tasks(first: $f) { total_count } }", {"f": 2**40}),
        ("query($f: Int!) { tasks(first: $f) { total_count } }", {}),
    ],
)
def test_requests_graphql_itself_refuses_are_invalid_input(
    api_server: Server, query, variables
) -> None:  # type: ignore[no-untyped-def]
    assert code_of(api_server, query, variables) == "invalid_input"


def test_a_subscription_over_plain_http_is_refused_clearly(api_server: Server) -> None:
    query = {"query": "subscription { task_events { seq } }"}
    response = api_server.client.post(
        api_server.graphql_url, json=query, headers=api_server.headers()
    )
    assert response.status_code == 400
    assert "subscriptions are not allowed" in response.text


def test_an_unknown_task_is_null_and_an_unknown_task_mutation_not_found(api_server: Server) -> None:
    assert api_server.data('{ task(id: "01ARZ3NDEKTSV4RRFFQ69G5FAV") { id } }') == {"task": None}
    error = api_server.error(
        'mutation { cancel_task(task_id: "01ARZ3NDEKTSV4RRFFQ69G5FAV") { id } }'
    )
    assert error["extensions"] == {"code": "not_found"}


def test_the_server_is_still_serving_after_all_that(api_server: Server) -> None:
    assert api_server.alive()
    assert api_server.data("{ me { kind id } }") == {"me": {"kind": "person", "id": "admin"}}
