"""What every verb shares: load a visible task, check it, let its act move it, save it.

A verb's command runs through `Store.command`: how it is written (one statement, a
transaction, again on a concurrent change) is storage's choice, not the verb's."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from app import spans
from app.domain import moves, shapes
from app.domain.clock import now, rfc3339
from app.domain.errors import Conflict, NotFound
from app.domain.events import Event
from app.domain.principals import Principal
from app.domain.table import TableError, table
from app.domain.task import Task
from app.domain.visibility import sees
from app.service.arguments import Args
from app.storage.store import Store
from app.storage.tx import Tx

A = TypeVar("A", bound=Args)


async def visible_task(
    tx: Tx, actor: Principal, task_id: str, for_update: bool = False, result_rules: bool = False
) -> Task:
    """The task, if the actor may see it; otherwise not_found, exactly as if it were absent.
    `result_rules`: its requester's owner's result rules are read with it (Tasks.get)."""
    shapes.check("task_id", task_id)
    task = await tx.tasks.get(task_id, for_update=for_update, with_result_rules=result_rules)
    if task is None or not await can_see(tx, actor, task):
        raise NotFound(f"no task {task_id}")
    return task


async def can_see(tx: Tx, actor: Principal, task: Task) -> bool:
    """The domain's visibility rule, with the actor's membership of the task's project now."""
    if sees(actor, task):
        return True
    member = actor.is_person and await tx.projects.is_member(task.project, actor.id)
    return sees(actor, task, {task.project} if member else ())


def check_version(task: Task, expected_version: int | None) -> None:
    if expected_version is not None and expected_version != task.version:
        raise Conflict(
            f"task {task.id} is at version {task.version}, not the expected {expected_version}"
        )


class Moves:
    """The events of one command, possibly across tasks (a subtask's end resumes its parent):
    the domain makes each move; this keeps the command's time, actor and events."""

    def __init__(self, actor: Principal | None) -> None:
        self.actor = actor
        self.at = rfc3339(now())
        self.events: list[Event] = []

    def move(
        self,
        task: Task,
        verb: str,
        to_state: str,
        *,
        by_system: bool = False,
        waiting_on: str | None = None,
        kind: str = "moved",
        note: str | None = None,
    ) -> Event:
        actor = None if by_system or self.actor is None else self.actor.id
        event = task.apply(
            verb, to_state, actor=actor, at=self.at, waiting_on=waiting_on, kind=kind, note=note
        )
        self.events.append(event)
        return event

    def record(self, task: Task, kind: str, verb: str, from_state: str | None) -> Event:
        """An event that is no move (created, checkpointed), by the command's actor."""
        actor = self.actor.id if self.actor else None
        event = task.record(kind, verb, from_state, actor, self.at)
        self.events.append(event)
        return event


@dataclass(frozen=True)
class Step(Generic[A]):
    """One call of a verb, inside its transaction: what its act works with."""

    tx: Tx
    task: Task
    recorded: Moves
    actor: Principal
    verb: str
    args: A

    def move(self, to_state: str | None = None, **how: Any) -> Event:
        """The verb's move to `to_state`, by default the table's one target from here."""
        return self.recorded.move(self.task, self.verb, to_state or self.target(), **how)

    def target(self) -> str:
        """Where the table takes the task by this verb; an act chooses where it gives several."""
        targets = table().targets(self.task.state, self.verb)
        if len(targets) != 1:
            raise TableError(f"{self.verb} from {self.task.state} goes to {targets}: choose one")
        return targets[0]


VerbAct = Callable[[Step[A]], Awaitable[None]]
Replay = Callable[[Store, Principal, str, A], Awaitable[Task | None]]


@dataclass(frozen=True)
class Verb(Generic[A]):
    """A task verb, declared once (in the verbs' registry): its name (its moves are the table's),
    its arguments and its `act`, what it does beyond its move (by default only the move).
    `result_rules`: its act reads the requester's owner's result rules, read with the task
    (Tasks.get); `replay`: the task an earlier call that this one repeats has already
    answered, if any; `description`: its GraphQL field's. How its command is written is
    storage's choice (`Store.command`), never the verb's."""

    name: str
    args: type[A]
    act: VerbAct[A] | None = None
    result_rules: bool = False
    replay: Replay[A] | None = None
    description: str | None = None

    async def __call__(
        self,
        store: Store,
        actor: Principal,
        task_id: str,
        *args: Any,
        expected_version: int | None = None,
        **kwargs: Any,
    ) -> Task:
        """The verb with its arguments given as to its `args` type."""
        return await self.run(store, actor, task_id, self.args(*args, **kwargs), expected_version)

    async def run(
        self, store: Store, actor: Principal, task_id: str, args: A, expected_version: int | None
    ) -> Task:
        args.check()
        if self.replay is not None:
            answered = await self.replay(store, actor, task_id, args)
            if answered is not None:
                return answered
        call = _Call(actor, task_id, self.name, expected_version, self.result_rules)
        return await run_verb(store, call, self.act or _only_move, args)


async def _only_move(step: Step[A]) -> None:
    step.move(note=step.args.note)


async def run_verb(store: Store, call: _Call, act: VerbAct[A], args: A) -> Task:
    """The verb's command (`_command`), in a `prickle.move` span (task id, verb, from and to
    state) when traces are on (`app.spans`)."""
    if not spans.enabled():
        return await store.command(lambda tx: _command(tx, call, act, args))
    verb, task_id = call.verb, call.task_id
    with spans.span("prickle.move", **{"prickle.task_id": task_id, "prickle.verb": verb}) as s:

        async def traced(step: Step[A]) -> None:
            s.set_attribute("prickle.from_state", step.task.state)
            await act(step)
            s.set_attribute("prickle.to_state", step.task.state)

        return await store.command(lambda tx: _command(tx, call, traced, args))


async def _command(tx: Tx, call: _Call, act: VerbAct[A], args: A) -> Task:
    """Load and check the task, let `act` move it, resume a waiting parent, save."""
    task, version, recorded = await call.open(tx)
    await act(Step(tx, task, recorded, call.actor, call.verb, args))
    if not may_resume_parent(task):
        await tx.tasks.save(task, version, recorded.events)
        return task
    await tx.tasks.save(task, version)  # first: the parent reads its children's states
    await resume_parent(tx, task, call.verb, recorded)
    await tx.events.append(recorded.events)
    return task


@dataclass(frozen=True, slots=True)
class _Call:
    """A verb as called, before its transaction (`Step` is the call inside it): who calls it,
    on which task, expecting which version; `open` loads and checks the task. `result_rules`:
    its act reads the requester's owner's result rules, read with the task."""

    actor: Principal
    task_id: str
    verb: str
    expected_version: int | None
    result_rules: bool

    async def open(self, tx: Tx) -> tuple[Task, int, Moves]:
        """The visible task, checked for the expected version and the move; its version as
        read, and the command's `Moves`."""
        actor = self.actor
        task = await visible_task(tx, actor, self.task_id, result_rules=self.result_rules)
        check_version(task, self.expected_version)
        moves.check(task, self.verb, actor)
        return task, task.version, Moves(actor)


def may_resume_parent(child: Task) -> bool:
    return child.parent_task_id is not None and child.state in table().terminal


async def resume_parent(tx: Tx, child: Task, verb: str, recorded: Moves) -> None:
    """A task waiting on `agent` resumes by itself once every one of its subtasks has ended."""
    if child.parent_task_id is None or not may_resume_parent(child):
        return
    parent = await tx.tasks.get(child.parent_task_id, for_update=True)
    if parent is None or parent.state != "waiting" or parent.waiting_on != "agent":
        return
    if not await subtasks_ended(tx, parent.id):
        return
    version = parent.version
    resume_by_subtasks(parent, verb, recorded, f"every subtask has ended (last: {child.id})")
    await tx.tasks.save(parent, version)


async def subtasks_ended(tx: Tx, task_id: str) -> bool:
    """Whether the task has subtasks and every one of them has ended."""
    states = await tx.tasks.child_states(task_id)
    return bool(states) and all(state in table().terminal for state in states)


def resume_by_subtasks(task: Task, verb: str, recorded: Moves, note: str) -> None:
    """The server's answer to a task waiting on `agent` whose subtasks have all ended; the
    event names the verb that caused it, with no actor."""
    recorded.move(
        task, "answer", moves.resume_target(task), by_system=True, kind="answered", note=note
    )
    recorded.events[-1] = _with_verb(recorded.events[-1], verb)


def _with_verb(event: Event, verb: str) -> Event:
    """The resume is caused by another verb (a subtask's end, a wait_on); the event says so."""
    return Event(**{**event.__dict__, "verb": verb})
