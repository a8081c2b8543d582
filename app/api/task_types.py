"""The GraphQL Task, its events, checkpoints and open question, and their connections.

A type is built from a domain object (`from_domain()`); the domain object stays private
to the type and backs its computed fields.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, TypeVar, cast

import strawberry
from strawberry.scalars import JSON

from app.api.connections import Connection, Count, Counter, Edge, PageInfo
from app.api.enums import EventKind, TaskState, WaitingOn, WaitOn
from app.api.node import Node
from app.api.rule_types import GateHold, GateRule
from app.api.shapes import (
    ActorRef,
    Checkpoint,
    CheckpointBy,
    Packet,
    Result,
    Route,
    actor_ref,
    flat,
)
from app.domain import moves
from app.domain.events import Event
from app.domain.questions import OpenQuestion as DomainOpenQuestion
from app.domain.questions import open_question
from app.domain.reads import Page, Paging
from app.domain.reads import SavedCheckpoint as DomainSavedCheckpoint
from app.domain.task import PROTOCOL_FIELDS
from app.domain.task import Task as DomainTask
from app.domain.visibility import sees_gate_hold
from app.events.stream import task_of
from app.service.reads import Found

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


@strawberry.type(description="A task: the protocol's task object, typed, and what surrounds it.")
class Task(Node):
    """Built from a domain task, whole or with only the columns a query reads; the fields
    with a converter are converted when asked for. `found` holds what was read ahead for
    the task's level of the query (by the query's lookahead); without it, the loaders answer."""

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

    @strawberry.field(
        description="Why the permission gate holds this handoff (waiting on owner_approval): "
        "which of the assignee's owner's rules held it. Only that owner, who may approve it, "
        "reads it; null for anyone else and for a task not held."
    )
    def gate_hold(self, info: strawberry.Info) -> GateHold | None:
        task = self.domain
        if task.state != "waiting" or task.waiting_on != "owner_approval":
            return None
        return _later(self._gate_hold(info))

    async def _gate_hold(self, info: strawberry.Info) -> GateHold | None:
        task = self.domain
        if not sees_gate_hold(await info.context.viewer(), task):
            return None
        rule_id = task.gate.rule_id
        rules = await info.context.loaders.gate_rules.load(task.assignee_owner)
        rule = next((r for r in rules if r.id == rule_id), None) if rule_id else None
        return GateHold(
            owner=task.assignee_owner,
            rule_id=strawberry.ID(rule_id) if rule_id else None,
            rule=GateRule.from_domain(rule) if rule else None,
        )


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


@strawberry.type(description="A page of tasks, by id (creation order).")
class TaskConnection(Connection[Task]):
    @classmethod
    def of(
        cls,
        page: Page[DomainTask],
        paging: Paging[Any],
        count: Count,
        found: Found | None = None,
        cursor: Callable[[DomainTask], str] = lambda t: t.id,
    ) -> TaskConnection:
        """`cursor`: an item's cursor (by default its task id, the order of a tasks page)."""
        edges = [Edge(cursor=cursor(t), node=Task.from_domain(t, found)) for t in page.items]
        info = PageInfo.of([e.cursor for e in edges], page.has_next, paging)
        return cls(edges=edges, info=info, counter=Counter(count))


@strawberry.type(description="A page of events, oldest first.")
class TaskEventConnection(Connection[TaskEvent]):
    @classmethod
    def of(cls, page: Page[Event], paging: Paging[Any], count: Count) -> TaskEventConnection:
        edges = [Edge(cursor=e.cursor, node=TaskEvent.from_domain(e)) for e in page.items]
        info = PageInfo.of([e.cursor for e in edges], page.has_next, paging)
        return cls(edges=edges, info=info, counter=Counter(count))
