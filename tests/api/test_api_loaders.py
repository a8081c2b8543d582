"""Nested lists are batched: a query's SQL statements do not grow with the tasks it returns.

In process (the app over httpx's ASGI transport), so the test can count every statement the
app's engine runs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from factory import (
    ALICE,
    CODER,
    PLANNER,
    call,
    give,
    packet,
)
from server import in_process, quiet
from sqlalchemy import event

from app.service import admin
from app.storage.store import Store

pytestmark = pytest.mark.cast

NESTED = """
query Nested($first: Int!) {
  tasks(first: $first) {
    total_count
    edges {
      node {
        id
        parent { id }
        children { id }
        dependencies { id }
        results { revision status }
        checkpoints { id }
        events { seq verb }
        allowed_verbs
      }
    }
  }
}
"""


PROOF = "SELECT tokens.token_sha256"  # a request's token read to prove it


class Counter:
    def __init__(self) -> None:
        self.statements: list[str] = []
        self.all: list[str] = []  # every statement, these two kinds too
        self.transactions = 0

    def begin(self, _conn) -> None:  # type: ignore[no-untyped-def]
        self.transactions += 1

    def __call__(self, _conn, _cursor, statement, *_args) -> None:  # type: ignore[no-untyped-def]
        self.all.append(statement)
        # Not SQLite's explicit BEGIN nor PostgreSQL's `SET LOCAL plan_cache_mode` (one per
        # transaction, app/storage/tx.py), nor the token's last use, which is written when a
        # request falls in a new minute, nor its row, which a request reads to prove it
        # (on PostgreSQL each, on SQLite after another connection's commit), in a
        # transaction of its own (app/service/auth.py).
        if not statement.startswith(("BEGIN", "SET LOCAL", "UPDATE tokens", PROOF)):
            self.statements.append(statement)


@pytest.fixture
async def client(store: Store) -> AsyncIterator[tuple[httpx.AsyncClient, Counter]]:
    """The app on the test's database, its background work stopped (see `quiet`)."""
    token = (await admin.provision_token(store, ALICE)).token
    async with in_process(store.url, token) as (app, http):
        await quiet(app)
        counter = Counter()
        event.listen(app.state.store.statements_engine, "before_cursor_execute", counter)
        event.listen(app.state.store.statements_engine, "begin", counter.begin)
        yield http, counter


async def _tasks_with_every_relation(store: Store, count: int) -> None:
    """A chain: each task depends on the one before; every other one is its subtask; the
    first few are worked on, checkpointed, and completed with a result."""
    previous = None
    for i in range(count):
        fields: dict[str, Any] = {"packet": packet(depends_on=[previous.id] if previous else [])}
        if previous is not None and i % 2:
            fields["parent_task_id"] = previous.id
        task = await give(store, **fields)
        if i < 6:
            for verb in ("accept_task", "start_task", "save_checkpoint", "return_result"):
                task = await call(store, verb, CODER, task.id)
        previous = task


async def _statements(http: httpx.AsyncClient, counter: Counter, first: int) -> tuple[int, int]:
    counter.statements.clear()
    response = await http.post("/graphql", json={"query": NESTED, "variables": {"first": first}})
    body = response.json()
    assert "errors" not in body, body["errors"]
    return len(counter.statements), len(body["data"]["tasks"]["edges"])


async def test_500_tasks_with_nested_lists_take_as_many_statements_as_5(
    store: Store, client
) -> None:  # type: ignore[no-untyped-def]
    await _tasks_with_every_relation(store, 502)
    http, counter = client
    await http.post("/graphql", json={"query": "{ me { id } }"})  # the token is looked up once
    few, five = await _statements(http, counter, 5)
    many, five_hundred = await _statements(http, counter, 500)
    assert (five, five_hundred) == (5, 500)
    assert few == many, counter.statements
    # the page, the count, one per loader, and (PostgreSQL) plans for them
    assert many <= 8, counter.statements


BACKWARD = """
query Backward($last: Int!) {
  tasks(last: $last) {
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    edges {
      cursor
      node {
        id
        dependencies { id state results { revision } }
        results { revision status }
        checkpoints { id }
        events { seq verb }
      }
    }
  }
}
"""


async def test_a_page_read_backward_with_its_lists_takes_as_many_statements_for_50_as_for_5(
    store: Store, client
) -> None:  # type: ignore[no-untyped-def]
    """Relay's shape (`last`, `pageInfo`) reads its dependencies, results, checkpoints and
    events ahead as `first` does: one statement per list and level, whatever the page."""
    await _tasks_with_every_relation(store, 52)
    http, counter = client
    await http.post("/graphql", json={"query": "{ me { id } }"})
    counts = []
    for last in (5, 50):
        counter.statements.clear()
        body = (
            await http.post("/graphql", json={"query": BACKWARD, "variables": {"last": last}})
        ).json()
        assert "errors" not in body, body["errors"]
        page = body["data"]["tasks"]
        assert len(page["edges"]) == last and page["pageInfo"]["hasPreviousPage"]
        counts.append(len(counter.statements))
    # the page, the dependencies, their results, and the three lists of the page's tasks
    assert counts == [6, 6], counter.statements


async def test_a_single_task_query_uses_the_same_loaders(store: Store, client) -> None:  # type: ignore[no-untyped-def]
    task = await give(store, by=PLANNER)
    http, counter = client
    await http.post("/graphql", json={"query": "{ me { id } }"})
    counter.statements.clear()
    query = "query($id: ID!) { task(id: $id) { id children { id } events { seq } } }"
    body = (await http.post("/graphql", json={"query": query, "variables": {"id": task.id}})).json()
    assert body["data"]["task"]["id"] == task.id
    assert len(counter.statements) == 3, counter.statements  # the task, children, events


@pytest.mark.fast_path
@pytest.mark.parametrize("head", [False, True], ids=["plain", "asking_the_head"])
async def test_a_query_reads_in_one_transaction(store: Store, client, head: bool) -> None:  # type: ignore[no-untyped-def]
    if store.sqlite and not head:
        pytest.skip("on SQLite only a query that asks where the log ends shares one (a snapshot)")
    await _tasks_with_every_relation(store, 12)
    http, counter = client
    counter.transactions = 0
    counter.all.clear()
    query = NESTED.replace(
        "query Nested($first: Int!) {", "query Nested($first: Int!) { event_head"
    )
    body = (
        await http.post(
            "/graphql", json={"query": query if head else NESTED, "variables": {"first": 12}}
        )
    ).json()
    assert "errors" not in body, body["errors"]
    # the token's last use, written once a minute, is a write transaction of its own, and
    # the read of its row that proves it a read of its own
    apart = sum(s.startswith(("UPDATE tokens", PROOF)) for s in counter.all)
    # on PostgreSQL a snapshot's safe bound is proven in a read of its own, just before it
    bound = 1 if head and not store.sqlite else 0
    assert counter.transactions - apart - bound == 1, counter.statements
