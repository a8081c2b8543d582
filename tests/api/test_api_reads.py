"""The read side's SQL agrees with the domain on who sees what, and pages and counts alike."""

from __future__ import annotations

import pytest
from factory import (
    ALICE,
    BOB,
    CAROL,
    CODER,
    HELPER,
    PLANNER,
    POSITIONS,
    SPY,
    call,
    drive,
    give,
)

from app.domain.reads import TaskFilters
from app.domain.task import Task
from app.domain.visibility import sees
from app.service import admin
from app.storage import reads
from app.storage.store import Store

pytestmark = pytest.mark.cast

EVERYONE = (ALICE, PLANNER, BOB, CODER, HELPER, CAROL, SPY)


async def _tasks_in_every_kind_of_relation(store: Store) -> list[Task]:
    made = [await drive(store, *position) for position in POSITIONS]
    made.append(await give(store, by=ALICE, project="direct"))  # a person's request: no requester
    made.append(await give(store, project="shared"))
    await admin.add_project_member(store, ALICE, "shared", "carol")  # carol sees "shared"
    asked = await drive(store, "working")
    made.append(await call(store, "wait_on", CODER, asked.id, on="agent", agent="carol/spy"))
    made.append(await give(store, by=HELPER, assignee="bob/coder", project="own"))
    return made


async def test_sql_visibility_matches_the_domain_for_every_principal_and_task(store: Store) -> None:
    made = await _tasks_in_every_kind_of_relation(store)
    ids = [t.id for t in made]
    async with store.read() as tx:
        for principal in EVERYONE:
            member_of = set(await tx.projects.projects_of(principal.id))
            expected = {t.id for t in made if sees(principal, t, member_of)}
            assert set(await reads.tasks_by_id(tx, principal, ids)) == expected, principal
            assert await reads.count_tasks(tx, principal, TaskFilters()) == len(expected)
            page = await reads.task_page(tx, principal, TaskFilters(), 500, None)
            assert [t.id for t in page.items] == sorted(expected)


async def test_the_agent_a_task_waits_on_sees_it_only_while_it_waits(store: Store) -> None:
    task = await drive(store, "working", project="secret")
    task = await call(store, "wait_on", CODER, task.id, on="agent", agent="carol/spy")
    async with store.read() as tx:
        assert task.id in await reads.tasks_by_id(tx, SPY, [task.id])
        assert task.id in await reads.tasks_by_id(tx, CAROL, [task.id])
    await call(store, "answer", SPY, task.id, answer="here")
    async with store.read() as tx:
        assert await reads.tasks_by_id(tx, SPY, [task.id]) == {}


async def test_pages_follow_the_cursor_without_gaps_or_repeats(store: Store) -> None:
    made = sorted([(await give(store, project="paged")).id for _ in range(7)])
    seen: list[str] = []
    after = None
    async with store.read() as tx:
        while True:
            page = await reads.task_page(tx, PLANNER, TaskFilters(project="paged"), 3, after)
            seen += [t.id for t in page.items]
            if not page.has_next:
                break
            after = page.items[-1].id
    assert seen == made


async def test_filters_narrow_the_list_and_the_count(store: Store) -> None:
    a = await give(store, project="mix")
    b = await give(store, project="mix", assignee="bob/helper")
    c = await drive(store, "waiting", "owner_approval")  # in project "held"
    d = await give(store, project="mix", parent_task_id=a.id)
    cases = [
        (TaskFilters(state="routed", project="mix"), {a.id, b.id, d.id}),
        (TaskFilters(assignee="bob/helper"), {b.id}),
        (TaskFilters(state="waiting"), {c.id}),
        (TaskFilters(parent_task_id=a.id), {d.id}),
        (TaskFilters(requester="alice/planner"), {a.id, b.id, c.id, d.id}),
        (TaskFilters(requester="bob/coder"), set()),
    ]
    async with store.read() as tx:
        for filters, expected in cases:
            page = await reads.task_page(tx, PLANNER, filters, 100, None)
            assert {t.id for t in page.items} == expected, filters
            assert await reads.count_tasks(tx, PLANNER, filters) == len(expected)
