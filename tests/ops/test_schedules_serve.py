"""Owner schedules in `prickle serve`: catch_up after the server was down, and a clean stop.

Downtime is made by stopping the server and moving the schedule's times back in the
database by two hours, as if it had been down that long, before starting it again.
"""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest
from factory import PACKET
from server import persons
from sqlalchemy import select, update

from app.domain.clock import now, parse_rfc3339, rfc3339
from app.storage.repositories.schedules import schedules
from app.storage.store import Store

DOWN = timedelta(hours=2)


def _schedule(server: Any, owner: str, **fields: Any) -> dict[str, Any]:
    server.register(owner, "ticker")
    made = {"project": "ticks", "assignee": "admin/ticker", "packet": PACKET, **fields}
    return server.run_data("mutations/create_schedule", {"input": made}, owner)["create_schedule"]


def _mine(server: Any, owner: str) -> dict[str, Any]:
    [found] = server.run_data("queries/schedules", {}, owner)["schedules"]
    return found


async def _move_back(url: str, schedule_id: str, made: dict[str, Any]) -> None:
    """As if the schedule had been made, and every server stopped, two hours earlier."""
    store = Store(url)
    try:
        async with store.write() as tx:
            moved = {
                name: rfc3339(parse_rfc3339(made[name]) - DOWN)
                for name in ("created_at", "next_run_at")
            }
            await tx.conn.execute(
                update(schedules).where(schedules.c.id == schedule_id).values(**moved)
            )
    finally:
        await store.close()


@pytest.mark.parametrize("catch_up", ["skip", "one"])
async def test_catch_up_after_the_server_was_down(start_server, database_url, catch_up) -> None:  # type: ignore[no-untyped-def]
    server = start_server()
    owner = server.owner_token
    made = _schedule(server, owner, every_seconds=600, catch_up=catch_up)
    server.stop()
    await _move_back(database_url, made["id"], made)
    again = start_server()
    deadline = time.monotonic() + 10
    while (found := _mine(again, owner))["next_run_at"] == rfc3339(
        parse_rfc3339(made["next_run_at"]) - DOWN
    ):
        assert time.monotonic() < deadline, "the restarted server did not look at the schedule"
        time.sleep(0.1)
    anchor = parse_rfc3339(made["created_at"]) - DOWN + timedelta(seconds=600)
    next_run_at = parse_rfc3339(found["next_run_at"])
    assert next_run_at > parse_rfc3339(made["created_at"])  # ahead of now, on the phase
    assert (next_run_at - anchor) % timedelta(seconds=600) == timedelta(0)
    tasks = again.run_data("queries/tasks", {"project": "ticks"}, owner)["tasks"]
    if catch_up == "skip":
        assert (found["runs"], tasks["total_count"]) == (0, 0)
    else:
        assert (found["runs"], tasks["total_count"]) == (1, 1)
        assert found["last_run_at"] == rfc3339(next_run_at - timedelta(seconds=600))
        assert found["last_task_id"] == tasks["edges"][0]["node"]["id"]


def test_a_server_running_schedules_stops_cleanly(start_server) -> None:  # type: ignore[no-untyped-def]
    server = start_server()
    owner = server.owner_token
    _schedule(server, owner, every_seconds=1)
    deadline = time.monotonic() + 15
    while _mine(server, owner)["runs"] < 2:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    server.stop()  # SIGTERM: uvicorn runs the lifespan's shutdown, then exits by the signal
    output = server.output()
    assert "Application shutdown complete" in output, output
    assert "Traceback" not in output and "ERROR" not in output, output


BAD_TIMES = {
    "year 1 at +14:00": {"every_seconds": 5, "starts_at": "0001-01-01T00:00:00+14:00"},
    "year 1 in UTC": {"every_seconds": 5, "starts_at": "0001-01-01T00:00:00Z"},
    "ends in year 1": {"every_seconds": 5, "ends_at": "0001-01-01T00:00:01Z"},
    "year 9999 at -12:00": {"every_seconds": 5, "starts_at": "9999-12-31T23:59:59-12:00"},
    "no cron time before year 10000": {"cron": "0 0 1 1 *", "starts_at": "9999-06-01T00:00:00Z"},
}
BAD_RULES = {
    "bad cron": {"cron": "61 * * * *"},
    "both cron and every_seconds": {"cron": "* * * * *", "every_seconds": 5},
    "neither cron nor every_seconds": {},
    "unknown zone": {"every_seconds": 5, "timezone": "Mars/Olympus"},
    "ends before starts": {
        "every_seconds": 5,
        "starts_at": "2027-01-02T00:00:00Z",
        "ends_at": "2027-01-01T00:00:00Z",
    },
}


@pytest.mark.parametrize(
    "fields", [*BAD_TIMES.values(), *BAD_RULES.values()], ids=[*BAD_TIMES, *BAD_RULES]
)
def test_an_invalid_schedule_is_refused_over_the_api_and_nothing_is_made(
    api_server: Any, fields: dict[str, Any]
) -> None:
    """Times outside 1970..9000 would not survive storage; they are refused like the rest,
    and the owner's schedules, and the scheduler, go on answering."""
    owner = api_server.owner_token
    api_server.register(owner, "ticker")
    made = {"project": "refused", "assignee": "admin/ticker", "packet": PACKET, **fields}
    body = api_server.run("mutations/create_schedule", {"input": made}, owner)
    assert body["data"] is None and body["errors"][0]["extensions"] == {"code": "invalid_input"}
    assert api_server.run_data("queries/schedules", {"project": "refused"}, owner) == {
        "schedules": []
    }
    assert "Traceback" not in api_server.output()


def test_a_cron_longer_than_its_200_characters_is_refused_on_every_backend(
    api_server: Any,
) -> None:
    """The stored column holds 200 characters: one more is `invalid_input` (PostgreSQL
    would otherwise refuse the row, SQLite keep it), and exactly 200 is kept whole."""
    owner = api_server.owner_token
    api_server.register(owner, "ticker")
    minutes = ",".join(str(m) for m in range(60))
    longest = f"{minutes} 0,1,2,3,4,5,6,7,8,9,10,2 * * *"
    assert len(longest) == 200
    made = {"project": "long-cron", "assignee": "admin/ticker", "packet": PACKET}
    for too_long in (longest + " ", ",".join(["0"] * 10_000) + " * * * *"):
        body = api_server.run(
            "mutations/create_schedule", {"input": {**made, "cron": too_long}}, owner
        )
        [error] = body["errors"]
        assert error["extensions"] == {"code": "invalid_input"}
        assert error["message"] == f"cron: at most 200 characters, not {len(too_long)}"
    kept = api_server.run_data(
        "mutations/create_schedule", {"input": {**made, "cron": longest}}, owner
    )["create_schedule"]
    assert kept["cron"] == longest
    [listed] = api_server.run_data("queries/schedules", {"project": "long-cron"}, owner)[
        "schedules"
    ]
    assert listed["cron"] == longest


async def _corrupt(url: str, schedule_id: str, **values: Any) -> None:
    """Write the schedule's row as an older server could have left it."""
    store = Store(url)
    try:
        async with store.write() as tx:
            await tx.conn.execute(
                update(schedules).where(schedules.c.id == schedule_id).values(**values)
            )
    finally:
        await store.close()


async def _rows(url: str, *schedule_ids: str) -> dict[str, Any]:
    store = Store(url)
    try:
        async with store.read() as tx:
            found = await tx.rows(select(schedules).where(schedules.c.id.in_(schedule_ids)))
    finally:
        await store.close()
    return {row.id: row for row in found}


async def test_a_schedule_that_cannot_run_stops_no_other_owners_schedule(  # type: ignore[no-untyped-def]
    start_server, database_url
) -> None:
    """One schedule whose stored times do not parse, another whose stored time zone no
    longer exists: each says why on its row and is set aside, and another owner's schedule
    still hands off its tasks."""
    server = start_server()
    owner = server.owner_token
    server.register(owner, "ticker")
    old = persons(server, "olduser")["olduser"]
    due = rfc3339(now() - timedelta(minutes=1))
    made = {"assignee": "admin/ticker", "packet": PACKET, "every_seconds": 3600}
    unreadable, no_zone, never_due = (
        server.run_data("mutations/create_schedule", {"input": {**made, "project": p}}, old)[
            "create_schedule"
        ]["id"]
        for p in ("unreadable", "no-zone", "never-due")
    )
    await _corrupt(
        database_url, unreadable, created_at="Thu, 03 Dec 2026 14:00:00 GMT", next_run_at=due
    )
    await _corrupt(
        database_url,
        no_zone,
        cron="* * * * *",
        every_seconds=None,
        timezone="Mars/Olympus",
        next_run_at=due,
    )
    # an unreadable next_run_at that sorts after every real one: never claimed, in no one's way
    await _corrupt(database_url, never_due, next_run_at="Thu, 03 Dec 2026 14:00:00 GMT")
    good = _schedule(server, owner, every_seconds=1)
    deadline = time.monotonic() + 15
    while _mine(server, owner)["runs"] < 1:
        assert time.monotonic() < deadline, "the other owner's schedule never ran"
        time.sleep(0.1)
    tasks = server.run_data("queries/tasks", {"project": "ticks"}, owner)["tasks"]
    assert tasks["total_count"] >= 1 and good["project"] == "ticks"
    rows = await _rows(database_url, unreadable, no_zone)
    assert "could not read the stored schedule (ValueError" in rows[unreadable].last_error
    assert "run failed (ZoneInfoNotFoundError" in rows[no_zone].last_error
    for row in rows.values():
        assert row.runs == 0 and row.next_run_at > due  # set aside: not due again at once
    [shown] = server.run_data("queries/schedules", {"project": "no-zone"}, old)["schedules"]
    assert shown["last_error"] == rows[no_zone].last_error and shown["runs"] == 0
    while _mine(server, owner)["runs"] < 3:  # each round after the first one too
        assert time.monotonic() < deadline + 10, "the other owner's schedule stopped"
        time.sleep(0.1)
    assert server.alive() and "round failed" not in server.output()
