"""`task_graph`: a task's ancestors, descendants and dependencies both ways, with their edges.

In process (the app over httpx's ASGI transport), so the test can count every statement the
app's engine runs: one, for a graph of 3 tasks as for one of 60.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from factory import CODER, HELPER, PLANNER, SPY, call, give, packet
from server import in_process, quiet
from sqlalchemy import event
from test_api_loaders import Counter

from app.domain.principals import Principal
from app.domain.task import Task
from app.service import admin
from app.storage.store import Store

pytestmark = pytest.mark.cast

GRAPH = """
query($id: ID!, $depth: Int! = 4) {
  task_graph(task_id: $id, depth: $depth) {
    root_id
    tasks { id state parent_task_id }
    edges { kind from_id to_id }
    truncated
  }
}
"""


@pytest.fixture
async def client(store: Store) -> AsyncIterator[tuple[httpx.AsyncClient, Counter]]:
    """The app on the test's database as alice/planner, its background work stopped (see
    `quiet`)."""
    async with _as(store, PLANNER) as pair:
        yield pair


class _as:
    def __init__(self, store: Store, who: Principal) -> None:
        self.store, self.who = store, who

    async def __aenter__(self) -> tuple[httpx.AsyncClient, Counter]:
        token = (await admin.provision_token(self.store, self.who)).token
        self._context = in_process(self.store.url, token)
        app, http = await self._context.__aenter__()
        await quiet(app)
        counter = Counter()
        event.listen(app.state.store.statements_engine, "before_cursor_execute", counter)
        await http.post("/graphql", json={"query": "{ me { id } }"})  # the token, looked up once
        return http, counter

    async def __aexit__(self, *exc: Any) -> None:
        await self._context.__aexit__(*exc)


async def _graph(http: httpx.AsyncClient, task_id: str, depth: int = 4) -> Any:
    body = (
        await http.post(
            "/graphql", json={"query": GRAPH, "variables": {"id": task_id, "depth": depth}}
        )
    ).json()
    assert "errors" not in body, body["errors"]
    return body["data"]["task_graph"]


async def _working(store: Store, who: Principal, task: Task) -> Task:
    for verb in ("accept_task", "start_task"):
        task = await call(store, verb, who, task.id)
    return task


async def _tree(store: Store, levels: int, fan: int) -> tuple[Task, list[Task]]:
    """A root for bob/coder with subtasks `fan` wide to `levels` levels (bob/coder and
    bob/helper hand them to each other), each subtask depending on the sibling before it."""
    root = await _working(store, CODER, await give(store))
    made, level, agents = (
        [root],
        [root],
        [(CODER, "bob/helper", HELPER), (HELPER, "bob/coder", CODER)],
    )
    for depth in range(levels - 1):
        by, assignee, worker = agents[depth % 2]
        below = []
        for parent in level:
            previous: Task | None = None
            for _ in range(fan):
                deps = [previous.id] if previous else []
                child = await give(
                    store,
                    by=by,
                    assignee=assignee,
                    parent_task_id=parent.id,
                    packet=packet(depends_on=deps),
                )
                previous = await _working(store, worker, child)
                below.append(previous)
        made += below
        level = below
    return root, made


async def _statements(http: httpx.AsyncClient, counter: Counter, root: str) -> tuple[int, Any]:
    counter.statements.clear()
    graph = await _graph(http, root)
    return len(counter.statements), graph


async def test_a_graph_of_60_tasks_takes_as_many_statements_as_one_of_3(store: Store) -> None:
    small, _ = await _tree(store, levels=2, fan=2)
    large, made = await _tree(store, levels=3, fan=7)
    async with _as(store, CODER) as (http, counter):
        few, three = await _statements(http, counter, small.id)
        many, fifty_seven = await _statements(http, counter, large.id)
    assert (len(three["tasks"]), len(fifty_seven["tasks"])) == (3, 57)
    assert {t["id"] for t in fifty_seven["tasks"]} == {t.id for t in made}
    assert few == many == 1, counter.statements
    kinds = [e["kind"] for e in fifty_seven["edges"]]
    assert (kinds.count("parent"), kinds.count("depends_on")) == (56, 6 + 7 * 6)


async def test_the_graph_holds_ancestors_descendants_and_dependencies_both_ways(
    store: Store,
) -> None:
    dependency = await give(store)
    top = await _working(store, CODER, await give(store))
    middle = await give(
        store,
        by=CODER,
        assignee="bob/helper",
        parent_task_id=top.id,
        packet=packet(depends_on=[dependency.id]),
    )
    dependent = await give(store, packet=packet(depends_on=[top.id]))
    unrelated = await give(store)
    sibling_of_dependency = await give(store, packet=packet(depends_on=[dependency.id]))
    async with _as(store, CODER) as (coder, _):
        graph = await _graph(coder, middle.id)
    ids = [t["id"] for t in graph["tasks"]]
    assert ids[0] == graph["root_id"] == middle.id
    assert set(ids) == {middle.id, top.id, dependency.id, dependent.id}
    assert unrelated.id not in ids and sibling_of_dependency.id not in ids
    edges = {(e["kind"], e["from_id"], e["to_id"]) for e in graph["edges"]}
    assert edges == {
        ("parent", top.id, middle.id),
        ("depends_on", middle.id, dependency.id),
        ("depends_on", dependent.id, top.id),
    }
    async with _as(store, CODER) as (coder, _):
        assert {t["id"] for t in (await _graph(coder, middle.id, depth=1))["tasks"]} == {
            middle.id,
            top.id,
            dependency.id,
        }


async def test_the_graph_shows_only_what_the_caller_sees_and_walks_through_nothing_else(
    store: Store, client
) -> None:  # type: ignore[no-untyped-def]
    http, _ = client  # alice/planner
    top = await _working(store, CODER, await give(store))
    hidden = await _working(
        store, HELPER, await give(store, by=CODER, assignee="bob/helper", parent_task_id=top.id)
    )
    below_hidden = await give(store, by=HELPER, assignee="bob/coder", parent_task_id=hidden.id)
    dependent = await give(store, packet=packet(depends_on=[top.id]))
    graph = await _graph(http, top.id)
    assert {t["id"] for t in graph["tasks"]} == {top.id, dependent.id}
    assert [(e["kind"], e["from_id"], e["to_id"]) for e in graph["edges"]] == [
        ("depends_on", dependent.id, top.id)
    ]
    async with _as(store, CODER) as (coder, _):
        seen = {t["id"] for t in (await _graph(coder, top.id))["tasks"]}
    assert seen == {top.id, hidden.id, below_hidden.id, dependent.id}
    async with _as(store, SPY) as (spy, _):
        assert await _graph(spy, top.id) is None
        assert await _graph(spy, "01J0000000000000000000NONE") is None


async def test_a_depth_out_of_range_is_refused(client) -> None:  # type: ignore[no-untyped-def]
    http, _ = client
    for depth in (0, 11):
        body = (
            await http.post(
                "/graphql", json={"query": GRAPH, "variables": {"id": "x", "depth": depth}}
            )
        ).json()
        assert body["errors"][0]["extensions"]["code"] == "invalid_input", body
