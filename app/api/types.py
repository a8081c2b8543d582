"""The GraphQL Task, its events and connections, and the other object types.

A type is built from a domain object (`from_domain()`); the domain object stays private
to the type and backs its computed fields.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import datetime
from functools import partial
from typing import Any, Generic, TypeVar, cast

import strawberry
from strawberry.scalars import JSON

from app.api.enums import (
    CapabilityKind,
    CatchUp,
    DeliverableType,
    EventKind,
    GateEffect,
    ResultPolicy,
    TaskState,
    WaitingOn,
    WaitOn,
)
from app.api.shapes import (
    ActorRef,
    Capability,
    Checkpoint,
    CheckpointBy,
    Packet,
    Result,
    Route,
    actor_ref,
    flat,
)
from app.domain import moves
from app.domain.clock import rfc3339
from app.domain.events import Event
from app.domain.gate import GateRule as DomainGateRule
from app.domain.policy import ResultRule as DomainResultRule
from app.domain.principals import Principal as DomainPrincipal
from app.domain.questions import OpenQuestion as DomainOpenQuestion
from app.domain.questions import open_question
from app.domain.reads import Page, Paging
from app.domain.reads import SavedCheckpoint as DomainSavedCheckpoint
from app.domain.schedules import Schedule as DomainSchedule
from app.domain.table import Move, table
from app.domain.task import PROTOCOL_FIELDS
from app.domain.task import Task as DomainTask
from app.domain.tokens import TokenInfo as DomainTokenInfo
from app.events.stream import task_of
from app.service.erasure import Erasure as DomainErasure
from app.service.erasure import PrincipalInfo as DomainPrincipalInfo
from app.service.reads import Found
from app.tuning import COUNT_CAP

Convert = Callable[[Any], Any]


def _present(convert: Convert) -> Convert:
    """`convert` for a value that is there; null for an absent (or empty) one."""
    return lambda value: convert(value) if value else None


# How a field of the domain task becomes the GraphQL Task's: by its converter here, or as it
# is. The GraphQL Task has the protocol's fields and the server's `version`, and no other.
TASK_CONVERTERS: dict[str, Convert] = {
    "packet": partial(flat, Packet),
    "result": _present(Result.from_domain),
    "latest_checkpoint": _present(partial(flat, Checkpoint)),
    "latest_checkpoint_by": _present(partial(flat, CheckpointBy)),
    "requested_by": actor_ref,
    "route": Route.from_domain,
}
TASK_FIELDS = (*PROTOCOL_FIELDS, "version")
_AS_IS = tuple(name for name in TASK_FIELDS if name not in TASK_CONVERTERS)

T = TypeVar("T")


def _later(pending: Awaitable[T]) -> T:
    """What a resolver returns when the value is not at hand: graphql-core awaits an
    awaitable a resolver returns, so a field read ahead answers at once, with no awaitable,
    and another through its loader."""
    return cast(T, pending)


@strawberry.interface(
    description="An object refetched by its id alone (`node`, `nodes`): each id is unique "
    "among all nodes (docs/frontends.md, Relay)."
)
class Node:
    id: strawberry.ID


@strawberry.type(description="A task: the protocol's task object, typed, and what surrounds it.")
class Task(Node):
    """Built from a domain task, whole or with only the columns a query reads; the fields
    with a converter are converted when asked for. `found` holds what was read ahead for
    the task's level of the query (app/api/lookahead.py); without it, the loaders answer."""

    id: strawberry.ID
    project: str
    state: TaskState
    waiting_on: WaitingOn | None
    requester: str | None
    assignee: str

    packet: Packet = strawberry.field(resolver=lambda root: root.converted("packet"))
    result: Result | None = strawberry.field(resolver=lambda root: root.converted("result"))
    latest_checkpoint: Checkpoint | None = strawberry.field(
        resolver=lambda root: root.converted("latest_checkpoint")
    )
    latest_checkpoint_by: CheckpointBy | None = strawberry.field(
        resolver=lambda root: root.converted("latest_checkpoint_by")
    )
    parent_task_id: strawberry.ID | None
    created_at: str
    updated_at: str
    requested_by: ActorRef = strawberry.field(resolver=lambda root: root.converted("requested_by"))
    origin_message_id: str | None
    route: Route = strawberry.field(resolver=lambda root: root.converted("route"))
    display_title: str | None
    turn_budget: int | None = strawberry.field(description="Checkpoints left; null is unlimited.")
    version: int = strawberry.field(description="1 at creation, +1 on every move and checkpoint.")
    domain: strawberry.Private[DomainTask]
    found: strawberry.Private[Found | None] = None

    @classmethod
    def from_domain(cls, task: DomainTask, found: Found | None = None) -> Task:
        fields = {name: getattr(task, name) for name in _AS_IS}
        return cls(**fields, domain=task, found=found)

    def converted(self, name: str) -> Any:
        """A field with a converter, converted from the domain task's."""
        return TASK_CONVERTERS[name](getattr(self.domain, name))

    @strawberry.field(description="The task object exactly, valid against task.schema.json.")
    def as_protocol(self) -> JSON:
        return JSON(self.domain.to_protocol())

    @strawberry.field(description="The task's events, oldest first.")
    def events(self, info: strawberry.Info) -> list[TaskEvent]:
        if self.found is None or self.found.events is None:
            return _later(self._events(info))
        return [TaskEvent.from_domain(e) for e in self.found.events.get(self.id, [])]

    async def _events(self, info: strawberry.Info) -> list[TaskEvent]:
        return [TaskEvent.from_domain(e) for e in await info.context.loaders.events.load(self.id)]

    @strawberry.field(description="The parent task, when there is one and it is visible.")
    def parent(self, info: strawberry.Info) -> Task | None:
        if self.parent_task_id is None:
            return None
        if self.found is None or self.found.parents is None:
            return _later(self._parent(info, self.parent_task_id))
        got = self.found.parents.get(self.parent_task_id)
        return Task.from_domain(got, self.found.below["parent"]) if got else None

    async def _parent(self, info: strawberry.Info, id: str) -> Task | None:
        found = await info.context.loaders.tasks.load(id)
        return Task.from_domain(found) if found else None

    @strawberry.field(description="The visible tasks whose parent_task_id is this task.")
    def children(self, info: strawberry.Info) -> list[Task]:
        if self.found is None or self.found.children is None:
            return _later(self._children(info))
        below = self.found.below["children"]
        return [Task.from_domain(t, below) for t in self.found.children.get(self.id, [])]

    async def _children(self, info: strawberry.Info) -> list[Task]:
        return [Task.from_domain(t) for t in await info.context.loaders.children.load(self.id)]

    @strawberry.field(description="Tasks named by packet.depends_on that exist and are visible.")
    def dependencies(self, info: strawberry.Info) -> list[Task]:
        names: list[str] = self.domain.packet.get("depends_on") or []
        if self.found is None or self.found.dependencies is None:
            return _later(self._dependencies(info, names))
        found, below = self.found.dependencies, self.found.below["dependencies"]
        return [Task.from_domain(found[n], below) for n in names if n in found]

    async def _dependencies(self, info: strawberry.Info, names: list[str]) -> list[Task]:
        found = await info.context.loaders.tasks.load_many(names)
        return [Task.from_domain(t) for t in found if t is not None]

    @strawberry.field(description="Every checkpoint saved on this task, oldest first.")
    def checkpoints(self, info: strawberry.Info) -> list[SavedCheckpoint]:
        if self.found is None or self.found.checkpoints is None:
            return _later(self._checkpoints(info))
        return [SavedCheckpoint.from_domain(c) for c in self.found.checkpoints.get(self.id, [])]

    async def _checkpoints(self, info: strawberry.Info) -> list[SavedCheckpoint]:
        saved = await info.context.loaders.checkpoints.load(self.id)
        return [SavedCheckpoint.from_domain(c) for c in saved]

    @strawberry.field(description="Every revision of the result, first to latest.")
    def results(self, info: strawberry.Info) -> list[Result]:
        if self.found is None or self.found.results is None:
            return _later(self._results(info))
        return [Result.from_domain(r) for r in self.found.results.get(self.id, [])]

    async def _results(self, info: strawberry.Info) -> list[Result]:
        return [Result.from_domain(r) for r in await info.context.loaders.results.load(self.id)]

    @strawberry.field(
        description="What the task asks while it waits on a human or an agent, and who may "
        "answer it; null while it waits on nothing of the kind."
    )
    def question(self) -> OpenQuestion | None:
        asked = open_question(self.domain)
        return OpenQuestion.from_domain(asked) if asked else None

    @strawberry.field(description="The verbs the viewer may call on this task now.")
    def allowed_verbs(self, info: strawberry.Info) -> list[str]:
        viewer = info.context.principal
        if viewer is None:
            return _later(self._allowed_verbs(info))
        return moves.allowed_verbs(self.domain, viewer)

    async def _allowed_verbs(self, info: strawberry.Info) -> list[str]:
        return moves.allowed_verbs(self.domain, await info.context.viewer())


@strawberry.type(description="The open question of a task waiting on a human or an agent.")
class OpenQuestion:
    on: WaitOn = strawberry.field(description="What the task waits on: human or agent.")
    question: str | None = strawberry.field(description="The text wait_on asked, if any.")
    asked_by: str = strawberry.field(description="The assignee, whose run waits.")
    agent: str | None = strawberry.field(description="The agent named in wait_on(on: agent).")
    answerers: list[str] = strawberry.field(
        description="Who may answer (the verb `answer`): handles and agent ids; an agent's "
        "owner may answer for it. Empty for a wait on agent that names none."
    )
    resumes_when_subtasks_end: bool = strawberry.field(
        description="A wait on agent: the task also resumes by itself once every one of its "
        "subtasks has ended."
    )

    @classmethod
    def from_domain(cls, asked: DomainOpenQuestion) -> OpenQuestion:
        return cls(
            on=WaitOn(asked.on),
            question=asked.question,
            asked_by=asked.asked_by,
            agent=asked.agent,
            answerers=list(asked.answerers),
            resumes_when_subtasks_end=asked.resumes_when_subtasks_end,
        )


@strawberry.type(description="One event of the log: a move, a checkpoint, or a snapshot.")
class TaskEvent:
    cursor: str
    seq: int
    kind: EventKind
    task_id: strawberry.ID
    project: str
    from_state: TaskState | None
    to_state: TaskState
    waiting_on: WaitingOn | None = strawberry.field(description="The value after the event.")
    verb: str | None = strawberry.field(description="The mutation that caused it.")
    actor: str | None = strawberry.field(description="Handle or agent id; null for the server.")
    at: str
    version: int
    note: str | None
    event: strawberry.Private[Event]

    @classmethod
    def from_domain(cls, event: Event) -> TaskEvent:
        return cls(
            cursor=event.cursor,
            seq=event.seq,
            kind=event.kind,
            task_id=strawberry.ID(event.task_id),
            project=event.project,
            from_state=event.from_state,
            to_state=event.to_state,
            waiting_on=event.waiting_on,
            verb=event.verb,
            actor=event.actor,
            at=event.at,
            version=event.version,
            note=event.note,
            event=event,
        )

    @strawberry.field(description="The task right after this event.")
    def task(self) -> Task:
        return Task.from_domain(task_of(self.event))


@strawberry.type
class SavedCheckpoint:
    id: strawberry.ID
    task_id: strawberry.ID
    checkpoint: Checkpoint
    sha256: str = strawberry.field(description="Of the checkpoint's canonical JSON.")
    agent: str
    handed_back: bool
    created_at: str

    @classmethod
    def from_domain(cls, saved: DomainSavedCheckpoint) -> SavedCheckpoint:
        return cls(
            id=strawberry.ID(saved.id),
            task_id=strawberry.ID(saved.task_id),
            checkpoint=flat(Checkpoint, saved.body),
            sha256=saved.sha256,
            agent=saved.agent,
            handed_back=saved.handed_back,
            created_at=saved.created_at,
        )


@strawberry.type(
    description="Where a page lies among all the items: Relay's names (`hasNextPage`, "
    "`hasPreviousPage`, `startCursor`, `endCursor`); the snake_case ones are deprecated."
)
class PageInfo:
    next_page: bool = strawberry.field(
        name="hasNextPage",
        description="Paging forward (`first`): whether more items follow this page. Paging "
        "backward (`last`): whether `before` was given (the items from it on follow).",
    )
    previous_page: bool = strawberry.field(
        name="hasPreviousPage",
        description="Paging backward (`last`): whether more items come before this page. "
        "Paging forward (`first`): whether `after` was given (the items up to it come before).",
    )
    start: str | None = strawberry.field(
        name="startCursor", description="The cursor of the page's first edge."
    )
    end: str | None = strawberry.field(
        name="endCursor", description="The cursor of the page's last edge."
    )

    @strawberry.field(deprecation_reason="Use pageInfo { hasNextPage } (Relay's name).")
    def has_next_page(self) -> bool:
        return self.next_page

    @strawberry.field(deprecation_reason="Use pageInfo { endCursor } (Relay's name).")
    def end_cursor(self) -> str | None:
        return self.end

    @classmethod
    def of(cls, cursors: list[str], more: bool, paging: Paging[Any]) -> PageInfo:
        """The page info of a page whose edges have these cursors; `more`: whether more
        items lie beyond the page in the direction it was read."""
        return cls(
            next_page=(paging.before is not None) if paging.backward else more,
            previous_page=more if paging.backward else (paging.after is not None),
            start=cursors[0] if cursors else None,
            end=cursors[-1] if cursors else None,
        )


N = TypeVar("N")


@strawberry.type(description="An item of a page, with the cursor to page on from it.")
class Edge(Generic[N]):
    cursor: str
    node: N


Count = Callable[[int], Awaitable[int]]  # what matches, counted up to the limit given

CAPPED = (
    "Whether more match than `total_count_cap`: `total_count` stopped counting there "
    "(then it is the cap)."
)
CAP = "The most `total_count` counts (PRICKLE_COUNT_CAP): counting stops there, so it is cheap."


class Counter:
    """A connection's count, made once however many of its fields ask: at most the cap and
    one more, so that a count costs the same however many tasks match."""

    def __init__(self, count: Count) -> None:
        self.cap = COUNT_CAP.value()
        self._count = count
        self._made: asyncio.Task[int] | None = None

    async def counted(self) -> int:
        if self._made is None:
            self._made = asyncio.ensure_future(self._count(self.cap + 1))
        return await asyncio.shield(self._made)

    async def total(self) -> int:
        return min(await self.counted(), self.cap)

    async def capped(self) -> bool:
        return await self.counted() > self.cap


@strawberry.type
class Connection(Generic[N]):
    """A page of items in Relay's shape (`edges { cursor node }`, `pageInfo`), with the
    count of all of them."""

    edges: list[Edge[N]]
    info: PageInfo = strawberry.field(name="pageInfo")
    counter: strawberry.Private[Counter]

    @strawberry.field(deprecation_reason="Use pageInfo (Relay's name).")
    def page_info(self) -> PageInfo:
        return self.info

    @strawberry.field(
        description="Every visible item matching the filters, on all pages, up to "
        "`total_count_cap`."
    )
    async def total_count(self) -> int:
        return await self.counter.total()

    @strawberry.field(description=CAPPED)
    async def total_count_capped(self) -> bool:
        return await self.counter.capped()

    @strawberry.field(description=CAP)
    def total_count_cap(self) -> int:
        return self.counter.cap


@strawberry.type(description="A page of tasks, by id (creation order).")
class TaskConnection(Connection[Task]):
    @classmethod
    def of(
        cls, page: Page[DomainTask], paging: Paging[Any], count: Count, found: Found | None = None
    ) -> TaskConnection:
        edges = [Edge(cursor=t.id, node=Task.from_domain(t, found)) for t in page.items]
        info = PageInfo.of([e.cursor for e in edges], page.has_next, paging)
        return cls(edges=edges, info=info, counter=Counter(count))


@strawberry.type(description="A page of events, oldest first.")
class TaskEventConnection(Connection[TaskEvent]):
    @classmethod
    def of(cls, page: Page[Event], paging: Paging[Any], count: Count) -> TaskEventConnection:
        edges = [Edge(cursor=e.cursor, node=TaskEvent.from_domain(e)) for e in page.items]
        info = PageInfo.of([e.cursor for e in edges], page.has_next, paging)
        return cls(edges=edges, info=info, counter=Counter(count))


@strawberry.type(description="Who is calling: a person (an owner) or an agent.")
class Principal:
    kind: str
    id: str
    owner: str = strawberry.field(description="The handle the principal answers to.")

    @classmethod
    def from_domain(cls, principal: DomainPrincipal) -> Principal:
        return cls(kind=principal.kind, id=principal.id, owner=principal.owner)


@strawberry.type(description="A state of the transition table.")
class TaskStateInfo:
    name: TaskState
    description: str
    terminal: bool
    moves_to: list[TaskState]
    reached_from: list[TaskState]

    @classmethod
    def from_domain(cls, name: str) -> TaskStateInfo:
        t = table()
        state = t.states[name]
        return cls(
            name=name,
            description=state.description,
            terminal=state.terminal,
            moves_to=list(dict.fromkeys(m.to_state for m in t.moves_from(name))),
            reached_from=list(dict.fromkeys(m.from_state for m in t.moves_to(name))),
        )


@strawberry.type(description="A move the transition table allows.")
class AllowedMove:
    from_: TaskState = strawberry.field(name="from")
    to: TaskState
    verbs: list[str]
    actor: str
    note: str

    @classmethod
    def from_domain(cls, move: Move) -> AllowedMove:
        return cls(
            from_=move.from_state,
            to=move.to_state,
            verbs=list(move.verbs),
            actor=move.actor,
            note=move.note,
        )


@strawberry.type
class AgentRegistration:
    agent_id: str
    token: str = strawberry.field(description="Shown once; the server keeps only its hash.")


@strawberry.type(description="A rule of its owner's permission gate.")
class GateRule:
    id: strawberry.ID
    owner: str
    effect: GateEffect
    priority: int
    project: str | None
    requester_owner: str | None
    requester_agent: str | None
    deliverable_type: DeliverableType | None
    capability_kind: CapabilityKind | None
    created_at: str

    @classmethod
    def from_domain(cls, rule: DomainGateRule) -> GateRule:
        return cls(**rule.__dict__)


@strawberry.type(description="A rule of its owner's result policy.")
class ResultRule:
    id: strawberry.ID
    owner: str
    policy: ResultPolicy
    project: str | None
    assignee: str | None
    deliverable_type: DeliverableType | None
    created_at: str

    @classmethod
    def from_domain(cls, rule: DomainResultRule) -> ResultRule:
        return cls(**rule.__dict__)


@strawberry.type(description="A bearer token as its holder and owner see it; never the secret.")
class TokenInfo:
    id: strawberry.ID
    principal: str = strawberry.field(description="The handle or agent id the token names.")
    label: str | None
    created_at: str
    last_used_at: str | None = strawberry.field(description="To the minute.")
    expires_at: str | None
    revoked_at: str | None

    @classmethod
    def from_domain(cls, info: DomainTokenInfo) -> TokenInfo:
        return cls(
            id=strawberry.ID(info.id),
            principal=info.principal,
            label=info.label,
            created_at=info.created_at,
            last_used_at=info.last_used_at,
            expires_at=info.expires_at,
            revoked_at=info.revoked_at,
        )


@strawberry.type(description="A token just made: its facts, and its secret, shown only here.")
class NewToken:
    token_info: TokenInfo
    token: str = strawberry.field(description="Shown once; the server keeps only its hash.")


def _moment(value: datetime | None) -> str | None:
    return None if value is None else rfc3339(value)


@strawberry.type(description="An owner schedule: a task handed off at each due time.")
class Schedule(Node):
    id: strawberry.ID
    project: str
    owner: str
    version: int = strawberry.field(description="1 at creation, +1 on every update_schedule.")
    assignee: str | None
    capability: Capability | None
    packet: Packet
    display_title: str | None
    turn_budget: int | None
    cron: str | None
    every_seconds: int | None
    timezone: str
    starts_at: str | None
    ends_at: str | None
    catch_up: CatchUp
    paused: bool
    next_run_at: str | None = strawberry.field(
        description="The next due time; null while paused or when none is left."
    )
    last_run_at: str | None = strawberry.field(description="The due time of the latest run.")
    last_task_id: strawberry.ID | None
    runs: int
    last_error: str | None = strawberry.field(
        description="Why the latest run handed nothing off, or its task was rejected."
    )
    created_at: str

    @classmethod
    def from_domain(cls, schedule: DomainSchedule) -> Schedule:
        return cls(
            id=strawberry.ID(schedule.id),
            project=schedule.project,
            owner=schedule.owner,
            version=schedule.version,
            assignee=schedule.assignee,
            capability=flat(Capability, schedule.capability) if schedule.capability else None,
            packet=flat(Packet, schedule.packet),
            display_title=schedule.display_title,
            turn_budget=schedule.turn_budget,
            cron=schedule.cron,
            every_seconds=schedule.every_seconds,
            timezone=schedule.timezone,
            starts_at=_moment(schedule.starts_at),
            ends_at=_moment(schedule.ends_at),
            catch_up=schedule.catch_up,
            paused=schedule.paused,
            next_run_at=_moment(schedule.next_run_at),
            last_run_at=_moment(schedule.last_run_at),
            last_task_id=None
            if schedule.last_task_id is None
            else strawberry.ID(schedule.last_task_id),
            runs=schedule.runs,
            last_error=schedule.last_error,
            created_at=rfc3339(schedule.created_at),
        )


@strawberry.type(description="What an erasure did.")
class Erasure:
    principal: str = strawberry.field(
        description="The handle or agent id erased (a person's agents were erased with it)."
    )
    erased_at: str
    tokens_revoked: int = strawberry.field(description="Live tokens revoked, agents' included.")
    tasks_marked: int = strawberry.field(
        description="Tasks whose requested_by or result now reads `erased: true`."
    )

    @classmethod
    def from_domain(cls, done: DomainErasure) -> Erasure:
        return cls(
            principal=done.principal,
            erased_at=done.erased_at,
            tokens_revoked=done.tokens_revoked,
            tasks_marked=done.tasks_marked,
        )


@strawberry.type(description="A person or agent as anyone authenticated sees it.")
class PrincipalInfo(Node):
    kind: str = strawberry.field(description="person | agent")
    id: strawberry.ID = strawberry.field(description="The handle or agent id.")
    owner: str = strawberry.field(description="The handle the principal answers to.")
    capabilities: list[Capability] = strawberry.field(
        description="What the agent offers (none for a person or an erased agent)."
    )
    erased: bool
    created_at: str

    @classmethod
    def from_domain(cls, info: DomainPrincipalInfo) -> PrincipalInfo:
        return cls(
            kind=info.kind,
            id=strawberry.ID(info.id),
            owner=info.owner,
            capabilities=[Capability(kind=k, name=n) for k, n in info.capabilities],
            erased=info.erased,
            created_at=info.created_at,
        )
