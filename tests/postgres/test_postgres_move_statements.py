"""A move on PostgreSQL runs a fixed, small number of statements: the task's update (or
insert), the rows that go with it, the events' seqs, their insert and the announcement go to
the database as one statement, which on the fast paths commits by itself when it is the
command's only write (on the plain path, inside BEGIN and COMMIT)."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import pytest
from asyncpg.prepared_stmt import PreparedStatement
from factory import BOB, CODER, PLANNER, call, events_of, evidence, give, load, result
from server import BACKEND
from sqlalchemy import event
from sqlalchemy.engine.default import CacheStats

from app.domain.errors import ProtocolError
from app.storage.repositories.records import results
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


class Sent:
    """Every round trip the store makes to PostgreSQL through asyncpg, by its first word:
    prepared statements, and the plain commands that begin and end transactions."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.sent: list[str] = []
        fetch, execute = PreparedStatement.fetch, asyncpg.Connection.execute

        async def prepared(statement: Any, *args: Any, **kw: Any) -> Any:
            self.sent.append(statement.get_query().split()[0].upper())
            return await fetch(statement, *args, **kw)

        async def plain(conn: Any, query: str, *args: Any, **kw: Any) -> Any:
            self.sent.append(query.split()[0].upper().rstrip(";"))
            return await execute(conn, query, *args, **kw)

        monkeypatch.setattr(PreparedStatement, "fetch", prepared)
        monkeypatch.setattr(asyncpg.Connection, "execute", plain)

    def take(self) -> list[str]:
        sent, self.sent = self.sent, []
        return sent


def alone(store: Store, *statements: str) -> list[str]:
    """The round trips of a write run alone: on the fast paths its statements, the last
    committing by itself; on the plain path the same inside BEGIN and COMMIT."""
    return list(statements) if store.fast else ["BEGIN", *statements, "COMMIT"]


async def test_a_move_and_a_handoff_are_two_round_trips_each(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    await give(store, PLANNER, assignee="bob/coder")  # founds the project
    sent = Sent(monkeypatch)
    task = await give(store, PLANNER, assignee="bob/coder")
    # the assignee's standing, its owner's gate rules and the project in one statement; then
    # the task, its events and their announcement in one statement that commits by itself
    assert sent.take() == alone(store, "SELECT", "WITH")
    for verb in ("accept_task", "start_task"):
        await call(store, verb, CODER, task.id)
        assert sent.take() == alone(store, "SELECT", "WITH")  # the task; its guarded move
    # a first result reads the result rules with the task; the result rides on the move
    await call(store, "return_result", CODER, task.id)
    assert sent.take() == alone(store, "SELECT", "WITH")
    moved = await load(store, task.id)
    logged = await events_of(store, task.id)
    verbs = ["handoff", "handoff", "accept_task", "start_task", "return_result", "return_result"]
    assert [e.verb for e in logged] == verbs
    assert [e.version for e in logged] == list(range(1, moved.version + 1))
    assert logged[-1].task["state"] == moved.state
    assert [e.seq for e in logged] == sorted(e.seq for e in logged)
    assert [(r["revision"], r["status"]) for r in await stored_results(store, task.id)] == [
        (1, "accepted")
    ]


async def test_writes_that_are_not_the_last_run_in_a_transaction(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent = Sent(monkeypatch)
    task = await give(store, PLANNER, project="strict", assignee="bob/coder")
    founding = sent.take()  # the project is founded, then the task written: one transaction
    # (on the fast paths, begun after the first read: `Tx.begin`)
    begun = ["SELECT", "BEGIN"] if store.fast else ["BEGIN", "SELECT"]
    assert founding[:2] == begun and founding[-1] == "COMMIT"
    for verb in ("accept_task", "start_task"):
        await call(store, verb, CODER, task.id)
    sent.take()
    # require_complete_evidence in `strict`: half the evidence sends the result back
    await call(store, "return_result", CODER, task.id, result=result([evidence([0])]))
    assert sent.take() == alone(store, "SELECT", "WITH")
    await call(store, "return_result", CODER, task.id)  # the second revision supersedes it
    second = sent.take()
    assert "BEGIN" in second and second[-1] == "COMMIT"
    stored = [(r["revision"], r["status"]) for r in await stored_results(store, task.id)]
    assert stored == [(1, "superseded"), (2, "accepted")]
    done = await load(store, task.id)
    assert (done.state, done.result["revision"] if done.result else None) == ("completed", 2)


async def test_a_move_against_a_concurrent_one_reads_again(store: Store) -> None:
    """Ten accept_task at once: one moves the task, the others read it again and are
    refused as the move's second caller is; the log has one accept."""
    task = await give(store, PLANNER, assignee="bob/coder")
    tried = await asyncio.gather(
        *(call(store, "accept_task", CODER, task.id) for _ in range(10)), return_exceptions=True
    )
    moved = [t for t in tried if not isinstance(t, Exception)]
    refused = [t for t in tried if isinstance(t, ProtocolError)]
    assert len(moved) == 1 and len(refused) == 9, tried
    assert {e.code for e in refused} == {"invalid_state"}
    assert [e.verb for e in await events_of(store, task.id)].count("accept_task") == 1


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


async def stored_results(store: Store, task_id: str) -> list[Any]:
    async with store.read() as tx:
        rows = await tx.rows(
            results.select().where(results.c.task_id == task_id).order_by(results.c.revision)
        )
    return [r._mapping for r in rows]
