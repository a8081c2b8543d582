"""Owner schedules through the service and the scheduler, with an injected clock.

The cast (tests/support/factory.py): alice schedules work for bob's agents; bob's gate allows
alice's requests, holds project `held` and denies project `banned`; carol is a stranger.
"""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from factory import (
    ALICE,
    BOB,
    CAROL,
    CODER,
    PLANNER,
    assert_valid,
    load,
    packet,
    result,
)
from sqlalchemy import func, select, text

from app.domain.clock import now, parse_rfc3339
from app.domain.errors import Forbidden, InvalidInput, NotFound
from app.domain.schedules import Schedule
from app.service import admin, verbs
from app.service import schedules as service_schedules
from app.service.scheduler import Scheduler
from app.service.schedules import ScheduleInput
from app.storage.repositories.events import events
from app.storage.repositories.schedules import schedule_runs, schedules
from app.storage.repositories.tasks import tasks
from app.storage.store import Store

pytestmark = pytest.mark.cast


def schedule_input(**fields: Any) -> ScheduleInput:
    fields.setdefault("project", "work")
    fields.setdefault("packet", packet())
    if "capability" not in fields:
        fields.setdefault("assignee", "bob/coder")
    if "cron" not in fields:
        fields.setdefault("every_seconds", 60)
    return ScheduleInput(**fields)


async def make(store: Store, **fields: Any) -> Schedule:
    return await service_schedules.create_schedule(store, ALICE, schedule_input(**fields))


class Clock:
    """A clock the test moves."""

    def __init__(self, at: datetime) -> None:
        self.at = at

    def __call__(self) -> datetime:
        return self.at


async def run_at(store: Store, at: datetime) -> int:
    return await Scheduler(store, clock=Clock(at)).run_due()


async def stored(store: Store, schedule_id: str) -> Schedule:
    async with store.read() as tx:
        found = await tx.schedules.get(schedule_id)
    assert found is not None
    return found


async def scheduled_tasks(store: Store, schedule_id: str) -> list[Any]:
    """(task, due_at) for each run of the schedule that made a task, by due time."""
    async with store.read() as tx:
        runs = await tx.rows(
            select(schedule_runs)
            .where(schedule_runs.c.schedule_id == schedule_id)
            .order_by(schedule_runs.c.due_at)
        )
        made = await tx.rows(select(tasks.c.id).where(tasks.c.schedule_id == schedule_id))
    assert {r.task_id for r in runs if r.task_id} == {r.id for r in made}
    return [(await load(store, r.task_id), parse_rfc3339(r.due_at)) for r in runs if r.task_id]


async def counts(store: Store) -> tuple[int, ...]:
    """How many schedules, runs and tasks are stored."""
    async with store.read() as tx:
        found = [
            (await tx.one(select(func.count()).select_from(t)))[0]
            for t in (schedules, schedule_runs, tasks)
        ]
    return tuple(found)


# interval and cron


async def test_an_interval_schedule_hands_off_one_task_as_its_owner_at_each_due_time(
    store: Store,
) -> None:
    made = await make(store, display_title="Nightly", turn_budget=5)
    assert made.next_run_at == made.created_at + timedelta(seconds=60)
    assert await run_at(store, made.next_run_at - timedelta(seconds=1)) == 0
    first_due = made.next_run_at
    for k in range(3):
        assert await run_at(store, first_due + timedelta(seconds=60 * k, milliseconds=5)) == 1
    ran = await scheduled_tasks(store, made.id)
    assert [due for _, due in ran] == [first_due + timedelta(seconds=60 * k) for k in range(3)]
    for task, _ in ran:
        assert (task.requester, task.requested_by) == (None, {"kind": "person", "handle": "alice"})
        assert (task.assignee, task.state, task.route) == (
            "bob/coder",
            "routed",
            {"via": "handoff"},
        )
        assert (task.display_title, task.turn_budget, task.packet) == ("Nightly", 5, made.packet)
        assert (task.schedule_id, task.schedule_version) == (made.id, 1)
        assert_valid(task)
    after = await stored(store, made.id)
    assert (after.runs, after.last_task_id, after.last_error) == (3, ran[-1][0].id, None)
    assert after.last_run_at == ran[-1][1]
    assert after.next_run_at == first_due + timedelta(seconds=180)


async def test_a_cron_schedule_runs_at_each_match_read_in_its_time_zone(store: Store) -> None:
    made = await make(store, cron="*/5 9-17 * * MON-FRI", timezone="Europe/Berlin")
    assert made.next_run_at is not None
    at = made.next_run_at
    for _ in range(3):
        assert await run_at(store, at) == 1
        at = (await stored(store, made.id)).next_run_at
        assert at is not None
    dues = [due for _, due in await scheduled_tasks(store, made.id)]
    assert len(dues) == 3
    for due in dues:
        local = due.astimezone(ZoneInfo("Europe/Berlin"))
        assert local.minute % 5 == 0 and 9 <= local.hour <= 17 and local.weekday() < 5
        assert (local.second, local.microsecond) == (0, 0)


async def test_a_capability_is_resolved_at_each_run(store: Store) -> None:
    made = await make(store, capability={"kind": "repo", "name": "prickle"})
    assert made.next_run_at is not None
    await run_at(store, made.next_run_at)
    [(task, _)] = await scheduled_tasks(store, made.id)
    assert task.assignee == "bob/coder"
    assert task.route == {
        "via": "request_capability",
        "capability": {"kind": "repo", "name": "prickle"},
    }


async def test_the_scheduler_loop_is_woken_by_a_new_schedule_and_stops_cleanly(
    store: Store,
) -> None:
    scheduler = Scheduler(store, recheck=30)
    await scheduler.start()
    try:
        await asyncio.sleep(0.1)  # asleep for up to 30 s: nothing is scheduled
        made = await make(store, every_seconds=1)
        deadline = asyncio.get_running_loop().time() + 10
        while (await stored(store, made.id)).runs < 2:
            assert asyncio.get_running_loop().time() < deadline, "no runs within 10 s"
            await asyncio.sleep(0.05)
    finally:
        await scheduler.stop()
    ran = await scheduled_tasks(store, made.id)
    assert [due for _, due in ran][:2] == [
        made.created_at + timedelta(seconds=1),
        made.created_at + timedelta(seconds=2),
    ]


# pause, resume, update, delete, run now


async def test_pause_resume_update_and_delete(store: Store) -> None:
    made = await make(store)
    paused = await service_schedules.pause_schedule(store, ALICE, made.id)
    assert (paused.paused, paused.next_run_at) == (True, None)
    assert await run_at(store, now() + timedelta(hours=1)) == 0
    resumed = await service_schedules.resume_schedule(store, ALICE, made.id)
    assert resumed.paused is False and resumed.next_run_at is not None
    assert resumed.next_run_at > now()
    changed = await service_schedules.update_schedule(
        store, ALICE, made.id, schedule_input(every_seconds=3600, project="other")
    )
    assert (changed.version, changed.every_seconds, changed.project) == (2, 3600, "other")
    assert await stored(store, made.id) == changed
    assert await run_at(store, changed.next_run_at) == 1  # type: ignore[arg-type]
    [(task, _)] = await scheduled_tasks(store, made.id)
    assert (task.project, task.schedule_version) == ("other", 2)
    assert await service_schedules.delete_schedule(store, ALICE, made.id) is True
    assert await counts(store) == (0, 0, 1)  # the task stays
    with pytest.raises(NotFound):
        await service_schedules.pause_schedule(store, ALICE, made.id)


async def test_run_schedule_now_runs_once_and_leaves_next_run_at(store: Store) -> None:
    made = await make(store)
    task = await service_schedules.run_schedule_now(store, ALICE, made.id)
    assert (task.state, task.schedule_id, task.requested_by["handle"]) == (
        "routed",
        made.id,
        "alice",
    )
    after = await stored(store, made.id)
    assert (after.runs, after.last_task_id, after.next_run_at) == (1, task.id, made.next_run_at)
    [(listed, due)] = await scheduled_tasks(store, made.id)
    assert listed.id == task.id and due == after.last_run_at


# refusals


BAD_INPUTS = [
    pytest.param({"cron": "61 * * * *"}, "cron", id="cron-out-of-range"),
    pytest.param({"cron": "* * * *"}, "5 fields", id="cron-four-fields"),
    pytest.param({"cron": "0 0 30 2 *"}, "day-of-month", id="cron-never-matches"),
    pytest.param({"cron": "* * * * *", "every_seconds": 5}, "exactly one", id="both-rules"),
    pytest.param({"every_seconds": None}, "exactly one", id="neither-rule"),
    pytest.param({"every_seconds": 0}, "between", id="zero-interval"),
    pytest.param({"timezone": "Mars/Olympus"}, "IANA", id="unknown-zone"),
    pytest.param(
        {"starts_at": "2027-01-02T00:00:00Z", "ends_at": "2027-01-01T00:00:00Z"},
        "after starts_at",
        id="ends-before-starts",
    ),
    pytest.param({"starts_at": "2027-01-02T00:00:00"}, "offset", id="no-offset"),
    pytest.param({"starts_at": "tomorrow"}, "RFC 3339", id="not-a-time"),
    pytest.param(
        {"capability": {"kind": "repo", "name": "x"}, "assignee": "bob/coder"},
        "exactly one",
        id="both-targets",
    ),
    pytest.param({"assignee": None}, "exactly one", id="neither-target"),
    pytest.param({"assignee": "bob"}, "assignee", id="bad-assignee"),
    pytest.param({"catch_up": "all"}, "catch_up", id="bad-catch-up"),
    pytest.param({"packet": {"task": "x"}}, "packet", id="bad-packet"),
    pytest.param({"project": "Not A Slug"}, "project", id="bad-project"),
]


@pytest.mark.parametrize(("fields", "message"), BAD_INPUTS)
async def test_an_invalid_input_is_refused_and_makes_nothing(
    store: Store, fields: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        await make(store, **fields)
    made = await make(store)
    with pytest.raises(InvalidInput, match=message):
        await service_schedules.update_schedule(store, ALICE, made.id, schedule_input(**fields))
    assert await stored(store, made.id) == made
    assert await counts(store) == (1, 0, 0)


async def test_an_unknown_assignee_is_not_found(store: Store) -> None:
    with pytest.raises(NotFound, match="bob/nobody"):
        await make(store, assignee="bob/nobody")
    assert await counts(store) == (0, 0, 0)


async def test_only_a_person_has_schedules_and_only_its_owner_changes_one(store: Store) -> None:
    with pytest.raises(Forbidden):
        await service_schedules.create_schedule(store, PLANNER, schedule_input())
    with pytest.raises(Forbidden):
        await service_schedules.schedules_of(store, CODER)
    made = await make(store)
    schedule_verbs = ("pause_schedule", "resume_schedule", "delete_schedule", "run_schedule_now")
    for verb in schedule_verbs:
        with pytest.raises(NotFound):
            await getattr(service_schedules, verb)(store, CAROL, made.id)
    with pytest.raises(NotFound):
        await service_schedules.update_schedule(store, CAROL, made.id, schedule_input())
    assert await service_schedules.schedules_of(store, CAROL) == []
    assert await service_schedules.schedules_of(store, CAROL, "work") == []
    # A member of the project sees the project's schedules, and may not change them.
    # founds `work`: alice administers it
    await service_schedules.run_schedule_now(store, ALICE, made.id)
    await admin.add_project_member(store, ALICE, "work", "carol")
    listed = await service_schedules.schedules_of(store, CAROL, "work")
    assert [s.id for s in listed] == [made.id]
    for verb in schedule_verbs:
        with pytest.raises(Forbidden):
            await getattr(service_schedules, verb)(store, CAROL, made.id)
    assert (await stored(store, made.id)).runs == 1
    assert [s.id for s in await service_schedules.schedules_of(store, ALICE)] == [made.id]
    assert await service_schedules.schedules_of(store, BOB) == []


# lineage


async def test_the_result_of_a_scheduled_task_names_the_schedule_run_as_its_cause(
    store: Store,
) -> None:
    made = await make(store)
    await service_schedules.update_schedule(store, ALICE, made.id, schedule_input(every_seconds=30))
    task = await service_schedules.run_schedule_now(store, ALICE, made.id)
    await verbs.accept_task(store, CODER, task.id)
    await verbs.start_task(store, CODER, task.id)
    done = await verbs.return_result(store, CODER, task.id, result())
    assert done.result is not None
    assert done.result["lineage"]["cause"] == {
        "kind": "owner_schedule",
        "schedule_id": made.id,
        "version": 2,
        "task_id": task.id,
        "owner": "alice",
    }
    assert_valid(done)


# catch_up after downtime: a scheduler stops, time moves on, another one starts


@pytest.mark.parametrize("catch_up", ["skip", "one"])
async def test_catch_up_after_downtime(store: Store, catch_up: str) -> None:
    made = await make(store, every_seconds=60, catch_up=catch_up)
    first = made.next_run_at
    assert first is not None
    assert await run_at(store, first) == 1  # on time; then every server stops
    restarted = first + timedelta(hours=2, seconds=30)
    assert await run_at(store, restarted) == 1
    assert await run_at(store, restarted) == 0
    dues = [due for _, due in await scheduled_tasks(store, made.id)]
    latest_missed = first + timedelta(hours=2)
    assert dues == ([first] if catch_up == "skip" else [first, latest_missed])
    after = await stored(store, made.id)
    assert after.next_run_at == latest_missed + timedelta(seconds=60)
    assert after.runs == len(dues)


async def test_a_due_time_reached_within_the_grace_runs_whatever_the_catch_up(
    store: Store,
) -> None:
    made = await make(store, every_seconds=3600)
    assert made.next_run_at is not None
    assert await run_at(store, made.next_run_at + timedelta(seconds=59)) == 1
    assert [due for _, due in await scheduled_tasks(store, made.id)] == [made.next_run_at]


# runs that cannot hand off


async def test_a_run_no_agent_can_take_counts_and_says_why(store: Store) -> None:
    made = await make(store, capability={"kind": "mcp", "name": "nobody-offers-this"})
    assert made.next_run_at is not None
    assert await run_at(store, made.next_run_at) == 1
    after = await stored(store, made.id)
    assert (after.runs, after.last_task_id) == (1, None)
    assert "no agent offers mcp 'nobody-offers-this'" in (after.last_error or "")
    assert await counts(store) == (1, 1, 0)
    with pytest.raises(NotFound, match="no agent offers"):
        await service_schedules.run_schedule_now(store, ALICE, made.id)
    assert (await stored(store, made.id)).runs == 2
    # The capability is offered now: the next run hands off and clears last_error.
    await admin.register_agent(
        store, BOB, "mapper", [{"kind": "mcp", "name": "nobody-offers-this"}]
    )
    task = await service_schedules.run_schedule_now(store, ALICE, made.id)
    after = await stored(store, made.id)
    assert (after.runs, after.last_task_id, after.last_error) == (3, task.id, None)


async def test_a_run_the_gate_rejects_makes_a_rejected_task_and_says_so(store: Store) -> None:
    made = await make(store, project="banned")
    assert made.next_run_at is not None
    await run_at(store, made.next_run_at)
    [(task, _)] = await scheduled_tasks(store, made.id)
    assert task.state == "rejected"
    after = await stored(store, made.id)
    assert after.last_task_id == task.id
    assert after.last_error == f"bob's gate rejected task {task.id} (for bob/coder)"


async def test_a_run_the_gate_holds_waits_for_the_assignees_owner(store: Store) -> None:
    made = await make(store, project="held")
    task = await service_schedules.run_schedule_now(store, ALICE, made.id)
    assert (task.state, task.waiting_on) == ("waiting", "owner_approval")
    assert (await stored(store, made.id)).last_error is None


# one task per due time


async def test_a_due_time_already_run_is_not_run_again(store: Store) -> None:
    made = await make(store)
    assert made.next_run_at is not None
    assert await run_at(store, made.next_run_at) == 1
    # As if another process had claimed the schedule before this one's advance was seen.
    async with store.write() as tx:
        await tx.schedules.update(dataclasses.replace(made, runs=1))
    assert await run_at(store, made.next_run_at) == 1  # claimed, but its run exists: no task
    assert len(await scheduled_tasks(store, made.id)) == 1
    assert await counts(store) == (1, 1, 1)


async def test_two_schedulers_on_one_store_make_one_task_per_due_time(store: Store) -> None:
    made = [await make(store, every_seconds=60) for _ in range(5)]
    at = max(m.next_run_at for m in made if m.next_run_at) + timedelta(milliseconds=1)
    ran = await asyncio.gather(run_at(store, at), run_at(store, at))
    assert sum(ran) == 5
    for m in made:
        assert len(await scheduled_tasks(store, m.id)) == 1


async def test_times_are_stored_in_utc(store: Store) -> None:
    made = await make(store, starts_at="2030-06-01T09:00:00+02:00", every_seconds=86400)
    assert made.next_run_at == datetime(2030, 6, 1, 7, tzinfo=UTC)
    assert (await stored(store, made.id)).starts_at == datetime(2030, 6, 1, 7, tzinfo=UTC)


@pytest.mark.parametrize("fault", ["exception", "statement"])
async def test_a_run_that_fails_unexpectedly_keeps_nothing_and_stops_no_other(
    store: Store, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    """The failing run had written its task when it failed (by an exception, or by a
    statement the database refused, which on PostgreSQL aborts the transaction): that is
    undone, the reason is on its schedule, which is due again a minute later; the schedule
    beside it ran, in the same transaction."""
    failing, other = await make(store), await make(store)
    hand_off = service_schedules.create_in

    async def fails_after_writing(tx: Any, *args: Any) -> Any:
        task = await hand_off(tx, *args)
        if args[-1][0] == failing.id:
            if fault == "statement":
                await tx.conn.execute(text("SELECT * FROM no_such_table"))
            raise RuntimeError("the disk is full")
        return task

    monkeypatch.setattr(service_schedules, "create_in", fails_after_writing)
    at = max(failing.next_run_at, other.next_run_at) + timedelta(milliseconds=1)  # type: ignore[type-var]
    assert await run_at(store, at) == 2
    assert await counts(store) == (2, 1, 1)
    assert len(await scheduled_tasks(store, other.id)) == 1
    after = await stored(store, failing.id)
    assert (after.runs, after.last_task_id, after.next_run_at) == (
        0,
        None,
        at + timedelta(seconds=60),
    )
    assert after.last_error is not None
    expected = "RuntimeError: the disk is full" if fault == "exception" else "no_such_table"
    assert "the scheduler's run failed (" in after.last_error and expected in after.last_error
    async with store.read() as tx:
        [event_tasks] = await tx.one(select(func.count(func.distinct(events.c.task_id))))
    assert event_tasks == 1  # the failed run's events are gone with its task
