"""Nodes: the objects a client refetches by their id alone (Relay's `node`), each as the
viewer may see it, under the same rules as the reads that list it.

An id names its kind by its shape, so that ids are unique across kinds without a prefix on
the ids the API already gives:

- a server-made id (26 characters of Crockford's base 32, a ULID: `app.domain.clock.new_id`)
  is a task, a webhook or a schedule; one generator makes them all, so no two share one;
- a handle (lower case, no `/`) is a person, an agent id (`owner/name`) an agent, as the
  `principal` query takes them: neither can be a ULID, which is upper case;
- `remote_agent:<agent id>` is a remote A2A agent: its agent id is already its principal's
  node id, so it takes a prefix that neither of the others can have (`:`).

A node the viewer may not see is None, exactly as one that does not exist; an id of no
node's shape is `invalid_input`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.domain.errors import InvalidInput
from app.domain.principals import AGENT_ID, AGENT_ID_MAX, SLUG, SLUG_MAX, Principal
from app.domain.remote_agents import RemoteAgent
from app.domain.schedules import Schedule
from app.domain.task import Task
from app.domain.webhooks import Webhook
from app.service.erasure import PrincipalInfo, principal_info
from app.storage import reads as sql
from app.storage.store import Store
from app.storage.tx import Tx

MAX_NODES = 100  # ids in one `nodes` call: a page of a board's cards and more
REMOTE_AGENT = "remote_agent:"
ULID = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}$")

Node = Task | Webhook | Schedule | PrincipalInfo | RemoteAgent


def _principal(id: str) -> bool:
    return bool(
        (SLUG.match(id) and len(id) <= SLUG_MAX) or (AGENT_ID.match(id) and len(id) <= AGENT_ID_MAX)
    )


async def _sees(tx: Tx, viewer: Principal, schedule: Schedule) -> bool:
    """As `schedules(project)` lists them: its owner's, and every member's of its project."""
    if not viewer.is_person:
        return False
    return schedule.owner == viewer.id or await tx.projects.is_member(schedule.project, viewer.id)


def check(id: str, label: str = "id") -> str:
    """The id, when it has the shape of some node's; else `invalid_input`."""
    remote = id.removeprefix(REMOTE_AGENT)
    if ULID.match(id) or _principal(id) or (remote != id and AGENT_ID.match(remote)):
        return id
    raise InvalidInput(f"{label}: {id[:80]!r} is no node's id (docs/frontends.md, Relay)")


async def nodes(store: Store, viewer: Principal, ids: Sequence[str]) -> list[Node | None]:
    """Each id's node as the viewer sees it, in the order asked; None where there is none."""
    if len(ids) > MAX_NODES:
        raise InvalidInput(f"ids: at most {MAX_NODES} at once, not {len(ids)}")
    for n, id in enumerate(ids):
        check(id, f"ids[{n}]" if len(ids) > 1 else "id")
    found: dict[str, Node] = {}
    made = list(dict.fromkeys(i for i in ids if ULID.match(i)))
    async with store.read() as tx:
        if made:
            found.update(await sql.tasks_by_id(tx, viewer, made))  # one statement for all
        for id in (i for i in made if i not in found):
            webhook = await tx.webhooks.get(id)
            if webhook is not None:
                if webhook.owner == viewer:
                    found[id] = webhook
                continue
            schedule = await tx.schedules.get(id)
            if schedule is not None and await _sees(tx, viewer, schedule):
                found[id] = schedule
        for id in (i for i in dict.fromkeys(ids) if i.startswith(REMOTE_AGENT)):
            remote = await tx.remote_agents.get(id.removeprefix(REMOTE_AGENT))
            if remote is not None and viewer.is_person and remote.owner == viewer.id:
                found[id] = remote
    for id in dict.fromkeys(ids):
        if id not in found and _principal(id):  # anyone authenticated sees a principal
            info = await principal_info(store, id)
            if info is not None:
                found[id] = info
    return [found.get(i) for i in ids]
