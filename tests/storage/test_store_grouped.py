"""SQLite: the writes ready together share one transaction and its commit
(app/storage/fast/grouped.py). Each is kept or undone on its own, none returns before the
commit, and a failed commit fails every write of the group."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable

import pytest
from factory import CODER, PLANNER, give
from server import BACKEND
from sqlalchemy.engine import make_url

from app.service import verbs
from app.storage.fast import grouped
from app.storage.store import Store
from app.storage.tx import Tx

pytestmark = [
    pytest.mark.cast,
    pytest.mark.skipif(BACKEND == "postgres", reason="SQLite's writes only (one writer)"),
]

AT = "2026-12-04T04:00:00.000000Z"


class Stop(Exception):
    pass


def _committed(store: Store, handle: str) -> bool:
    """Whether another connection sees the person: only a committed write shows there."""
    path = make_url(store.url).database
    assert path is not None
    with sqlite3.connect(path) as other:
        found = other.execute("SELECT 1 FROM persons WHERE handle = ?", (handle,)).fetchone()
    return found is not None


async def _write(store: Store, block: Callable[[Tx], Awaitable[None]]) -> None:
    async with store.write() as tx:
        await block(tx)


@pytest.mark.fast_path
async def test_writes_ready_together_share_a_commit_and_none_returns_before_it(
    store: Store,
) -> None:
    seen_by_second: list[bool] = []
    returned: list[str] = []

    async def first(tx: Tx) -> None:
        await tx.principals.ensure_person("anna", AT)

    async def second(tx: Tx) -> None:
        # the first block has ended, but its transaction is this one: not committed yet
        seen_by_second.append(_committed(store, "anna"))
        await tx.principals.ensure_person("bert", AT)

    async def run(name: str, block: Callable[[Tx], Awaitable[None]]) -> None:
        await _write(store, block)
        returned.append(name)
        assert _committed(store, "anna") and _committed(store, "bert")  # after one commit

    await asyncio.gather(run("first", first), run("second", second))
    assert seen_by_second == [False]
    assert sorted(returned) == ["first", "second"]


async def test_a_write_that_fails_in_a_group_is_undone_alone(store: Store) -> None:
    async def failing(tx: Tx) -> None:
        await tx.principals.ensure_person("carl", AT)
        raise Stop

    outcomes = await asyncio.gather(
        _write(store, lambda tx: tx.principals.ensure_person("anna", AT)),
        _write(store, failing),
        _write(store, lambda tx: tx.principals.ensure_person("bert", AT)),
        return_exceptions=True,
    )
    assert [type(o) for o in outcomes] == [type(None), Stop, type(None)]
    assert _committed(store, "anna") and _committed(store, "bert")
    assert not _committed(store, "carl")
    # moves in a group, one of them refused: the others land, with consecutive seqs
    tasks = [await give(store, by=PLANNER, project="work") for _ in range(3)]
    moved = await asyncio.gather(
        verbs.accept_task(store, CODER, tasks[0].id),
        verbs.start_task(store, CODER, tasks[1].id),  # not accepted yet: refused
        verbs.accept_task(store, CODER, tasks[2].id),
        return_exceptions=True,
    )
    states = [type(m).__name__ if isinstance(m, Exception) else m.state for m in moved]
    assert states == ["accepted", "InvalidState", "accepted"]
    async with store.read() as tx:
        seqs = [e.seq for e in await tx.events.after(0, 1000)]
    assert seqs == list(range(1, len(seqs) + 1))


@pytest.mark.fast_path
async def test_a_failed_commit_fails_every_write_of_its_group(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    ending = grouped._Group.end

    def failing_commit(group: grouped._Group, error: BaseException | None = None) -> None:
        ending(group, error or sqlite3.OperationalError("disk I/O error"))

    monkeypatch.setattr(grouped._Group, "end", failing_commit)
    outcomes = await asyncio.gather(
        _write(store, lambda tx: tx.principals.ensure_person("anna", AT)),
        _write(store, lambda tx: tx.principals.ensure_person("bert", AT)),
        return_exceptions=True,
    )
    assert all(isinstance(o, sqlite3.OperationalError) for o in outcomes), outcomes
    assert not _committed(store, "anna") and not _committed(store, "bert")
    monkeypatch.undo()
    await _write(store, lambda tx: tx.principals.ensure_person("anna", AT))  # the next works
    assert _committed(store, "anna")
