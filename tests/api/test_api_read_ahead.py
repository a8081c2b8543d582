"""`tasks` and `task` read ahead what their selection asks for; whatever the selection, the
answer is the one the loaders give, and each viewer sees exactly what it saw before.

The loaders' answer is taken from the same selection under the latest event of each task
(`task_events { node { task { ... } } }`: the task as it is now, its related tasks and lists
read through the loaders), on a real server, for random selections and five viewers.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from live import Cast
from server import Server

pytestmark = pytest.mark.cast

CAST = ("alice", "bob", "carol", "alice/planner", "bob/coder", "carol/helper")
VIEWERS = ("alice", "bob", "carol", "bob/coder", "carol/helper")

HANDOFF = """mutation($input: HandoffInput!) { handoff(input: $input) { id state } }"""
MOVES = {
    "accept_task": "mutation($id: ID!) { accept_task(task_id: $id) { id } }",
    "start_task": "mutation($id: ID!) { start_task(task_id: $id) { id } }",
    "save_checkpoint": """mutation($id: ID!) {
      save_checkpoint(task_id: $id, checkpoint: {progress: "half"}) { id } }""",
    "return_result": """mutation($id: ID!) { return_result(task_id: $id, result: {
      summary: "done", provenance: agent_generated,
      evidence: [{kind: test_output, summary: "it passes", criteria: [0]}]}) { id } }""",
}

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
    "display_title",
    "turn_budget",
    "__typename",
    "allowed_verbs",
    "as_protocol",
    "packet { task depends_on }",
    "requested_by { __typename ... on AgentRef { agent_id } ... on PersonRef { handle } }",
    "route { via }",
    "result { summary revision }",
    "latest_checkpoint { progress }",
    "results { revision summary }",
    "checkpoints { id agent }",
    "events { seq verb to_state }",
)
RELATIONS = ("parent", "children", "dependencies")


def selections(depth: int) -> st.SearchStrategy[str]:
    """A Task selection set's body: fields, relations below (to `depth`), aliases, fragments."""
    leaf = st.sampled_from(SCALARS)
    if depth == 0:
        parts = st.lists(leaf, min_size=1, max_size=4)
    else:
        below = st.tuples(
            st.sampled_from(RELATIONS), selections(depth - 1), st.sampled_from(["", "_a", "_b"])
        ).map(lambda r: f"{r[0] + r[2] + ': ' if r[2] else ''}{r[0]} {{ {r[1]} }}")
        parts = st.lists(st.one_of(leaf, below), min_size=1, max_size=5)
    wrapped = parts.map(" ".join)
    return st.one_of(wrapped, wrapped.map(lambda s: f"... on Task {{ {s} }}"))


@pytest.fixture(scope="module")
def graph(live_server: Server) -> tuple[Cast, list[str]]:
    """Tasks across three owners: subtasks some viewers cannot see, dependencies on tasks
    some cannot see, and results, checkpoints and events on a few."""
    cast = Cast(live_server).add(*CAST)
    made: list[str] = []

    def give(by: str, assignee: str, parent: int | None, depends: list[int]) -> str:
        packet = {
            "task": f"task {len(made)}",
            "deliverable_type": "code",
            "acceptance_criteria": ["it passes"],
            "depends_on": [made[i] for i in depends],
        }
        task = {"project": cast.project("graph"), "assignee": cast.id(assignee), "packet": packet}
        if parent is not None:
            task["parent_task_id"] = made[parent]
        found = live_server.data(HANDOFF, {"input": task}, cast.token(by))["handoff"]
        made.append(found["id"])
        return str(found["id"])

    def work(who: str, id: str) -> None:
        for query in MOVES.values():  # as far as the task's state lets it go
            live_server.post(query, {"id": id}, cast.token(who))

    work("bob/coder", give("alice/planner", "bob/coder", None, []))
    work("bob/coder", give("bob", "bob/coder", 0, [0]))
    give("bob/coder", "carol/helper", 0, [1])
    work("carol/helper", give("carol", "carol/helper", 2, [0, 2]))
    give("alice", "bob/coder", 0, [2, 3, 1])
    give("alice/planner", "bob/coder", 0, [])
    give("carol/helper", "bob/coder", 2, [5, 4])
    work("bob/coder", give("bob", "bob/coder", 6, [6]))
    return cast, made


def _general(server: Server, token: str, body: str) -> dict[str, Any]:
    """Each visible task as the loaders answer the selection, by id."""
    query = f"{{ task_events(first: 500) {{ edges {{ node {{ task_id task {{ {body} }} }} }} }} }}"
    found: dict[str, Any] = {}
    for edge in server.data(query, token=token)["task_events"]["edges"]:
        found[edge["node"]["task_id"]] = edge["node"]["task"]  # the latest event's wins
    return found


def _read_ahead(server: Server, token: str, body: str) -> dict[str, Any]:
    query = f"{{ tasks(first: 500) {{ edges {{ cursor node {{ {body} }} }} }} }}"
    return {e["cursor"]: e["node"] for e in server.data(query, token=token)["tasks"]["edges"]}


def _one_by_one(server: Server, token: str, ids: list[str], body: str) -> dict[str, Any]:
    query = f"query($id: ID!) {{ task(id: $id) {{ {body} }} }}"
    found = {id: server.data(query, {"id": id}, token)["task"] for id in ids}
    return {id: task for id, task in found.items() if task is not None}


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(body=selections(2), viewer=st.sampled_from(VIEWERS))
def test_a_read_ahead_answers_what_the_loaders_answer(
    live_server: Server, graph: tuple[Cast, list[str]], body: str, viewer: str
) -> None:
    cast, made = graph
    token = cast.token(viewer)
    general = _general(live_server, token, body)
    assert _read_ahead(live_server, token, body) == general
    some = made[::3]
    assert _one_by_one(live_server, token, some, body) == {
        id: task for id, task in general.items() if id in some
    }


def test_each_viewer_sees_in_a_read_ahead_what_it_sees_by_the_loaders(
    live_server: Server, graph: tuple[Cast, list[str]]
) -> None:
    cast, made = graph
    body = (
        "id parent { id } children { id children { id } } dependencies { id } results { revision }"
    )
    seen = {}
    for viewer in VIEWERS:
        general = _general(live_server, cast.token(viewer), body)
        assert _read_ahead(live_server, cast.token(viewer), body) == general, viewer
        seen[viewer] = general
    # the graph has something to hide: each viewer misses some task or some relation
    assert len({len(s) for s in seen.values()}) > 1
    assert 0 < len(seen["carol/helper"]) < len(made)
