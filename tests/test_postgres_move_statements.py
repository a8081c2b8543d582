"""A move on PostgreSQL runs a fixed, small number of statements: the task's update, the
event's seq, its insert and the announcement go to the database as one statement."""

from __future__ import annotations

from typing import Any

import pytest
from factory import BOB, CODER, PLANNER, call, events_of, give, load
from server import BACKEND
from sqlalchemy import event
from sqlalchemy.engine.default import CacheStats

from app.storage.store import Store

pytestmark = [
    pytest.mark.cast,
    pytest.mark.skipif(BACKEND != "postgres", reason="the one-statement move is PostgreSQL's"),
]


class Statements:
    """Every statement the store's engine sends, BEGIN and COMMIT included."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.compiled_anew: list[str] = []  # statements SQLAlchemy compiled, not reused

    def statement(
        self, _conn: Any, _cursor: Any, sql: str, _params: Any, context: Any, *_: Any
    ) -> None:
        self.sent.append(sql.split()[0].upper())
        if context.cache_hit == CacheStats.CACHE_MISS:
            self.compiled_anew.append(sql)

    def begin(self, _conn: Any) -> None:
        self.sent.append("BEGIN")

    def commit(self, _conn: Any) -> None:
        self.sent.append("COMMIT")


async def counted(
    store: Store, verb: str, who: Any, task_id: str, statements: Statements | None = None
) -> list[str]:
    statements = statements or Statements()
    engine = store.statements_engine
    hooks = {
        "before_cursor_execute": statements.statement,
        "begin": statements.begin,
        "commit": statements.commit,
    }
    for name, hook in hooks.items():
        event.listen(engine, name, hook)
    try:
        await call(store, verb, who, task_id)
    finally:
        for name, hook in hooks.items():
            event.remove(engine, name, hook)
    return statements.sent


async def test_a_move_is_begin_lock_one_statement_and_commit(store: Store) -> None:
    task = await give(store, PLANNER, assignee="bob/coder")
    for verb in ("accept_task", "start_task"):
        assert await counted(store, verb, CODER, task.id) == ["BEGIN", "SELECT", "WITH", "COMMIT"]
    # a result also reads the result rules and stores the result
    sent = await counted(store, "return_result", CODER, task.id)
    assert sent == ["BEGIN", "SELECT", "SELECT", "INSERT", "WITH", "COMMIT"]
    moved = await load(store, task.id)
    logged = await events_of(store, task.id)
    verbs = ["handoff", "handoff", "accept_task", "start_task", "return_result", "return_result"]
    assert [e.verb for e in logged] == verbs
    assert [e.version for e in logged] == list(range(1, moved.version + 1))
    assert logged[-1].task["state"] == moved.state
    assert [e.seq for e in logged] == sorted(e.seq for e in logged)


async def test_the_move_statement_is_compiled_once_and_reused(store: Store) -> None:
    first, again = [await give(store, PLANNER, assignee="bob/coder") for _ in range(2)]
    for task in (first, again):
        await call(store, "accept_task", CODER, task.id)
    statements = Statements()
    await counted(store, "save_checkpoint", CODER, first.id, statements)
    assert any(sql.startswith("WITH moved") for sql in statements.compiled_anew)
    statements = Statements()
    await counted(store, "save_checkpoint", CODER, again.id, statements)
    assert statements.compiled_anew == []  # the same text: asyncpg's prepared form is reused


async def test_a_move_that_resumes_two_tasks_logs_both(store: Store) -> None:
    parent = await give(store, PLANNER, assignee="bob/coder")
    parent = await call(store, "accept_task", CODER, parent.id)
    child = await give(store, BOB, assignee="bob/coder", parent_task_id=parent.id)
    await call(store, "wait_on", CODER, parent.id, on="agent", question="the subtask")
    await call(store, "cancel_task", BOB, child.id)
    assert (await load(store, parent.id)).state == "accepted"
    assert [e.verb for e in await events_of(store, parent.id)][-1] == "cancel_task"
