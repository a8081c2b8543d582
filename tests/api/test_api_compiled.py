"""A `tasks` page within the compiled subset (app/api/fast/compiled.py) answers exactly what the
general execution answers: the same response, byte for byte, for random selections (within
the subset and just outside it), arguments and viewers; errors included; in one statement.

The general answer is the same document with `@include(if: true)` on `tasks`: a directive
the compiled subset leaves to the general execution, and one that changes nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from factory import ALICE, give
from graphql import OperationDefinitionNode, parse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from live import Cast
from server import BACKEND, Server, in_process, quiet
from sqlalchemy import event
from test_api_loaders import Counter
from test_api_read_ahead import VIEWERS, graph  # noqa: F401 (the fixture)

from app.api.fast.compiled import plan_of
from app.service import admin
from app.storage.store import Store

pytestmark = pytest.mark.cast

SCALARS = (
    "id",
    "state",
    "project",
    "waiting_on",
    "requester",
    "assignee",
    "parent_task_id",
    "version",
    "created_at",
    "updated_at",
    "origin_message_id",
    "display_title",
    "turn_budget",
    "__typename",
)
OUTSIDE = (
    "allowed_verbs",
    "packet { task }",
    "results { verified_by { __typename } }",
    "events { task { id } }",
    "id @skip(if: false)",
)
RELATIONS = ("parent", "children", "dependencies")
# a task's lists, each field of them now and then
RESULT_FIELDS = (
    "summary provenance returned_by returned_at submission_id revision status decided_by_policy"
    " reason provenance_status __typename"
)
LISTS = {
    "results": [
        *RESULT_FIELDS.split(),
        "evidence { kind summary url content criteria artifact observed_at verifier __typename }",
        "artifacts { ref sha256 commit_sha __typename }",
        "verdicts { criterion accepted note }",
    ],
    "checkpoints": [
        "id",
        "task_id",
        "sha256",
        "agent",
        "handed_back",
        "created_at",
        "__typename",
        "checkpoint { progress decisions files_touched next_steps open_questions needs_answer }",
    ],
    "events": [
        "cursor",
        "seq",
        "kind",
        "task_id",
        "project",
        "from_state",
        "to_state",
        "waiting_on",
        "verb",
        "actor",
        "at",
        "version",
        "note",
        "__typename",
    ],
}


def lists() -> st.SearchStrategy[str]:
    """One of a task's lists, with some of its fields."""
    return st.sampled_from(sorted(LISTS)).flatmap(
        lambda name: st.lists(
            st.sampled_from(LISTS[name]), min_size=1, max_size=6, unique=True
        ).map(lambda fields: f"{name} {{ {' '.join(fields)} }}")
    )


PREFIXES = st.sampled_from(["", "x_", "y_"])  # an alias names its field: no conflicts


def key(field: str) -> str:
    """The response key of a field in the document's text."""
    return field.split(":")[0].split(" ")[0]


def aliased(prefix: str, field: str) -> str:
    name = field.split(" ")[0].split("(")[0]
    return f"{prefix}{name.strip('_')}: {field}" if prefix and name.isidentifier() else field


def nodes(depth: int, outside: bool) -> st.SearchStrategy[str]:
    """A Task selection body: scalars and relations to `depth`, aliased or not; with
    `outside`, now and then a field or fragment the compiled subset does not take."""
    leaf = st.one_of(st.sampled_from(SCALARS + OUTSIDE if outside else SCALARS), lists())
    leaf = st.tuples(PREFIXES, leaf).map(lambda a: aliased(*a))
    if depth > 0:
        below = st.tuples(PREFIXES, st.sampled_from(RELATIONS), nodes(depth - 1, outside))
        leaf = st.one_of(leaf, below.map(lambda r: aliased(r[0], f"{r[1]} {{ {r[2]} }}")))
    body = st.lists(leaf, min_size=1, max_size=5, unique_by=key).map(" ".join)
    if outside:
        body = st.one_of(body, body.map(lambda s: f"... on Task {{ {s} }}"))
    return body


def connections(outside: bool) -> st.SearchStrategy[str]:
    edge = st.lists(
        st.one_of(
            st.just("cursor"),
            st.just("__typename"),
            nodes(2, outside).map(lambda n: f"node {{ {n} }}"),
        ),
        min_size=1,
        max_size=3,
        unique_by=key,
    )
    info = st.lists(
        st.sampled_from(["has_next_page", "end_cursor", "__typename"]), min_size=1, unique=True
    )
    relay = st.lists(  # Relay's names (docs/frontends.md)
        st.sampled_from(
            ["hasNextPage", "hasPreviousPage", "startCursor", "endCursor", "has_next_page"]
        ),
        min_size=1,
        unique=True,
    )
    part = st.one_of(
        edge.map(lambda e: f"edges {{ {' '.join(e)} }}"),
        info.map(lambda i: f"page_info {{ {' '.join(i)} }}"),
        relay.map(lambda i: f"pageInfo {{ {' '.join(i)} }}"),
        st.just("total_count"),
        st.just("__typename"),
    )
    aliases = st.tuples(PREFIXES, part).map(lambda a: aliased(*a))
    return st.lists(aliases, min_size=1, max_size=4, unique_by=key).map(" ".join)


def arguments(made: list[str], cast: Cast) -> st.SearchStrategy[str]:
    first = st.sampled_from(["", "first: 0", "first: 2", "first: 500", "last: 2", "first: null"])
    after = st.sampled_from(["", f'after: "{made[2]}"', f'after: "{made[5]}"'])
    filters = st.sampled_from(
        [
            "",
            f'project: "{cast.project("graph")}"',
            "state: completed",
            f'parent_task_id: "{made[0]}"',
        ]
    )
    return st.tuples(first, after, filters).map(lambda a: ", ".join(x for x in a if x))


def _text(server: Server, token: str, query: str, variables: dict[str, Any] | None = None) -> str:
    body = {"query": query, "variables": variables or {}}
    response = server.client.post(server.graphql_url, json=body, headers=server.headers(token))
    return response.text


def _both(server: Server, token: str, args: str, body: str) -> tuple[str, str]:
    args = f"({args})" if args else ""
    compiled = f"{{ tasks{args} {{ {body} }} }}"
    general = f"{{ tasks{args} @include(if: true) {{ {body} }} }}"
    return _text(server, token, compiled), _text(server, token, general)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data(), viewer=st.sampled_from(VIEWERS), outside=st.booleans())
def test_a_compiled_page_answers_what_the_general_execution_answers(
    live_server: Server,
    graph: tuple[Cast, list[str]],  # noqa: F811
    data: st.DataObject,
    viewer: str,
    outside: bool,
) -> None:
    cast, made = graph
    body = data.draw(connections(outside))
    args = data.draw(arguments(made, cast))
    compiled, general = _both(live_server, cast.token(viewer), args, body)
    assert compiled == general
    if not outside:  # within the subset: the compiled statement answered
        operation = parse(f"{{ tasks {{ {body} }} }}").definitions[0]
        assert isinstance(operation, OperationDefinitionNode)
        assert plan_of(operation) is not None or "query_too_complex" in compiled
    assert '"errors"' not in compiled or "query_too_complex" in compiled  # over 30 aliases


def test_each_viewer_sees_on_the_compiled_page_what_it_sees_in_general(
    live_server: Server,
    graph: tuple[Cast, list[str]],  # noqa: F811
) -> None:
    cast, _ = graph
    body = """total_count page_info { has_next_page end_cursor } edges { cursor node {
      id parent { id } children { id children { id } } dependencies { id state } } }"""
    seen = set()
    for viewer in VIEWERS:
        compiled, general = _both(live_server, cast.token(viewer), "first: 500", body)
        assert compiled == general, viewer
        seen.add(compiled)
    assert len(seen) >= 3  # the graph has something to hide from some viewers


def test_variables_and_refusals_answer_as_in_general(
    live_server: Server,
    graph: tuple[Cast, list[str]],  # noqa: F811
) -> None:
    cast, made = graph
    token = cast.token("bob")
    page = "query($first: Int!, $after: String) { tasks(first: $first, after: $after)%s {"
    page += " edges { cursor node { id } } page_info { end_cursor } } }"
    for variables in ({"first": 2, "after": made[1]}, {"first": 501}, {"first": 1, "after": "x y"}):
        compiled = _text(live_server, token, page % "", variables)
        assert compiled == _text(live_server, token, page % " @include(if: true)", variables)
    for args in ("first: -1", 'after: "not a task id"'):
        compiled, general = _both(live_server, token, args, "edges { cursor }")
        assert compiled == general and '"errors"' in compiled
    # text PostgreSQL cannot hold (a refusal there, none on SQLite)
    assert len(set(_both(live_server, token, 'project: "a\\u0000b"', "edges { cursor }"))) == 1
    compiled, general = _both(live_server, "", "", "edges { cursor }")
    assert compiled == general and "unauthenticated" in compiled


@pytest.fixture
async def client(store: Store) -> AsyncIterator[tuple[httpx.AsyncClient, Counter]]:
    token = (await admin.provision_token(store, ALICE)).token
    async with in_process(store.url, token) as (app, http):
        await quiet(app)
        counter = Counter()
        event.listen(app.state.store.statements_engine, "before_cursor_execute", counter)
        yield http, counter


async def _statements(http: httpx.AsyncClient, counter: Counter, query: str) -> int:
    counter.statements.clear()
    body = (await http.post("/graphql", json={"query": query})).json()
    assert "errors" not in body, body["errors"]
    return len(counter.statements)


@pytest.mark.fast_path
@pytest.mark.skipif(BACKEND != "postgres", reason="the compiled page is PostgreSQL's")
async def test_a_compiled_page_is_one_statement_whatever_its_size(store: Store, client) -> None:  # type: ignore[no-untyped-def]
    http, counter = client
    parent = await give(store)
    for _ in range(6):
        await give(store, parent_task_id=parent.id)
    page = """{ tasks(first: %d) { total_count pageInfo { hasNextPage endCursor } edges { node {
      id parent { id children { id } } children { id } dependencies { id results { status } }
      results { revision evidence { kind } } checkpoints { id } events { cursor } } } } }"""
    await _statements(http, counter, "{ me { __typename } }")  # the token, known from now on
    authentication = await _statements(http, counter, "{ me { __typename } }")
    # (the Counter leaves out the `SET LOCAL plan_cache_mode` a count is preceded by)
    assert await _statements(http, counter, page % 2) == authentication + 1
    assert await _statements(http, counter, page % 500) == authentication + 1
    uncounted = page.replace("total_count ", "")
    assert await _statements(http, counter, uncounted % 500) == authentication + 1
