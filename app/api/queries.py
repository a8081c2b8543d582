"""Queries: one task, pages of tasks and of events, the transition table, the caller."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import strawberry

from app.api import graph, lookahead, verbs
from app.api.enums import InboxAsk, TaskState, plain
from app.api.node import Node
from app.api.principal_types import Principal, PrincipalInfo, TokenInfo
from app.api.remote_agents import RemoteAgent
from app.api.schedule_types import Schedule
from app.api.table_types import AllowedMove, TaskStateInfo
from app.api.task_types import Task, TaskConnection, TaskEventConnection
from app.api.verbs import TaskVerb
from app.api.webhooks import Webhook, WebhookDelivery
from app.domain import shapes
from app.domain.errors import InvalidInput
from app.domain.reads import EventFilters, Paging, TaskFilters, Waiting
from app.domain.remote_agents import RemoteAgent as DomainRemoteAgent
from app.domain.schedules import Schedule as DomainSchedule
from app.domain.table import table
from app.domain.task import Task as DomainTask
from app.domain.webhooks import Webhook as DomainWebhook
from app.service import credentials, nodes, reads
from app.service.erasure import principal_info
from app.service.remote_agents import remote_agents
from app.service.schedules import schedules_of
from app.service.webhooks import webhook_deliveries, webhooks_of

DEFAULT_FIRST = 50
MAX_FIRST = 500


def page_size(first: int, name: str = "first") -> int:
    if not 0 <= first <= MAX_FIRST:
        raise InvalidInput(f"{name}: must be between 0 and {MAX_FIRST}, not {first}")
    return first


C = TypeVar("C")


def paging(
    first: int | None,
    after: str | None,
    last: int | None,
    before: str | None,
    cursor: Callable[[str | None, str], C | None],
) -> Paging[C]:
    """A connection's page from Relay's arguments: the first `first` items after `after`,
    or the last `last` before `before` (either cursor may bound either); neither size
    given: the first DEFAULT_FIRST. `cursor` reads a cursor (the argument's name for its
    error)."""
    if first is not None and last is not None:
        raise InvalidInput("first, last: give one of them, not both")
    if last is not None:
        size = page_size(last, "last")
    else:
        size = DEFAULT_FIRST if first is None else page_size(first)
    return Paging(size, cursor(after, "after"), cursor(before, "before"), last is not None)


def task_id(value: str | None, label: str) -> str | None:
    return None if value is None else shapes.check("task_id", value, label)


def inbox_cursor(value: str | None, label: str) -> Waiting | None:
    """An inbox cursor is its item's place in the inbox's order: `<moved_at>|<task id>`."""
    if value is None:
        return None
    at, bar, id = value.partition("|")
    if not bar or not at.isascii() or not 0 < len(at) <= 40:
        raise InvalidInput(f"{label}: {value[:80]!r} is not an inbox cursor")
    return at, shapes.check("task_id", id, label)


def event_cursor(after: str | None, source: str = "after") -> int | None:
    """An event cursor is the event's seq, as a string of digits; `source` names where the
    value came from, for the error."""
    if after is None:
        return None
    if not (after.isascii() and after.isdigit() and len(after) <= 18):
        raise InvalidInput(f"{source}: {after[:80]!r} is not an event cursor")
    return int(after)


FIRST = (
    f"The first this many items (after `after`); 0 to {MAX_FIRST}, {DEFAULT_FIRST} when "
    "neither `first` nor `last` is given."
)
LAST = (
    f"The last this many items (before `before`), in their order; 0 to {MAX_FIRST}; not with "
    "`first`."
)
AFTER = "An edge's cursor: the items after it."
BEFORE = "An edge's cursor: the items before it."


def _arg(description: str) -> Any:
    return strawberry.argument(description=description)


@strawberry.type(description="A project in which something waits on the caller, and how much.")
class InboxProject:
    project: str
    count: int = strawberry.field(description="The tasks in it waiting on the caller.")


@strawberry.type
class Query:
    @strawberry.field(description="The task, or null when it does not exist or is not visible.")
    async def task(self, info: strawberry.Info, id: strawberry.ID) -> Task | None:
        ctx = info.context
        viewer = await ctx.viewer()
        want = lookahead.want_of(info.selected_fields)
        found, around = await reads.task_graph(ctx.store, viewer, task_id(id, "id") or "", want)
        return Task.from_domain(found, around) if found else None

    task_graph = graph.field

    @strawberry.field(
        description="The object with this id (a Task, PrincipalInfo, Webhook, Schedule or "
        "RemoteAgent), or null when there is none the caller may see."
    )
    async def node(self, info: strawberry.Info, id: strawberry.ID) -> Node | None:
        ctx = info.context
        found = await nodes.nodes(ctx.store, await ctx.viewer(), [id])
        return _node(found[0])

    @strawberry.field(
        description=f"The objects with these ids, in their order, each null when there is none "
        f"the caller may see; at most {nodes.MAX_NODES} ids."
    )
    async def nodes(self, info: strawberry.Info, ids: list[strawberry.ID]) -> list[Node | None]:
        ctx = info.context
        return [_node(n) for n in await nodes.nodes(ctx.store, await ctx.viewer(), ids)]

    @strawberry.field(description="Visible tasks, oldest first; `after` is an edge's cursor.")
    async def tasks(
        self,
        info: strawberry.Info,
        project: str | None = None,
        state: TaskState | None = None,
        assignee: str | None = None,
        requester: str | None = None,
        parent_task_id: strawberry.ID | None = None,
        first: Annotated[int | None, _arg(FIRST)] = None,
        after: Annotated[str | None, _arg(AFTER)] = None,
        last: Annotated[int | None, _arg(LAST)] = None,
        before: Annotated[str | None, _arg(BEFORE)] = None,
    ) -> TaskConnection:
        ctx = info.context
        viewer = await ctx.viewer()
        filters = TaskFilters(project, plain(state), assignee, requester, parent_task_id)
        pages = paging(first, after, last, before, task_id)
        want = lookahead.page_want(info.selected_fields)
        page, found = await reads.task_graph_page(ctx.store, viewer, filters, pages, want)

        async def count(limit: int) -> int:
            return await reads.count_tasks(ctx.store, viewer, filters, limit)

        return TaskConnection.of(page, pages, count, found)

    @strawberry.field(
        description="What waits on the caller, in every project, oldest waiting first (since "
        "the move that put each task where it waits): handoffs held for its approval, results "
        "for its decision, questions put to it (`after` is an edge's cursor)."
    )
    async def inbox(
        self,
        info: strawberry.Info,
        asked: Annotated[
            InboxAsk | None,
            strawberry.argument(description="Only what asks this: one verb's items."),
        ] = None,
        project: Annotated[
            str | None, strawberry.argument(description="Only this project's items.")
        ] = None,
        first: Annotated[int | None, _arg(FIRST)] = None,
        after: Annotated[str | None, _arg(AFTER)] = None,
        last: Annotated[int | None, _arg(LAST)] = None,
        before: Annotated[str | None, _arg(BEFORE)] = None,
    ) -> TaskConnection:
        ctx = info.context
        viewer = await ctx.viewer()
        pages = paging(first, after, last, before, inbox_cursor)
        want = lookahead.page_want(info.selected_fields)
        verb = plain(asked)
        waits, found = await reads.inbox_page(ctx.store, viewer, pages, want, verb, project)

        async def count(limit: int) -> int:
            return await reads.count_inbox(ctx.store, viewer, limit, verb, project)

        place = waits.places
        return TaskConnection.of(waits.page, pages, count, found, lambda t: "|".join(place[t.id]))

    @strawberry.field(
        description="Every project in which something waits on the caller, by name, with how "
        "many of its tasks wait (those asking `asked`, where given): the inbox's `project` "
        "choices."
    )
    async def inbox_projects(
        self,
        info: strawberry.Info,
        asked: Annotated[
            InboxAsk | None,
            strawberry.argument(description="Only what asks this: one verb's items."),
        ] = None,
    ) -> list[InboxProject]:
        ctx = info.context
        found = await reads.inbox_projects(ctx.store, await ctx.viewer(), plain(asked))
        return [InboxProject(project=p, count=n) for p, n in found]

    @strawberry.field(
        description="The event cursor this query reads as of, read in the same transaction as "
        "its other fields: every event at or before it is in what they read, and after it only "
        "those of `events_seen_after_head` (usually none), so a subscription `after` it hears "
        "of each change since once, skipping those. On PostgreSQL a query's reads are one "
        "snapshot, which may hold an event while one before it is still to commit: the list "
        "holds the events of the snapshot past the cursor."
    )
    async def event_head(self, info: strawberry.Info) -> str:
        ctx = info.context
        await ctx.viewer()
        head, _ = await reads.event_head(ctx.store)
        return str(head)

    @strawberry.field(
        description="The cursors of the events after `event_head` that this query's other "
        "fields already read (usually none; on SQLite always none), in order: a subscription "
        "`after` `event_head` sends them too, changes already counted."
    )
    async def events_seen_after_head(self, info: strawberry.Info) -> list[str]:
        ctx = info.context
        await ctx.viewer()
        _, seen = await reads.event_head(ctx.store)
        return [str(seq) for seq in seen]

    @strawberry.field(description="The history of visible tasks, oldest first.")
    async def task_events(
        self,
        info: strawberry.Info,
        task_id: strawberry.ID | None = None,
        project: str | None = None,
        after: Annotated[str | None, _arg(AFTER)] = None,
        first: Annotated[int | None, _arg(FIRST)] = None,
        last: Annotated[int | None, _arg(LAST)] = None,
        before: Annotated[str | None, _arg(BEFORE)] = None,
    ) -> TaskEventConnection:
        ctx = info.context
        viewer = await ctx.viewer()
        filters = EventFilters(task_id, project)
        pages = paging(first, after, last, before, event_cursor)
        page = await reads.event_page(ctx.store, viewer, filters, pages)

        async def count(limit: int) -> int:
            return await reads.count_task_events(ctx.store, viewer, filters, limit)

        return TaskEventConnection.of(page, pages, count)

    @strawberry.field(description="The states of the transition table.")
    async def task_states(self, info: strawberry.Info) -> list[TaskStateInfo]:
        await info.context.viewer()
        return [TaskStateInfo.from_domain(name) for name in table().states]

    @strawberry.field(description="Every move the transition table allows.")
    async def allowed_moves(self, info: strawberry.Info) -> list[AllowedMove]:
        await info.context.viewer()
        return [AllowedMove.from_domain(m) for m in table().moves]

    @strawberry.field(
        description="Every task verb as declared: its arguments, what it is for, its form. "
        "Needs no token: it describes the API, as the schema does."
    )
    def task_verbs(self) -> list[TaskVerb]:
        return verbs.task_verbs()

    @strawberry.field(description="The caller.")
    async def me(self, info: strawberry.Info) -> Principal:
        return Principal.from_domain(await info.context.viewer())

    @strawberry.field(description="The caller's tokens, and for a person its agents' too.")
    async def tokens(self, info: strawberry.Info) -> list[TokenInfo]:
        ctx = info.context
        found = await credentials.tokens(ctx.store, await ctx.viewer())
        return [TokenInfo.from_domain(t) for t in found]

    @strawberry.field(
        description="The caller's schedules; with `project`, those in it (all of them for a "
        "member of the project)."
    )
    async def schedules(self, info: strawberry.Info, project: str | None = None) -> list[Schedule]:
        ctx = info.context
        found = await schedules_of(ctx.store, await ctx.viewer(), project)
        return [Schedule.from_domain(s) for s in found]

    @strawberry.field(
        description="A person (by handle) or agent (by id), erased ones too; null when unknown."
    )
    async def principal(self, info: strawberry.Info, id: str) -> PrincipalInfo | None:
        ctx = info.context
        await ctx.viewer()
        found = await principal_info(ctx.store, id)
        return PrincipalInfo.from_domain(found) if found else None

    @strawberry.field(description="The caller's remote A2A agents.")
    async def remote_agents(self, info: strawberry.Info) -> list[RemoteAgent]:
        ctx = info.context
        return [
            RemoteAgent.from_domain(a) for a in await remote_agents(ctx.store, await ctx.viewer())
        ]

    # webhooks

    @strawberry.field(description="The caller's webhooks.")
    async def webhooks(self, info: strawberry.Info) -> list[Webhook]:
        ctx = info.context
        found = await webhooks_of(ctx.store, await ctx.viewer())
        return [Webhook.from_domain(w) for w in found]

    @strawberry.field(
        description="A webhook's delivery attempts (the last 1,000 are kept), oldest first; "
        "`after` is an attempt's id."
    )
    async def webhook_deliveries(
        self,
        info: strawberry.Info,
        webhook_id: strawberry.ID,
        first: int = DEFAULT_FIRST,
        after: str | None = None,
    ) -> list[WebhookDelivery]:
        ctx = info.context
        found = await webhook_deliveries(
            ctx.store, await ctx.viewer(), webhook_id, page_size(first), delivery_id(after)
        )
        return [WebhookDelivery.from_domain(d) for d in found]


def _node(found: nodes.Node | None) -> Node | None:
    """The GraphQL type of a node found."""
    if found is None:
        return None
    if isinstance(found, DomainTask):
        return Task.from_domain(found)
    if isinstance(found, DomainWebhook):
        return Webhook.from_domain(found)
    if isinstance(found, DomainSchedule):
        return Schedule.from_domain(found)
    if isinstance(found, DomainRemoteAgent):
        return RemoteAgent.from_domain(found)
    return PrincipalInfo.from_domain(found)


def delivery_id(after: str | None) -> int | None:
    if after is None:
        return None
    if not (after.isascii() and after.isdigit() and len(after) <= 18):
        raise InvalidInput(f"after: {after[:80]!r} is not a delivery id")
    return int(after)
