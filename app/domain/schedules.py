"""Owner schedules: a person's standing order to hand off a task at each due time.

Due times are instants (UTC datetimes). A schedule has exactly one rule:

- ``every_seconds``: ``anchor + k * every_seconds`` for k = 0, 1, 2, ..., where the anchor is
  ``starts_at`` when given (so ``starts_at`` itself is due) and otherwise
  ``created_at + every_seconds`` (a schedule never fires at the instant it is made);
- ``cron``: five fields read in the schedule's ``timezone``, each match at or after
  ``starts_at``.

No due time lies after ``ends_at`` (a due time equal to it still runs).

Cron expressions are evaluated by cronsim rather than croniter. cronsim is small, typed
(``py.typed``), has no dependencies, was written for zoneinfo from its 2.0 on, and states one
DST rule and tests it: it matches Debian's cron. A time inside a spring-forward gap runs at the
moment the clock jumps (``30 2 * * *`` in Europe/Berlin on the last Sunday of March runs at
03:00 CEST); a time in an autumn repeat runs once, at its first occurrence, for jobs at a fixed
hour, while jobs that run at least hourly (``0 * * * *``, ``*/30 * * * *``) run in both
passes of the repeated hour. croniter's zoneinfo DST handling was rewritten only in 2025 and
DST bug reports against it continued after that. cronsim also accepts a sixth field
(seconds); the protocol's cron has five fields and minute resolution, so exactly five are
required here.

The scheduler loop's contract: claim a schedule whose ``next_run_at <= now`` (and not
paused), call ``plan(schedule, now)``, hand off one task per time in ``Plan.runs`` (at most
one), record each with ``ran(...)`` and store ``Plan.next_run_at``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any
from zoneinfo import ZoneInfo, available_timezones

from cronsim import CronSim, CronSimError

from app.domain import shapes
from app.domain.errors import InvalidInput
from app.domain.principals import check_agent_id, check_handle, check_project

JSON = dict[str, Any]

CATCH_UP = ("skip", "one")
EVERY_SECONDS_MAX = 2**31 - 1  # the column is a 32-bit integer: about 68 years
# The column holds 200 characters; five fields need far fewer (every minute listed is 170).
CRON_MAX = 200
# starts_at and ends_at lie in [EARLIEST, LATEST) UTC: every due time, even 68 years past
# LATEST, is a four-digit year, stored as fixed-width text and read back.
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(9000, 1, 1, tzinfo=UTC)
# A next_run_at reached more than GRACE late was missed (no server was running): under
# catch_up `skip` it gets no task. Within GRACE it is on time, whatever the catch_up.
GRACE = timedelta(seconds=60)
_TICK = timedelta(microseconds=1)
# Windows, newest first, searched for the latest missed cron time (see _latest_cron).
_WINDOWS = (timedelta(hours=2), timedelta(days=2), timedelta(days=32), timedelta(days=367))


@dataclass(frozen=True, kw_only=True)
class ScheduleInput:
    """What `create_schedule` and `update_schedule` take."""

    project: str
    packet: JSON
    assignee: str | None = None
    capability: JSON | None = None
    display_title: str | None = None
    turn_budget: int | None = None
    cron: str | None = None
    every_seconds: int | None = None
    timezone: str = "UTC"
    starts_at: datetime | None = None
    ends_at: datetime | None = None
    catch_up: str = "skip"


INPUT_FIELDS = tuple(f.name for f in dataclasses.fields(ScheduleInput))


@dataclass(frozen=True, kw_only=True)
class Schedule:
    id: str
    project: str
    owner: str
    version: int = 1
    assignee: str | None = None
    capability: JSON | None = None
    packet: JSON
    display_title: str | None = None
    turn_budget: int | None = None
    cron: str | None = None
    every_seconds: int | None = None
    timezone: str = "UTC"
    starts_at: datetime | None = None
    ends_at: datetime | None = None
    catch_up: str = "skip"
    paused: bool = False
    next_run_at: datetime | None = None
    last_run_at: datetime | None = None
    last_task_id: str | None = None
    runs: int = 0
    last_error: str | None = None
    created_at: datetime


@dataclass(frozen=True)
class Plan:
    """What a scheduler does for a claimed schedule at `now`."""

    runs: list[datetime]  # the due times to hand off a task for now: none or one
    next_run_at: datetime | None  # the schedule's next due time after now; None: no more


# Validation


def check_input(inp: ScheduleInput) -> ScheduleInput:
    """The input with the packet's defaults filled, or InvalidInput naming the first fault."""
    check_project(inp.project)
    _check_target(inp.assignee, inp.capability)
    if not isinstance(inp.packet, dict):
        raise InvalidInput("packet must be an object")
    packet = shapes.check("packet", shapes.with_defaults("packet", inp.packet))
    shapes.check("display_title", inp.display_title)
    shapes.check("turn_budget", inp.turn_budget)
    _check_rule(inp.cron, inp.every_seconds)
    check_timezone(inp.timezone)
    _check_window(inp.starts_at, inp.ends_at)
    if inp.catch_up not in CATCH_UP:
        raise InvalidInput(f"catch_up {inp.catch_up!r} must be one of {', '.join(CATCH_UP)}")
    return dataclasses.replace(inp, packet=packet)


def _check_target(assignee: str | None, capability: JSON | None) -> None:
    if (assignee is None) == (capability is None):
        raise InvalidInput("give exactly one of assignee (an agent id) or capability")
    if assignee is not None:
        check_agent_id(assignee, "assignee")
    else:
        shapes.check("capability", capability)


def _check_rule(cron: str | None, every_seconds: int | None) -> None:
    if (cron is None) == (every_seconds is None):
        raise InvalidInput("give exactly one of cron or every_seconds")
    if cron is not None:
        check_cron(cron)
    elif isinstance(every_seconds, bool) or not isinstance(every_seconds, int):
        raise InvalidInput("every_seconds must be an integer")
    elif not 1 <= every_seconds <= EVERY_SECONDS_MAX:
        raise InvalidInput(f"every_seconds must be between 1 and {EVERY_SECONDS_MAX}")


def check_cron(cron: str) -> str:
    """A five-field cron expression (minute resolution) that matches at least once."""
    if isinstance(cron, str) and len(cron) > CRON_MAX:
        raise InvalidInput(f"cron: at most {CRON_MAX} characters, not {len(cron)}")
    if not isinstance(cron, str) or len(cron.split()) != 5:
        raise InvalidInput(f"cron {cron!r} must have 5 fields: minute hour day month weekday")
    try:
        next(CronSim(cron, datetime(2000, 1, 1, tzinfo=UTC)))
    except CronSimError as error:
        raise InvalidInput(f"cron {cron!r}: {error}") from None
    except StopIteration:
        raise InvalidInput(f"cron {cron!r} never matches") from None
    return cron


def check_timezone(name: str) -> str:
    if not isinstance(name, str) or name not in _zone_names():
        raise InvalidInput(f"timezone {name!r} is not an IANA time zone name, e.g. Europe/Berlin")
    return name


@cache
def _zone_names() -> frozenset[str]:
    return frozenset(available_timezones()) | {"UTC"}


def _check_window(starts_at: datetime | None, ends_at: datetime | None) -> None:
    for name, moment in (("starts_at", starts_at), ("ends_at", ends_at)):
        if moment is not None and moment.utcoffset() is None:
            raise InvalidInput(f"{name} must carry a time zone offset")
        if moment is not None and not _in_range(moment):
            raise InvalidInput(
                f"{name} must lie from {EARLIEST:%Y-%m-%d} to before {LATEST:%Y-%m-%d} (UTC)"
            )
    if starts_at is not None and ends_at is not None and ends_at <= starts_at:
        raise InvalidInput("ends_at must be after starts_at")


def _in_range(moment: datetime) -> bool:
    """True when the moment, in UTC, lies in [EARLIEST, LATEST): due times computed from it
    stay far from datetime's limits and are stored as fixed-width text."""
    try:
        return EARLIEST <= moment.astimezone(UTC) < LATEST
    except OverflowError:  # an offset that takes it past year 1 or 9999
        return False


# Life cycle


def new_schedule(schedule_id: str, owner: str, inp: ScheduleInput, now: datetime) -> Schedule:
    """A schedule as `create_schedule` makes it: version 1, its first due time ahead."""
    inp = check_input(inp)
    fields = {name: getattr(inp, name) for name in INPUT_FIELDS}
    made = Schedule(id=schedule_id, owner=check_handle(owner, "owner"), created_at=now, **fields)
    return dataclasses.replace(made, next_run_at=first_due(made, now))


def updated(schedule: Schedule, inp: ScheduleInput, now: datetime) -> Schedule:
    """The schedule after `update_schedule`: the new input, version + 1, its due time anew."""
    inp = check_input(inp)
    fields = {name: getattr(inp, name) for name in INPUT_FIELDS}
    changed = dataclasses.replace(schedule, version=schedule.version + 1, **fields)
    return dataclasses.replace(changed, next_run_at=_ahead(changed, now))


def paused(schedule: Schedule) -> Schedule:
    """Paused: nothing is due until it resumes (next_run_at is None)."""
    return dataclasses.replace(schedule, paused=True, next_run_at=None)


def resumed(schedule: Schedule, now: datetime) -> Schedule:
    """Resumed: due times that fell while paused are not run; the next one ahead is."""
    return dataclasses.replace(schedule, paused=False, next_run_at=first_due(schedule, now))


def ran(
    schedule: Schedule, at: datetime, task_id: str | None, error: str | None = None
) -> Schedule:
    """The schedule after one run at `at`: counted whether or not a task could be handed off.

    `error` says why the run handed nothing off (no agent offers the capability, the gate
    rejected the task); a run without one clears the previous error."""
    return dataclasses.replace(
        schedule,
        runs=schedule.runs + 1,
        last_run_at=at,
        last_task_id=task_id or schedule.last_task_id,
        last_error=error,
    )


def _ahead(schedule: Schedule, now: datetime) -> datetime | None:
    return None if schedule.paused else first_due(schedule, now)


# Due times


def first_due(schedule: Schedule, now: datetime) -> datetime | None:
    """The first due time at or after `now`: next_run_at for a schedule made or resumed now."""
    return next_due(schedule, now - _TICK)


def next_due(schedule: Schedule, after: datetime) -> datetime | None:
    """The first due time strictly after `after`, or None when no due time is left."""
    if schedule.cron is not None:
        due = next(_cron_times(schedule, after), None)
    else:
        due = _interval_next(schedule, after)
    return due if due is not None and _before_end(schedule, due) else None


def due_runs(schedule: Schedule, now: datetime, grace: timedelta = GRACE) -> list[datetime]:
    """The due times to hand off a task for at `now`: none or one.

    The scheduler is on time when it reaches next_run_at at most `grace` after it: then the
    latest due time up to now runs (next_run_at itself, unless the loop fell behind a
    schedule shorter than `grace`). Later than that, the due times since next_run_at were
    missed (no server ran): catch_up `skip` runs none of them, `one` runs the latest."""
    since = schedule.next_run_at
    if schedule.paused or since is None or since > now:
        return []
    if schedule.catch_up == "skip" and now - since > grace:
        return []
    latest = _latest_due(schedule, since, now)
    return [] if latest is None else [latest]


def plan(schedule: Schedule, now: datetime, grace: timedelta = GRACE) -> Plan:
    """The runs due at `now` and the next_run_at to store after them."""
    ahead = None if schedule.paused else next_due(schedule, now)
    return Plan(runs=due_runs(schedule, now, grace), next_run_at=ahead)


def _before_end(schedule: Schedule, due: datetime) -> bool:
    return schedule.ends_at is None or due <= schedule.ends_at


def _interval_start(schedule: Schedule) -> datetime:
    every = timedelta(seconds=schedule.every_seconds or 0)
    return schedule.starts_at or schedule.created_at + every


def _interval_next(schedule: Schedule, after: datetime) -> datetime:
    start = _interval_start(schedule)
    if after < start:
        return start
    every = timedelta(seconds=schedule.every_seconds or 0)
    return start + ((after - start) // every + 1) * every


def _interval_latest(schedule: Schedule, until: datetime) -> datetime | None:
    start = _interval_start(schedule)
    if until < start:
        return None
    every = timedelta(seconds=schedule.every_seconds or 0)
    return start + ((until - start) // every) * every


def _cron_times(schedule: Schedule, after: datetime) -> Iterator[datetime]:
    """Cron due times strictly after `after`, ascending, in UTC.

    cronsim, started inside an autumn repeat's second pass, can return that day's first
    pass of a fixed-hour job, which is earlier than the start: such times are dropped."""
    if schedule.starts_at is not None:
        after = max(after, schedule.starts_at - _TICK)
    zone = ZoneInfo(schedule.timezone)
    last = after
    for local in CronSim(schedule.cron or "", after.astimezone(zone)):
        due = local.astimezone(UTC)
        if due > last:
            last = due
            yield due


def _latest_due(schedule: Schedule, since: datetime, now: datetime) -> datetime | None:
    """The latest due time in [since, now] (and not after ends_at), or None."""
    until = now if schedule.ends_at is None else min(now, schedule.ends_at)
    if schedule.cron is None:
        latest = _interval_latest(schedule, until)
    else:
        latest = _latest_cron(schedule, since, until)
    return latest if latest is not None and latest >= since else None


def _latest_cron(schedule: Schedule, since: datetime, until: datetime) -> datetime | None:
    """Search growing windows back from `until`, so a week's downtime of a per-minute cron
    walks two hours of matches rather than ten thousand."""
    floor = since - _TICK
    for window in (*_WINDOWS, None):
        start = floor if window is None else max(floor, until - window)
        latest = None
        for due in _cron_times(schedule, start):
            if due > until:
                break
            latest = due
        if latest is not None or start == floor:
            return latest
    return None


# Lineage


def lineage_cause(schedule_id: str, version: int, task_id: str, owner: str) -> JSON:
    """The result lineage's cause for a task a schedule run created."""
    return {
        "kind": "owner_schedule",
        "schedule_id": schedule_id,
        "version": version,
        "task_id": task_id,
        "owner": owner,
    }
