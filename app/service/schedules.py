"""Owner schedules: the verbs a person uses on them, and a schedule's run.

A run hands off one task as the schedule's owner would (`requester` null, `requested_by` the
owner), through the creation verbs' own path (app.service.creation.create_in: idempotency,
the assignee's owner's gate, the project's founding), in one transaction with the run's row
in `schedule_runs`, whose key (schedule_id, due_at) admits one run per due time, and the
schedule's advance (runs, last_run_at, last_task_id, last_error, next_run_at).
"""

from __future__ import annotations

import dataclasses
import logging
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from app.domain import schedules, shapes
from app.domain.clock import new_id, now, rfc3339
from app.domain.errors import Conflict, Forbidden, InvalidInput, NotFound, ProtocolError
from app.domain.principals import Principal, check_project, person
from app.domain.schedules import Schedule
from app.domain.task import Task
from app.domain.types import JSON
from app.service.creation import create_in
from app.service.erasure import refuse_erased
from app.service.inputs import (
    CapabilityInput,
    HandoffInput,
    Input,
    PacketInput,
    RequestCapabilityInput,
    as_json,
)
from app.storage.outage import fault
from app.storage.repositories.schedules import Unreadable
from app.storage.store import Store
from app.storage.tx import Tx

__all__ = [
    "ScheduleInput",
    "create_schedule",
    "delete_schedule",
    "on_change",
    "pause_schedule",
    "resume_schedule",
    "run_due",
    "run_schedule_now",
    "schedules_of",
    "update_schedule",
]

log = logging.getLogger(__name__)


@dataclass
class ScheduleInput(Input):
    """What `create_schedule` and `update_schedule` take; times are RFC 3339 with an offset."""

    project: str
    packet: PacketInput | JSON
    assignee: str | None = None
    capability: CapabilityInput | JSON | None = None
    display_title: str | None = None
    turn_budget: int | None = None
    cron: str | None = None
    every_seconds: int | None = None
    timezone: str = "UTC"
    starts_at: str | None = None
    ends_at: str | None = None
    catch_up: str = "skip"

    def to_domain(self) -> schedules.ScheduleInput:
        """The domain's input, checked (InvalidInput names the first faulty field)."""
        packet = as_json(self.packet)
        if not isinstance(packet, dict):
            raise InvalidInput("packet must be an object")
        made = schedules.ScheduleInput(
            project=self.project,
            packet=packet,
            assignee=self.assignee,
            capability=None if self.capability is None else as_json(self.capability),
            display_title=self.display_title,
            turn_budget=self.turn_budget,
            cron=self.cron,
            every_seconds=self.every_seconds,
            timezone=self.timezone,
            starts_at=_moment("starts_at", self.starts_at),
            ends_at=_moment("ends_at", self.ends_at),
            catch_up=self.catch_up,
        )
        return schedules.check_input(made)


def _moment(name: str, value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        return datetime.fromisoformat(value)
    except (TypeError, ValueError):
        raise InvalidInput(f"{name} {value!r} is not an RFC 3339 date-time") from None


# Wake-ups: the scheduler of this process learns of a schedule made, changed or resumed here.

_listeners: weakref.WeakKeyDictionary[Store, list[Callable[[], None]]] = weakref.WeakKeyDictionary()


def on_change(store: Store, listener: Callable[[], None]) -> Callable[[], None]:
    """Call `listener` after each commit that makes a schedule due sooner; returns the
    function that stops it."""
    _listeners.setdefault(store, []).append(listener)
    return lambda: _listeners.get(store, []).remove(listener)


def _changed(store: Store) -> None:
    for listener in list(_listeners.get(store, [])):
        listener()


# The verbs


def _owner(actor: Principal) -> str:
    if not actor.is_person:
        raise Forbidden("only a person has schedules")
    return actor.id


async def create_schedule(store: Store, actor: Principal, inp: ScheduleInput) -> Schedule:
    """A schedule of the caller's, version 1, its first due time ahead."""
    owner = _owner(actor)
    made = schedules.new_schedule(new_id(), owner, inp.to_domain(), now())
    async with store.write() as tx:
        await _check_assignee(tx, made)
        await tx.schedules.insert(made)
    _changed(store)
    return made


async def update_schedule(
    store: Store, actor: Principal, schedule_id: str, inp: ScheduleInput
) -> Schedule:
    """The whole input again: version + 1, next_run_at anew; runs and last_* stay."""
    _owner(actor)
    checked = inp.to_domain()
    async with store.write() as tx:
        found = await _own(tx, actor, schedule_id)
        changed = schedules.updated(found, checked, now())
        await _check_assignee(tx, changed)
        await tx.schedules.update(changed)
    _changed(store)
    return changed


async def pause_schedule(store: Store, actor: Principal, schedule_id: str) -> Schedule:
    _owner(actor)
    async with store.write() as tx:
        stopped = schedules.paused(await _own(tx, actor, schedule_id))
        await tx.schedules.update(stopped)
    return stopped


async def resume_schedule(store: Store, actor: Principal, schedule_id: str) -> Schedule:
    """Due times that fell while paused are not run; the next one ahead is."""
    _owner(actor)
    async with store.write() as tx:
        going = schedules.resumed(await _own(tx, actor, schedule_id), now())
        await tx.schedules.update(going)
    _changed(store)
    return going


async def delete_schedule(store: Store, actor: Principal, schedule_id: str) -> bool:
    """The schedule and its record of runs; the tasks it handed off stay."""
    _owner(actor)
    async with store.write() as tx:
        await _own(tx, actor, schedule_id)
        await tx.schedules.delete(schedule_id)
    return True


async def run_schedule_now(store: Store, actor: Principal, schedule_id: str) -> Task:
    """One run at once, due at the moment of the call; next_run_at stays as it is.

    A run that cannot hand off still counts (its reason in last_error) and the refusal is
    then the answer: not_found when no agent offers the capability."""
    _owner(actor)
    at = now()
    async with store.write() as tx:
        schedule = await _own(tx, actor, schedule_id)
        outcome = await _run(tx, schedule, at, at)
        if outcome is None:
            raise Conflict(f"schedule {schedule_id} already ran at {rfc3339(at)}")
        await tx.schedules.update(outcome.schedule)
    if outcome.task is None:
        raise outcome.refusal or NotFound(outcome.schedule.last_error or "no task")
    return outcome.task


async def schedules_of(
    store: Store, actor: Principal, project: str | None = None
) -> list[Schedule]:
    """The caller's schedules; with `project`, those in it: all of them for a member of the
    project, the caller's own otherwise."""
    owner = _owner(actor)
    if project is None:
        async with store.read() as tx:
            return await tx.schedules.of(owner, None)
    check_project(project)
    async with store.read() as tx:
        member = await tx.projects.is_member(project, owner)
        return await tx.schedules.of(None if member else owner, project)


async def _own(tx: Tx, actor: Principal, schedule_id: str) -> Schedule:
    """The caller's schedule, locked for this transaction. Another person's is not_found,
    or forbidden to a member of its project, who sees it in `schedules(project)`."""
    shapes.check("task_id", schedule_id, "id")
    found = await tx.schedules.get(schedule_id, for_update=True)
    if found is None:
        raise NotFound(f"no schedule {schedule_id}")
    if found.owner != actor.id:
        if await tx.projects.is_member(found.project, actor.id):
            raise Forbidden(f"only its owner {found.owner} changes schedule {schedule_id}")
        raise NotFound(f"no schedule {schedule_id}")
    return found


async def _check_assignee(tx: Tx, schedule: Schedule) -> None:
    """A named assignee must exist, and not be erased, when the schedule is made (a
    capability is resolved at each run)."""
    if schedule.assignee is not None and not await tx.principals.agent_exists(schedule.assignee):
        raise NotFound(f"no agent {schedule.assignee}")
    await refuse_erased(tx, schedule.assignee, "assignee")


# Runs

# Schedules claimed per transaction: one commit for several runs when many are due at once,
# few enough that a transaction stays short.
CLAIM_LIMIT = 20
# A schedule whose run failed unexpectedly (or whose row cannot be read) is due again after
# this long: a passing fault heals, a lasting one is logged about once a minute.
RETRY_FAILED = timedelta(seconds=60)
ERROR_MAX = 500  # characters of that failure's description kept in last_error


@dataclass(frozen=True)
class Outcome:
    """A run: the schedule after it, the task it handed off (None: none), and the refusal
    that stopped the handoff, if one did."""

    schedule: Schedule
    task: Task | None
    refusal: ProtocolError | None = None


async def run_due(store: Store, at: datetime, limit: int = CLAIM_LIMIT) -> int:
    """Claim up to `limit` schedules due at `at`, those due longest ago first, and run what
    each one's plan says, in one transaction; how many were claimed (0: nothing is due, or
    every due schedule is being run by another process)."""
    async with store.write() as tx:
        claimed = await tx.schedules.claim_due(at, limit)
        for schedule in claimed:
            await _advance_or_set_aside(tx, schedule, at)
    return len(claimed)


async def _advance_or_set_aside(tx: Tx, schedule: Schedule | Unreadable, at: datetime) -> None:
    """Advance one claimed schedule without the others depending on it: one whose row
    cannot be read, or whose run fails unexpectedly, has nothing of that run kept, says why
    in last_error (and the log), and is due again only RETRY_FAILED later."""
    if isinstance(schedule, Unreadable):
        error = f"the scheduler could not read the stored schedule ({schedule.error})"
        log.error("schedule %s: %s", schedule.id, error)
    else:
        try:
            async with tx.savepoint():
                await _advance(tx, schedule, at)
            return
        except Exception as failure:
            if fault(failure) is not None:  # the database, not the schedule: the round fails
                raise
            log.exception("schedule %s: its run failed", schedule.id)
            error = f"the scheduler's run failed ({type(failure).__name__}: {failure})"
    retry = RETRY_FAILED.total_seconds()
    error = f"{error[:ERROR_MAX]}; it is tried again every {retry:g} s"
    await tx.schedules.set_aside(schedule.id, error, at + RETRY_FAILED)


async def _advance(tx: Tx, schedule: Schedule, at: datetime) -> None:
    plan = schedules.plan(schedule, at)
    for due in plan.runs:
        outcome = await _run(tx, schedule, due, at)
        if outcome is not None:
            schedule = outcome.schedule
    await tx.schedules.update(dataclasses.replace(schedule, next_run_at=plan.next_run_at))


async def _run(tx: Tx, schedule: Schedule, due: datetime, at: datetime) -> Outcome | None:
    """Record the run of `due` and hand off its task; None when that due time already has
    a run (another process made it). The handoff's refusals come before it writes, so a
    refused one leaves nothing but the run's record."""
    if not await tx.schedules.insert_run(schedule.id, due, at):
        return None
    refusal: ProtocolError | None = None
    try:
        task: Task | None = await create_in(
            tx,
            person(schedule.owner),
            _handoff(schedule, due),
            schedule.packet,
            (schedule.id, schedule.version),
        )
    except ProtocolError as refused:
        task, refusal = None, refused
    error = refusal.message if refusal is not None else _gate_error(task)
    task_id = None if task is None else task.id
    await tx.schedules.finish_run(schedule.id, due, task_id, error)
    return Outcome(schedules.ran(schedule, due, task_id, error), task, refusal)


def _handoff(schedule: Schedule, due: datetime) -> HandoffInput | RequestCapabilityInput:
    """The owner's handoff for the run of `due`; its idempotency key names the run."""
    key = f"schedule:{schedule.id}:{rfc3339(due)}"
    if schedule.assignee is not None:
        return HandoffInput(
            project=schedule.project,
            assignee=schedule.assignee,
            packet=schedule.packet,
            display_title=schedule.display_title,
            turn_budget=schedule.turn_budget,
            idempotency_key=key,
        )
    return RequestCapabilityInput(
        project=schedule.project,
        capability=schedule.capability or {},
        packet=schedule.packet,
        display_title=schedule.display_title,
        turn_budget=schedule.turn_budget,
        idempotency_key=key,
    )


def _gate_error(task: Task | None) -> str | None:
    if task is None or task.state != "rejected":
        return None
    return f"{task.assignee_owner}'s gate rejected task {task.id} (for {task.assignee})"
