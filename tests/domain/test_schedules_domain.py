"""Owner schedules in the domain: input checks, due times (interval, cron, DST), catch_up."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from factory import PACKET

from app.domain import shapes
from app.domain.errors import InvalidInput
from app.domain.schedules import (
    Plan,
    Schedule,
    ScheduleInput,
    check_input,
    due_runs,
    first_due,
    lineage_cause,
    new_schedule,
    next_due,
    paused,
    plan,
    ran,
    resumed,
    updated,
)

pytestmark = pytest.mark.once  # the same on either backend: not run on PostgreSQL

MADE = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)  # a Monday


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


def given(**fields: Any) -> ScheduleInput:
    base: dict[str, Any] = {"project": "ops", "packet": PACKET, "assignee": "bob/sweeper"}
    if "cron" not in fields and "every_seconds" not in fields:
        base["every_seconds"] = 3600
    return ScheduleInput(**{**base, **fields})


def schedule(now: datetime = MADE, **fields: Any) -> Schedule:
    return new_schedule("SCHED1", "alice", given(**fields), now)


def dues(s: Schedule, after: datetime, count: int) -> list[datetime]:
    found: list[datetime] = []
    while len(found) < count:
        due = next_due(s, after)
        if due is None:
            break
        found.append(due)
        after = due
    return found


# Input


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"cron": "61 * * * *"}, r"cron '61 \* \* \* \*': Bad minute"),
        ({"cron": "* * * * * *"}, r"must have 5 fields"),
        ({"cron": "@daily"}, r"must have 5 fields"),
        ({"cron": "0 0 30 2 *"}, r"Bad day-of-month"),
        ({"cron": "* * */20 * 1L"}, r"never matches"),
        ({"cron": "0 * * * *", "every_seconds": 60}, r"exactly one of cron or every_seconds"),
        ({"every_seconds": None}, r"exactly one of cron or every_seconds"),
        ({"every_seconds": 0}, r"every_seconds must be between 1 and 2147483647"),
        ({"every_seconds": 2**31}, r"every_seconds must be between 1 and"),
        ({"every_seconds": True}, r"every_seconds must be an integer"),
        ({"timezone": "Mars/Olympus_Mons"}, r"timezone 'Mars/Olympus_Mons' is not an IANA"),
        ({"timezone": "../etc/passwd"}, r"is not an IANA time zone"),
        ({"starts_at": MADE, "ends_at": MADE}, r"ends_at must be after starts_at"),
        ({"starts_at": datetime(2026, 1, 1)}, r"starts_at must carry a time zone offset"),
        ({"starts_at": datetime.fromisoformat("0001-01-01T00:00:00+14:00")}, r"must lie from 1970"),
        ({"starts_at": at("1969-12-31T23:59:59Z")}, r"starts_at must lie from 1970-01-01"),
        ({"starts_at": datetime.fromisoformat("9999-12-31T23:59:59-12:00")}, r"starts_at must lie"),
        ({"cron": "0 0 1 1 *", "starts_at": at("9999-06-01T00:00:00Z")}, r"starts_at must lie"),
        (
            {"ends_at": at("0001-01-01T00:00:01Z")},
            r"ends_at must lie from 1970-01-01 to before 9000",
        ),
        ({"catch_up": "all"}, r"catch_up 'all' must be one of skip, one"),
        ({"capability": {"kind": "repo", "name": "x"}}, r"exactly one of assignee .* capability"),
        ({"assignee": None}, r"exactly one of assignee .* capability"),
        ({"assignee": "Bob"}, r"assignee 'Bob' must look like owner/name"),
        ({"assignee": None, "capability": {"kind": "car", "name": "x"}}, r"^capability.kind"),
        ({"packet": {"task": "x"}}, r"^packet: 'deliverable_type' is a required property"),
        ({"packet": "do it"}, r"packet must be an object"),
        ({"project": "Ops"}, r"project 'Ops' must match"),
        ({"turn_budget": 101}, r"^turn_budget"),
        ({"display_title": ""}, r"^display_title"),
    ],
)
def test_a_bad_input_is_refused_with_a_clear_message(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        check_input(given(**fields))


def test_a_good_input_comes_back_with_the_packets_defaults_filled() -> None:
    checked = check_input(given(cron="0 9 * * 1-5", timezone="Europe/Berlin", catch_up="one"))
    assert checked.packet == {**PACKET, "context": "", "files": [], "depends_on": []}
    assert (checked.cron, checked.timezone, checked.catch_up) == (
        "0 9 * * 1-5",
        "Europe/Berlin",
        "one",
    )
    capability = {"kind": "repo", "name": "prickle"}
    assert check_input(given(assignee=None, capability=capability)).capability == capability


# Interval due times


def test_an_interval_without_starts_at_first_runs_one_interval_after_creation() -> None:
    s = schedule(every_seconds=3600)
    assert s.next_run_at == first_due(s, MADE) == at("2026-03-02T11:00:00Z")
    assert dues(s, s.next_run_at, 2) == [at("2026-03-02T12:00:00Z"), at("2026-03-02T13:00:00Z")]
    assert next_due(s, at("2026-03-02T11:30:00Z")) == at("2026-03-02T12:00:00Z")


def test_an_interval_is_anchored_at_starts_at_which_is_itself_due() -> None:
    s = schedule(every_seconds=90, starts_at=at("2026-03-02T12:00:30Z"))
    assert s.next_run_at == at("2026-03-02T12:00:30Z")
    assert next_due(s, s.next_run_at) == at("2026-03-02T12:02:00Z")
    assert first_due(s, at("2026-03-02T12:02:00Z")) == at("2026-03-02T12:02:00Z")


def test_an_interval_keeps_its_phase_from_a_past_starts_at() -> None:
    s = schedule(every_seconds=60, starts_at=at("2026-01-01T00:00:10Z"))
    assert s.next_run_at == at("2026-03-02T10:00:10Z")


def test_no_due_time_lies_after_ends_at_and_one_equal_to_it_still_runs() -> None:
    s = schedule(
        every_seconds=60, starts_at=at("2026-03-02T10:00:00Z"), ends_at=at("2026-03-02T10:02:00Z")
    )
    assert dues(s, MADE - timedelta(seconds=1), 5) == [
        at("2026-03-02T10:00:00Z"),
        at("2026-03-02T10:01:00Z"),
        at("2026-03-02T10:02:00Z"),
    ]
    assert first_due(s, at("2026-03-02T10:02:00.000001Z")) is None


# Cron due times


def test_cron_is_read_in_the_schedules_time_zone() -> None:
    s = schedule(cron="0 9 * * 1-5", timezone="America/New_York", now=at("2026-03-06T15:00:00Z"))
    # Friday 10:00 EST has passed 09:00; Monday 09:00 is after the US switch to EDT.
    assert dues(s, at("2026-03-06T15:00:00Z"), 2) == [
        at("2026-03-09T13:00:00Z"),
        at("2026-03-10T13:00:00Z"),
    ]


def test_cron_runs_nothing_before_starts_at() -> None:
    s = schedule(cron="0 * * * *", starts_at=at("2026-03-02T15:00:00Z"))
    assert s.next_run_at == at("2026-03-02T15:00:00Z")


def test_cron_due_at_now_is_the_first_due_time() -> None:
    assert first_due(schedule(cron="0 10 * * *"), MADE) == MADE


def test_a_fixed_time_in_the_spring_gap_runs_when_the_clock_jumps() -> None:
    # Europe/Berlin, 2026-03-29: 02:00 CET becomes 03:00 CEST; 02:30 does not exist.
    s = schedule(cron="30 2 * * *", timezone="Europe/Berlin", now=at("2026-03-28T12:00:00Z"))
    assert dues(s, at("2026-03-28T12:00:00Z"), 2) == [
        at("2026-03-29T03:00:00+02:00"),
        at("2026-03-30T02:30:00+02:00"),
    ]


def test_an_every_half_hour_cron_has_no_runs_in_the_spring_gap() -> None:
    s = schedule(cron="*/30 * * * *", timezone="Europe/Berlin")
    assert dues(s, at("2026-03-29T01:00:00+01:00"), 3) == [
        at("2026-03-29T01:30:00+01:00"),
        at("2026-03-29T03:00:00+02:00"),
        at("2026-03-29T03:30:00+02:00"),
    ]


def test_a_fixed_time_in_the_autumn_repeat_runs_once_at_its_first_pass() -> None:
    # Europe/Berlin, 2026-10-25: 03:00 CEST becomes 02:00 CET; 02:30 happens twice.
    s = schedule(cron="30 2 * * *", timezone="Europe/Berlin")
    assert dues(s, at("2026-10-24T12:00:00Z"), 2) == [
        at("2026-10-25T02:30:00+02:00"),
        at("2026-10-26T02:30:00+01:00"),
    ]
    # Asked from inside the second pass, that day's run is already behind.
    assert next_due(s, at("2026-10-25T02:00:00+01:00")) == at("2026-10-26T02:30:00+01:00")


def test_an_hourly_cron_runs_in_both_passes_of_the_autumn_repeat() -> None:
    s = schedule(cron="0 * * * *", timezone="Europe/Berlin")
    assert dues(s, at("2026-10-25T01:30:00+02:00"), 3) == [
        at("2026-10-25T02:00:00+02:00"),
        at("2026-10-25T02:00:00+01:00"),
        at("2026-10-25T03:00:00+01:00"),
    ]


# Runs after downtime


def test_a_due_time_reached_on_time_runs_whatever_the_catch_up() -> None:
    for catch_up in ("skip", "one"):
        s = schedule(every_seconds=60, catch_up=catch_up)
        due = MADE + timedelta(seconds=60)
        assert s.next_run_at == due
        assert plan(s, due + timedelta(seconds=2)) == Plan([due], due + timedelta(seconds=60))


def test_nothing_runs_before_next_run_at() -> None:
    s = schedule(every_seconds=60)
    assert due_runs(s, MADE + timedelta(seconds=60) - timedelta(microseconds=1)) == []


def test_after_a_long_downtime_skip_runs_nothing_and_schedules_the_next_future_time() -> None:
    s = schedule(every_seconds=60, catch_up="skip")
    now = MADE + timedelta(days=3, seconds=10)
    assert plan(s, now) == Plan([], MADE + timedelta(days=3, seconds=60))


def test_after_a_long_downtime_one_runs_once_for_the_latest_missed_time() -> None:
    s = schedule(every_seconds=60, catch_up="one")
    result = plan(s, MADE + timedelta(days=3, seconds=10))
    assert result.runs == [MADE + timedelta(days=3)]
    assert result.next_run_at == MADE + timedelta(days=3, seconds=60)


def test_catch_up_after_a_week_of_downtime_on_an_hourly_cron_in_a_zone() -> None:
    now = at("2026-03-09T10:20:00+01:00")  # a week and 20 minutes after the 10:00 run
    for catch_up, runs in (("skip", []), ("one", [at("2026-03-09T10:00:00+01:00")])):
        s = schedule(cron="0 * * * *", timezone="Europe/Paris", catch_up=catch_up)
        s = dataclasses.replace(s, next_run_at=at("2026-03-02T11:00:00+01:00"))
        assert plan(s, now).runs == runs
        assert plan(s, now).next_run_at == at("2026-03-09T11:00:00+01:00")


def test_catch_up_one_finds_a_rare_cron_time_missed_months_ago() -> None:
    s = schedule(cron="0 0 1 1 *", catch_up="one", now=at("2026-12-01T00:00:00Z"))
    assert s.next_run_at == at("2027-01-01T00:00:00Z")
    assert plan(s, at("2027-09-01T00:00:00Z")).runs == [at("2027-01-01T00:00:00Z")]


def test_the_grace_decides_when_a_due_time_counts_as_missed() -> None:
    s = schedule(every_seconds=3600, catch_up="skip")
    due = s.next_run_at
    assert due is not None
    assert due_runs(s, due + timedelta(seconds=60)) == [due]
    assert due_runs(s, due + timedelta(seconds=61)) == []
    assert due_runs(s, due + timedelta(seconds=61), grace=timedelta(minutes=5)) == [due]


def test_a_schedule_that_ended_during_downtime_runs_its_last_time_at_most_once_more() -> None:
    ends = MADE + timedelta(hours=5)
    for catch_up, runs in (("skip", []), ("one", [ends])):
        s = schedule(every_seconds=3600, catch_up=catch_up, ends_at=ends)
        assert plan(s, MADE + timedelta(days=1)) == Plan(runs, None)


def test_a_paused_schedule_has_nothing_due_until_resumed_and_then_skips_what_it_missed() -> None:
    s = paused(schedule(every_seconds=60, catch_up="one"))
    assert (s.paused, s.next_run_at) == (True, None)
    later = MADE + timedelta(hours=2, seconds=30)
    assert plan(s, later).runs == [] and plan(s, later).next_run_at is None
    back = resumed(s, later)
    assert (back.paused, back.next_run_at) == (False, MADE + timedelta(hours=2, seconds=60))


# Life cycle


def test_a_new_schedule_is_version_1_with_its_first_due_time() -> None:
    s = schedule(cron="0 9 * * *", timezone="Europe/Berlin")
    assert (s.id, s.owner, s.version, s.runs, s.paused) == ("SCHED1", "alice", 1, 0, False)
    assert (s.created_at, s.next_run_at) == (MADE, at("2026-03-03T09:00:00+01:00"))
    assert s.packet["files"] == []


def test_an_update_takes_the_whole_input_adds_one_to_version_and_keeps_the_record() -> None:
    s = ran(schedule(every_seconds=60), MADE, "TASK1")
    later = MADE + timedelta(minutes=5)
    changed = updated(s, given(cron="15 * * * *", project="ops-2"), later)
    assert (changed.version, changed.project, changed.cron) == (2, "ops-2", "15 * * * *")
    assert changed.every_seconds is None
    assert changed.next_run_at == at("2026-03-02T10:15:00Z")
    assert (changed.runs, changed.last_task_id, changed.created_at) == (1, "TASK1", MADE)
    assert updated(paused(s), given(), later).next_run_at is None


def test_a_run_counts_whether_or_not_it_made_a_task() -> None:
    s = ran(schedule(), MADE, "TASK1")
    s = ran(s, MADE + timedelta(hours=1), None, "no agent offers repo prickle")
    assert (s.runs, s.last_task_id, s.last_error) == (2, "TASK1", "no agent offers repo prickle")
    assert s.last_run_at == MADE + timedelta(hours=1)
    s = ran(s, MADE + timedelta(hours=2), "TASK3")
    assert (s.runs, s.last_task_id, s.last_error) == (3, "TASK3", None)


def result_with_cause(cause: dict[str, Any]) -> dict[str, Any]:
    return {
        "summary": "done",
        "evidence": [{"kind": "note", "summary": "ok"}],
        "provenance": "agent_generated",
        "returned_by": "bob/sweeper",
        "returned_at": "2026-03-02T10:00:00Z",
        "lineage": {"cause": cause, "context": [], "recorded_at": "2026-03-02T10:00:00Z"},
    }


def test_the_lineage_cause_is_the_schemas_owner_schedule_cause() -> None:
    cause = lineage_cause("SCHED1", 3, "TASK9", "alice")
    assert cause == {
        "kind": "owner_schedule",
        "schedule_id": "SCHED1",
        "version": 3,
        "task_id": "TASK9",
        "owner": "alice",
    }
    shapes.check("result", result_with_cause(cause))
    with pytest.raises(InvalidInput, match=r"^result\.lineage: .* is not valid"):
        shapes.check("result", result_with_cause(lineage_cause("SCHED1", 0, "TASK9", "alice")))


def test_a_loop_behind_a_short_interval_runs_only_the_latest_due_time() -> None:
    s = schedule(every_seconds=1, catch_up="skip")
    assert s.next_run_at is not None
    result = plan(s, s.next_run_at + timedelta(seconds=3.5))
    assert result.runs == [s.next_run_at + timedelta(seconds=3)]
    assert result.next_run_at == s.next_run_at + timedelta(seconds=4)
