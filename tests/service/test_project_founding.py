"""Two owners founding the same project at the same instant: exactly one administers it.

Round after round, an agent of alice and an agent of bob each hand a task into the same
fresh project at once (on PostgreSQL through two `prickle serve` processes sharing the
database; on SQLite through one). Both tasks are made, and the project has exactly one
administrator, one of the two owners; the other is no member of it.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from factory import PACKET
from server import Server, persons
from sqlalchemy import select

from app.storage.repositories.projects import members
from app.storage.store import Store

ROUNDS = 40
POSTGRES = os.environ.get("PRICKLE_TEST_BACKEND", "sqlite") == "postgres"


def _handoff(server: Server, token: str, project: str, assignee: str) -> str:
    variables = {"input": {"project": project, "assignee": assignee, "packet": PACKET}}
    return str(server.run_data("mutations/handoff", variables, token)["handoff"]["id"])


async def _members(url: str) -> list[tuple[str, str, str]]:
    store = Store(url)
    try:
        async with store.read() as tx:
            rows = await tx.rows(select(members.c.project, members.c.handle, members.c.role))
    finally:
        await store.close()
    return [(r[0], r[1], r[2]) for r in rows]


async def test_of_two_owners_founding_one_project_at_once_exactly_one_administers_it(
    start_server: Any, database_url: str
) -> None:
    first = start_server()
    second = start_server() if POSTGRES else first
    tokens = persons(first, "alice", "bob")
    agents = {o: first.register(tokens[o], "founder") for o in ("alice", "bob")}
    for owner in ("alice", "bob"):
        first.register(tokens[owner], "worker")
    sides = [(first, agents["alice"], "alice/worker"), (second, agents["bob"], "bob/worker")]
    projects = [f"founded-{n}" for n in range(ROUNDS)]
    with ThreadPoolExecutor(2) as pool:
        for project in projects:
            together = threading.Barrier(2)

            def found(
                side: tuple[Server, str, str],
                project: str = project,
                together: threading.Barrier = together,
            ) -> str:
                server, token, assignee = side
                together.wait(10)
                return _handoff(server, token, project, assignee)

            assert all(list(pool.map(found, sides)))
    rows = await _members(database_url)
    for project in projects:
        admins = [h for p, h, role in rows if p == project and role == "admin"]
        assert len(admins) == 1 and admins[0] in ("alice", "bob"), (project, admins)
        assert [h for p, h, _ in rows if p == project] == admins, project
