"""The inbox's SQL agrees with the domain on what waits on whom, pages oldest waiting first,
narrows to what is asked and a project, and reads the tasks table through its indexes only."""

from __future__ import annotations

from collections import Counter

import pytest
from factory import ALICE, BOB, CAROL, CODER, HELPER, PLANNER, POSITIONS, SPY, call, drive, give
from sqlalchemy import text
from sqlalchemy.dialects import postgresql, sqlite

from app.domain.inbox import VERBS, waits_on
from app.domain.moves import allowed_verbs
from app.domain.principals import Principal
from app.domain.task import Task
from app.service import admin
from app.storage.repositories.inbox import Shape, page_statement, projects_statement
from app.storage.store import Store

pytestmark = pytest.mark.cast

EVERYONE = (ALICE, PLANNER, BOB, CODER, HELPER, CAROL, SPY)


async def _tasks_in_every_position(store: Store) -> list[Task]:
    made = [await drive(store, *position) for position in POSITIONS]
    asked = await give(store, by=ALICE, project="direct")  # a person's request: no requester
    for verb in ("accept_task", "start_task"):
        asked = await call(store, verb, CODER, asked.id)
    made.append(await call(store, "wait_on", CODER, asked.id))  # a question for alice
    made.append(await give(store, project="shared"))
    await admin.add_project_member(store, ALICE, "shared", "carol")  # carol sees, is not asked
    working = await drive(store, "working")
    made.append(await call(store, "wait_on", CODER, working.id, on="agent", agent="carol/spy"))
    return made


def _waiting(task: Task) -> tuple[str, str]:
    assert task.moved_at
    return task.moved_at, task.id


async def test_the_inbox_is_what_the_domain_says_waits_on_each_principal(store: Store) -> None:
    made = await _tasks_in_every_position(store)
    async with store.read() as tx:
        for principal in EVERYONE:
            expected = [t.id for t in sorted(made, key=_waiting) if waits_on(principal, t)]
            page = (await tx.inbox.page(principal, 500, None)).page
            assert [t.id for t in page.items] == expected, principal
            assert await tx.inbox.count(principal) == len(expected), principal
            # the inbox's project choices: every project something waits in, with how many
            waiting = Counter(t.project for t in made if waits_on(principal, t))
            assert await tx.inbox.projects(principal) == sorted(waiting.items()), principal
            for task in page.items:  # and each may be acted on by this principal, now
                assert set(allowed_verbs(task, principal)) & set(VERBS), (principal, task.id)
    assert {t.id for t in made if waits_on(ALICE, t)}, "alice has something to do"
    assert {t.id for t in made if waits_on(SPY, t)}, "the agent asked has its question"
    assert not any(waits_on(CAROL, t) for t in made), "seeing a task is not being asked"


async def test_pages_follow_the_cursor_and_a_decision_leaves_the_inbox(store: Store) -> None:
    made = [(await drive(store, "approval")).id for _ in range(5)]
    seen: list[str] = []
    after = None
    async with store.read() as tx:
        while True:
            waits = await tx.inbox.page(ALICE, 2, after)
            seen += [t.id for t in waits.page.items]
            if not waits.page.has_next:
                break
            after = waits.places[waits.page.items[-1].id]
    assert seen == made
    await call(store, "decide_result", ALICE, made[0])
    async with store.read() as tx:
        assert [t.id for t in (await tx.inbox.page(ALICE, 50, None)).page.items] == made[1:]
        assert await tx.inbox.count(ALICE) == 4


async def test_oldest_waiting_first_by_what_is_asked_and_project(store: Store) -> None:
    """A task created first but held last waits least: it comes last. `asked` and `project`
    narrow the page and the count alike."""
    later = await drive(store, "working")  # created first, asks nothing yet
    first = await drive(store, "approval")
    other = await drive(store, "approval")
    held = await drive(store, "waiting", "owner_approval")
    later = await call(store, "wait_on", CODER, later.id)  # now a question for alice
    async with store.read() as tx:
        everything = [t.id for t in (await tx.inbox.page(ALICE, 50, None)).page.items]
        assert everything.index(first.id) < everything.index(other.id)
        assert everything.index(other.id) < everything.index(later.id)
        assert held.id not in everything  # bob's to approve
        decide = (await tx.inbox.page(ALICE, 50, None, asked="decide_result")).page.items
        assert [t.id for t in decide] == [i for i in everything if i in {first.id, other.id}]
        assert await tx.inbox.count(ALICE, asked="decide_result") == 2
        work = await tx.inbox.page(ALICE, 50, None, project="work")  # the question's project
        assert [t.id for t in work.page.items] == [later.id]
        assert await tx.inbox.count(ALICE, None, None, "work") == 1
        assert await tx.inbox.count(ALICE, None, "decide_result", "work") == 0
        answer = (await tx.inbox.page(ALICE, 50, None, asked="answer")).page.items
        assert [t.id for t in answer] == [later.id]
        approve = (await tx.inbox.page(BOB, 50, None, asked="approve_handoff")).page.items
        assert [t.id for t in approve] == [held.id]


async def test_the_projects_of_the_inbox_count_by_what_is_asked(store: Store) -> None:
    """Two results and a question waiting on alice in one project, a question in another:
    each project listed once, with its count, for any verb and for one."""
    for _ in range(2):
        await drive(store, "approval")  # in review
    for project in ("review", "work"):
        await drive(store, "waiting", "human", "working", project=project)
    async with store.read() as tx:
        assert await tx.inbox.projects(ALICE) == [("review", 3), ("work", 1)]
        assert await tx.inbox.projects(ALICE, "decide_result") == [("review", 2)]
        assert await tx.inbox.projects(ALICE, "answer") == [("review", 1), ("work", 1)]
        assert await tx.inbox.projects(CAROL) == []  # seeing a task is not being asked


@pytest.mark.parametrize(
    ("principal", "asked", "project"),
    [(ALICE, None, False), (SPY, None, False), (ALICE, "decide_result", True)],
    ids=["person", "agent", "asked-in-project"],
)
async def test_a_page_reads_the_tasks_through_indexes_not_a_scan(
    store: Store, principal: Principal, asked: str | None, project: bool
) -> None:
    await drive(store, "approval")
    stmt = page_statement(Shape(principal.is_person, asked, project, after=True), None)
    params = {"who": principal.id, "after_at": "", "after_id": "", "limit": 51}
    if project:
        params["project"] = "work"
    # and the inbox's project choices, with their counts, alike
    projects = projects_statement(principal.is_person, asked).params(who=principal.id)
    async with store.read() as tx:
        for read in (stmt.params(params), projects):
            compiled = read.compile(
                dialect=(sqlite if tx.sqlite else postgresql).dialect(),
                compile_kwargs={"literal_binds": True},
            )
            if tx.sqlite:
                plan = [r[-1] for r in await tx.rows(text(f"EXPLAIN QUERY PLAN {compiled}"))]
                scans = [step for step in plan if step.startswith("SCAN") and "tasks" in step]
            else:
                await tx.conn.execute(text("SET LOCAL enable_seqscan = off"))
                plan = [r[0] for r in await tx.rows(text(f"EXPLAIN {compiled}"))]
                scans = [step for step in plan if "Seq Scan on tasks" in step]
            assert not scans, "\n".join(plan)
