"""Garbage from a client gets a clear refusal, never a fault, and its connection stays usable.

Each request below goes over one keep-alive connection to a real server; after the
refusal, the same connection must still answer a good query.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from factory import PACKET
from server import Server

from app.main import MAX_BODY_BYTES

JSON = "application/json"
FORM = "application/x-www-form-urlencoded"
GOOD = {"query": "{ me { id } }"}
HANDOFF = "mutation($input: HandoffInput!) { handoff(input: $input) { id } }"


@dataclass(frozen=True)
class Garbage:
    name: str
    body: bytes | None = None
    content_type: str | None = JSON
    method: str = "POST"
    params: dict[str, str] = field(default_factory=dict)


def body(value: Any) -> bytes:
    return json.dumps(value).encode()


def post(name: str, value: Any, **kwargs: Any) -> Garbage:
    """A POST of `value` as JSON."""
    return Garbage(name, body(value), **kwargs)


def get(name: str, **params: str) -> Garbage:
    return Garbage(name, method="GET", params=params)


def nested(opening: str, middle: str, closing: str, budget: int) -> bytes:
    """`variables` nested as deep as fits in `budget` bytes."""
    depth = (budget - 100) // (len(opening) + len(closing))
    text = '{"query": "{ me { id } }", "variables": {"v": '
    return (text + opening * depth + middle + closing * depth + "}}").encode()


FIRST = "query($first: Int) { tasks(first: $first) { total_count } }"
BY_PROJECT = "query($p: String) { tasks(project: $p) { total_count } }"
TASK = "query($id: ID!) { task(id: $id) { id } }"
ME = "{ me { id } }"
INBOX = "query($first: Int, $after: String) { inbox(first: $first, after: $after) { total_count } }"
LONG = "a" * 900_000
ALMOST_ALL = MAX_BODY_BYTES - 100

GARBAGE = [
    Garbage("body not UTF-8", b'{"query": "\xff\xfe"}'),
    Garbage("variables not UTF-8", b'{"query": "{ me { id } }", "variables": {"a": "\xc3"}}'),
    post("first and last together", {"query": "{ tasks(first: 2, last: 2) { total_count } }"}),
    post("negative last", {"query": "{ inbox(last: -1) { total_count } }"}),
    post("negative first", {"query": FIRST, "variables": {"first": -3}}),
    post(
        "a cursor that is not ours",
        {"query": '{ tasks(after: "YXJyYXljb25uZWN0aW9uOjA=") { total_count } }'},
    ),
    post(
        "an event cursor that is not ours",
        {"query": '{ task_events(before: "x1") { total_count } }'},
    ),
    post("node of a malformed id", {"query": '{ node(id: "no such/kind/of id!") { id } }'}),
    post("query a number", {"query": 5}),
    post("query a list", {"query": [ME]}),
    post("query an object", {"query": {"me": "id"}}),
    post("query null", {"query": None}),
    post("no query", {}),
    post("variables a string", {**GOOD, "variables": "{}"}),
    post("variables a list", {**GOOD, "variables": [1]}),
    post("variables a number", {**GOOD, "variables": 1}),
    post("operationName a number", {**GOOD, "operationName": 5}),
    post("operationName a list", {**GOOD, "operationName": ["A"]}),
    post("unknown operationName", {"query": "query A { me { id } }", "operationName": "B"}),
    post("extensions a string", {**GOOD, "extensions": "x"}),
    post("a JSON array (a batch)", [GOOD]),
    post("an empty JSON array", []),
    post("a JSON string", ME),
    post("a JSON number", 5),
    post("JSON null", None),
    post("JSON true", True),
    Garbage("an empty body", b""),
    Garbage("truncated JSON", b'{"query": "{ me { id } }'),
    Garbage("trailing garbage", b'{"query": "{ me { id } }"} x'),
    Garbage("NaN", b'{"query": "{ me { id } }", "variables": {"f": NaN}}'),
    Garbage("a number beyond a double", b'{"query": "{ me { id } }", "variables": {"f": 1e999}}'),
    post("a huge integer variable", {"query": FIRST, "variables": {"first": 10**400}}),
    post("a huge integer literal", {"query": f"{{ tasks(first: {10**400}) {{ total_count }} }}"}),
    post("an integer over 32 bits", {"query": FIRST, "variables": {"first": 2**31}}),
    post("the inbox's first below 0", {"query": INBOX, "variables": {"first": -1}}),
    post("the inbox's first above 500", {"query": INBOX, "variables": {"first": 501}}),
    post("the inbox after no task id", {"query": INBOX, "variables": {"after": "' or 1=1 --"}}),
    post("the inbox after an empty cursor", {"query": INBOX, "variables": {"after": ""}}),
    Garbage(
        "a lone surrogate in variables",
        body({"query": BY_PROJECT, "variables": {"p": "?"}}).replace(b'"?"', b'"\\ud800"'),
    ),
    Garbage("a lone surrogate in the query", b'{"query": "{ me { id } } # \\udc00"}'),
    post("a NUL in the query", {"query": ME + "\u0000"}),
    post("a NUL in an id", {"query": TASK, "variables": {"id": "a\u0000"}}),
    post("a NUL escaped in a literal id", {"query": '{ task(id: "a\\u0000") { id } }'}),
    post("a very long id", {"query": TASK, "variables": {"id": LONG}}),
    post("a very long literal id", {"query": f'{{ task(id: "{LONG}") {{ id }} }}'}),
    Garbage("1 MB of [ in variables", nested("[", "", "]", MAX_BODY_BYTES)),
    Garbage('1 MB of {"a": in variables', nested('{"a":', "1", "}", MAX_BODY_BYTES)),
    post("1 MB of { in the query", {"query": "{" * ALMOST_ALL}),
    post("1 MB of [ in a literal", {"query": "{ task(id: " + "[" * ALMOST_ALL + ") { id } }"}),
    post("a subscription over POST", {"query": "subscription { task_events { seq } }"}),
    Garbage("text/plain", body(GOOD), content_type="text/plain"),
    Garbage("no content type", body(GOOD), content_type=None),
    Garbage("a form", b"query=%7B+me+%7B+id+%7D+%7D", content_type=FORM),
    Garbage("multipart", b"--x\r\n\r\n--x--\r\n", content_type="multipart/form-data; boundary=x"),
    Garbage("application/graphql", ME.encode(), content_type="application/graphql"),
    get("GET without a query"),
    get("GET with an empty query", query=""),
    get("GET with variables not JSON", query=ME, variables="{"),
    get("GET with variables a list", query=ME, variables="[1]"),
    get("GET with variables a number", query=ME, variables="5"),
    get("GET with a mutation", query='mutation { cancel_task(task_id: "x") { id } }'),
    get("GET with an unknown operationName", query=ME, operationName="Nope"),
    get("GET with a syntax error", query="{ me { id "),
]


@pytest.fixture(scope="module")
def connection(api_server: Server) -> Iterator[httpx.Client]:
    """One client holding one keep-alive connection."""
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    headers = {"accept": JSON, **api_server.headers()}
    with httpx.Client(base_url=api_server.base_url, headers=headers, limits=limits) as client:
        yield client


def send(client: httpx.Client, garbage: Garbage) -> httpx.Response:
    if garbage.method == "GET":
        return client.get("/graphql", params=garbage.params)
    headers = {"content-type": garbage.content_type} if garbage.content_type else {}
    request = client.build_request("POST", "/graphql", content=garbage.body, headers=headers)
    if garbage.content_type is None:
        request.headers.pop("content-type", None)
    return client.send(request)


def peer(response: httpx.Response) -> object:
    """The local address of the connection the response came on."""
    return response.extensions["network_stream"].get_extra_info("client_addr")


@pytest.mark.parametrize("garbage", GARBAGE, ids=[g.name for g in GARBAGE])
def test_garbage_is_refused_with_a_code_and_the_connection_still_serves(
    api_server: Server, connection: httpx.Client, garbage: Garbage
) -> None:
    response = send(connection, garbage)
    assert response.status_code < 500, response.text[:500]
    assert "Traceback" not in response.text and "internal" not in response.text
    assert response.headers["content-type"] == JSON, response.text[:500]
    answer = response.json()
    if response.status_code == 200:
        assert answer.get("errors"), answer
    else:
        assert 400 <= response.status_code < 500
        assert answer["data"] is None
    codes = {error["extensions"]["code"] for error in answer["errors"]}
    assert codes <= {"invalid_input", "query_too_complex"}, answer
    assert all(isinstance(error["message"], str) for error in answer["errors"])

    good = connection.post("/graphql", json=GOOD)
    assert good.json() == {"data": {"me": {"id": "admin"}}}
    assert peer(good) == peer(response), "the connection was not kept"


def test_a_nul_in_the_task_of_a_handoff_is_invalid_input(api_server: Server) -> None:
    """PostgreSQL holds no U+0000 in text or jsonb; both backends refuse it alike."""
    api_server.register(api_server.owner_token or "", "a")
    for packet in (
        {**PACKET, "task": "Write\u0000it"},
        {**PACKET, "acceptance_criteria": ["ok", "\u0000"]},
        {**PACKET, "context": "\u0000"},
    ):
        variables = {"input": {"project": "p", "assignee": "admin/a", "packet": packet}}
        error = api_server.error(HANDOFF, variables)
        assert error["extensions"] == {"code": "invalid_input"}, error
        assert "U+0000" in error["message"] and error["message"].startswith("packet.")
    good = {"input": {"project": "p", "assignee": "admin/a", "packet": PACKET}}
    assert api_server.data(HANDOFF, good)["handoff"]["id"]


KEYED_HANDOFF = (
    'mutation { handoff(input: {project: "p", assignee: "admin/a", idempotency_key: "k\\u0000", '
    'packet: {task: "t", deliverable_type: doc, acceptance_criteria: ["c"]}}) { id } }'
)
NUL_ELSEWHERE = {
    "tasks.project": (BY_PROJECT, {"p": "p\u0000"}),
    "tasks.assignee": (
        "query($v: String) { tasks(assignee: $v) { total_count } }",
        {"v": "\u0000"},
    ),
    "tasks.parent_task_id": (
        "query($v: ID) { tasks(parent_task_id: $v) { total_count } }",
        {"v": "\u0000"},
    ),
    "task_events.project": (
        "query($v: String) { task_events(project: $v) { total_count } }",
        {"v": "\u0000"},
    ),
    "handoff.idempotency_key": (KEYED_HANDOFF, None),
}


@pytest.mark.parametrize("query, variables", list(NUL_ELSEWHERE.values()), ids=list(NUL_ELSEWHERE))
def test_a_nul_in_any_other_text_is_never_a_fault(
    api_server: Server, query: str, variables: dict[str, Any] | None
) -> None:
    """SQLite can search for it (and finds nothing); PostgreSQL refuses it: invalid_input."""
    answer = api_server.post(query, variables)
    codes = {error["extensions"]["code"] for error in answer.get("errors", [])}
    assert codes <= {"invalid_input", "not_found"}, answer
    assert api_server.data("{ __typename }") == {"__typename": "Query"}
