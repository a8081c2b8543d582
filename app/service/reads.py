"""The read side: what a viewer may see, as domain objects, each call one read transaction.

A task the viewer may not see is absent from every answer here, counts included, exactly as
if it did not exist. The batch lookups take many ids and answer with one statement, whatever
their number; the API's loaders call them once per nested list.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from app.domain.events import Event, Said
from app.domain.gate import GateRule
from app.domain.principals import Principal
from app.domain.reads import (
    EventFilters,
    InboxPage,
    Page,
    Paging,
    SavedCheckpoint,
    TaskFilters,
    Waiting,
)
from app.domain.task import JSON, Task
from app.storage import reads as sql
from app.storage.store import Store
from app.storage.tx import Tx


@dataclass
class Want:
    """What a query reads of each task at one level of its selection: the task columns
    (None: every one), the related tasks (with what it reads of those), the lists."""

    columns: tuple[str, ...] | None = None
    parent: Want | None = None
    children: Want | None = None
    dependencies: Want | None = None
    lists: frozenset[str] = frozenset()  # of "results", "checkpoints", "events"


@dataclass
class Found:
    """What was read ahead for the tasks at one level, by task id; None: not read."""

    parents: dict[str, Task] | None = None
    children: dict[str, list[Task]] | None = None
    dependencies: dict[str, Task] | None = None
    results: dict[str, list[JSON]] | None = None
    checkpoints: dict[str, list[SavedCheckpoint]] | None = None
    events: dict[str, list[Event]] | None = None
    below: dict[str, Found] = field(default_factory=dict)  # parent, children, dependencies


async def task_graph_page(
    store: Store, viewer: Principal, filters: TaskFilters, paging: Paging[str], want: Want
) -> tuple[Page[Task], Found]:
    """A page of tasks and what `want` reads around them, in one read transaction: one
    statement per relation and level, however many tasks the page holds."""
    p = paging
    async with store.read() as tx:
        page = await sql.task_page(
            tx, viewer, filters, p.size, p.after, want.columns, p.before, p.backward
        )
        return page, await read_ahead(tx, viewer, page.items, want)


async def inbox_page(
    store: Store,
    viewer: Principal,
    paging: Paging[Waiting],
    want: Want,
    asked: str | None = None,
    project: str | None = None,
) -> tuple[InboxPage, Found]:
    """A page of the tasks waiting on the viewer (`app.domain.inbox`), in every project or
    `project`, asking any verb or `asked`, oldest waiting first, within the paging's places;
    and what `want` reads around them."""
    async with store.read() as tx:
        waits = await tx.inbox.page(
            viewer, paging.size, paging.after, want.columns, paging, asked, project
        )
        return waits, await read_ahead(tx, viewer, waits.page.items, want)


async def count_inbox(
    store: Store,
    viewer: Principal,
    limit: int | None = None,
    asked: str | None = None,
    project: str | None = None,
) -> int:
    """With `limit`, at most that many (the count stops there)."""
    async with store.read() as tx:
        return await tx.inbox.count(viewer, limit, asked, project)


async def inbox_projects(
    store: Store, viewer: Principal, asked: str | None = None
) -> list[tuple[str, int]]:
    """Every project in which something waits on the viewer (asking `asked`, where given),
    by name, with how many."""
    async with store.read() as tx:
        return await tx.inbox.projects(viewer, asked)


async def event_head(store: Store) -> tuple[int, list[int]]:
    """Where the event log ends as this read sees it (`Events.head`): a seq, and the seqs
    past it seen too (usually none). Within a query's shared read, an event is in what the
    query's other fields read iff its seq is at most the first or in the list."""
    async with store.read() as tx:
        return await tx.events.head()


async def task_graph(
    store: Store, viewer: Principal, id: str, want: Want
) -> tuple[Task | None, Found]:
    """A task, or None, and what `want` reads around it."""
    async with store.read() as tx:
        found = (await sql.tasks_by_id(tx, viewer, [id], want.columns)).get(id)
        return found, await read_ahead(tx, viewer, [found] if found else [], want)


def _union(*wants: Want | None) -> tuple[str, ...] | None:
    """The columns that every one of the wants reads; None for every column."""
    columns: set[str] = set()
    for want in wants:
        if want is not None:
            if want.columns is None:
                return None
            columns.update(want.columns)
    return tuple(sorted(columns))


async def read_ahead(tx: Tx, viewer: Principal, tasks: Sequence[Task], want: Want) -> Found:
    """The related tasks and lists `want` names, for all `tasks` at once, level by level;
    visible ones only, as the batch lookups below answer them."""
    found = Found()
    ids = [t.id for t in tasks]
    parent_ids = [t.parent_task_id for t in tasks if t.parent_task_id] if want.parent else []
    names = [n for t in tasks for n in (t.packet or {}).get("depends_on") or []]
    names = names if want.dependencies else []
    looked_up: dict[str, Task] = {}
    if want.parent is not None or want.dependencies is not None:  # one lookup for both
        columns = _union(want.parent, want.dependencies)
        wanted = list(dict.fromkeys([*parent_ids, *names]))
        looked_up = await sql.tasks_by_id(tx, viewer, wanted, columns)
    if want.parent is not None:
        found.parents = {i: looked_up[i] for i in parent_ids if i in looked_up}
        below = list(found.parents.values())
        found.below["parent"] = await read_ahead(tx, viewer, below, want.parent)
    if want.dependencies is not None:
        found.dependencies = {n: looked_up[n] for n in names if n in looked_up}
        below = list(found.dependencies.values())
        found.below["dependencies"] = await read_ahead(tx, viewer, below, want.dependencies)
    if want.children is not None:
        found.children = await sql.children_of(tx, viewer, ids, want.children.columns)
        below = [c for t in tasks for c in found.children.get(t.id, [])]
        found.below["children"] = await read_ahead(tx, viewer, below, want.children)
    if "results" in want.lists:
        found.results = await sql.results_of(tx, viewer, ids)
    if "checkpoints" in want.lists:
        found.checkpoints = await sql.checkpoints_of(tx, viewer, ids)
    if "events" in want.lists:
        found.events = await sql.events_of(tx, viewer, ids)
    return found


async def task(store: Store, viewer: Principal, id: str) -> Task | None:
    """The task, or None when it does not exist or the viewer may not see it."""
    return (await tasks_by_id(store, viewer, [id])).get(id)


async def task_page(
    store: Store, viewer: Principal, filters: TaskFilters, first: int, after: str | None
) -> Page[Task]:
    """Up to `first` visible tasks matching the filters, by id, after the task `after`."""
    async with store.read() as tx:
        return await sql.task_page(tx, viewer, filters, first, after)


async def count_tasks(
    store: Store, viewer: Principal, filters: TaskFilters, limit: int | None = None
) -> int:
    """With `limit`, at most that many (the count stops there)."""
    async with store.read() as tx:
        return await sql.count_tasks(tx, viewer, filters, limit)


async def event_page(
    store: Store, viewer: Principal, filters: EventFilters, paging: Paging[int]
) -> Page[Event]:
    """A page of the events of visible tasks, oldest first, within the paging's event seqs."""
    p = paging
    async with store.read() as tx:
        return await sql.event_page(tx, viewer, filters, p.size, p.after, p.before, p.backward)


async def count_task_events(
    store: Store, viewer: Principal, filters: EventFilters, limit: int | None = None
) -> int:
    """With `limit`, at most that many (the count stops there)."""
    async with store.read() as tx:
        return await sql.count_task_events(tx, viewer, filters, limit)


async def tasks_by_id(store: Store, viewer: Principal, ids: Sequence[str]) -> dict[str, Task]:
    async with store.read() as tx:
        return await sql.tasks_by_id(tx, viewer, ids)


async def children_of(store: Store, viewer: Principal, ids: Sequence[str]) -> dict[str, list[Task]]:
    """Each task's visible subtasks, by id."""
    async with store.read() as tx:
        return await sql.children_of(tx, viewer, ids)


async def results_of(store: Store, viewer: Principal, ids: Sequence[str]) -> dict[str, list[JSON]]:
    """Each task's result revisions, first to latest."""
    async with store.read() as tx:
        return await sql.results_of(tx, viewer, ids)


async def checkpoints_of(
    store: Store, viewer: Principal, ids: Sequence[str]
) -> dict[str, list[SavedCheckpoint]]:
    """Each task's saved checkpoints, oldest first."""
    async with store.read() as tx:
        return await sql.checkpoints_of(tx, viewer, ids)


async def events_of(store: Store, viewer: Principal, ids: Sequence[str]) -> dict[str, list[Event]]:
    """Each task's events, oldest first."""
    async with store.read() as tx:
        return await sql.events_of(tx, viewer, ids)


async def own_gate_rules(
    store: Store, viewer: Principal, owners: Sequence[str]
) -> dict[str, list[GateRule]]:
    """The viewer's own gate rules, by its id, when asked for them; another owner's rules are
    never read."""
    if not viewer.is_person or viewer.id not in owners:
        return {}
    async with store.read() as tx:
        return {viewer.id: await tx.gate_rules.of(viewer.id)}


async def agent_standing(store: Store, agent_id: str) -> tuple[bool, bool]:
    """(registered, erased) for the agent id, in one statement."""
    async with store.read() as tx:
        return await tx.principals.agent_standing(agent_id)


@dataclass(frozen=True)
class AgentTask:
    """An agent as its own server sees it, and one of its tasks: whether the agent is
    registered and not erased, the task (None unless the viewer sees it and it is the
    agent's), and what its events said (when asked for)."""

    serves: bool
    task: Task | None
    said: list[Said]


async def agent_task(
    store: Store, viewer: Principal, agent_id: str, task_id: str, said: bool = False
) -> AgentTask:
    """The agent's standing, its task and, with `said`, what the task's events said: one
    read transaction."""
    async with store.read() as tx:
        registered, erased = await tx.principals.agent_standing(agent_id)
        if not registered or erased:
            return AgentTask(False, None, [])
        found = (await sql.tasks_by_id(tx, viewer, [task_id])).get(task_id)
        if found is None or found.assignee != agent_id:
            return AgentTask(True, None, [])
        return AgentTask(True, found, await tx.events.said(task_id) if said else [])
