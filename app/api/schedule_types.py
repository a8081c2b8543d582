"""An owner schedule as a GraphQL type."""

from __future__ import annotations

from datetime import datetime

import strawberry

from app.api.enums import CatchUp
from app.api.node import Node
from app.api.shapes import Capability, Packet, flat
from app.domain.clock import rfc3339
from app.domain.schedules import Schedule as DomainSchedule


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
