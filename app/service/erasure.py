"""Erasure: `erase_agent` by the agent's owner, `erase_person` by that person itself (or,
with no actor, by the operator: `prickle erase`), and `principal(id)`.

One transaction: refused (conflict, nothing changed) while the principal, or for a person
any of its agents, is assigned a task that has not ended; otherwise every token of the
erased principals is revoked, they are recorded in erased_principals (an id there can never
act, be handed work, be named in a rule, or be registered again), the agents' capabilities
are dropped (and a remote agent's card and credential), an erased person's owner schedules
are deleted, and every task row and result revision naming one of them in `requested_by`,
`result.decided_by` or `result.verified_by` gains `erased: true` there. The event log is not
rewritten. After the commit this process forgets the revoked tokens and closes their
WebSocket connections; other processes hear of it from the commit (as the
bearer tokens' `Credentials` says).
"""

from __future__ import annotations

from dataclasses import dataclass

from app.domain.clock import now, rfc3339
from app.domain.erasure import check_no_open_work, erased_together, mark_erased
from app.domain.errors import Conflict, Forbidden, InvalidInput, NotFound, ProtocolError
from app.domain.principals import (
    AGENT_ID,
    SLUG,
    Principal,
    agent,
    check_agent_id,
    check_handle,
    owner_of,
    person,
)
from app.service.auth import announce_revoked
from app.service.credentials import revoke_all
from app.storage.store import Store
from app.storage.tx import Tx


@dataclass(frozen=True)
class Erasure:
    principal: str  # the handle or agent id erased (a person's agents went with it)
    erased_at: str
    tokens_revoked: int
    tasks_marked: int


@dataclass(frozen=True)
class PrincipalInfo:
    kind: str
    id: str
    owner: str
    capabilities: list[tuple[str, str]]  # (kind, name)
    erased: bool
    created_at: str


async def erase_agent(store: Store, actor: Principal | None, agent_id: str) -> Erasure:
    """Erase an agent: by its owner (`actor` None: the operator)."""
    erased = agent(check_agent_id(agent_id, "agent_id"))
    if actor is not None and not (actor.is_person and actor.id == erased.owner):
        raise Forbidden(f"only {erased.owner} erases its agent {erased.id}")
    return await _erase(store, erased)


async def erase_person(store: Store, actor: Principal | None, handle: str) -> Erasure:
    """Erase a person and its agents: by that person itself (`actor` None: the operator)."""
    erased = person(check_handle(handle))
    if actor is not None and actor != erased:
        raise Forbidden(f"only {erased.id} erases itself")
    return await _erase(store, erased)


async def _erase(store: Store, principal: Principal) -> Erasure:
    at = rfc3339(now())
    async with store.write() as tx:
        ids = await _erasable(tx, principal)
        owner = principal.id if principal.is_person else None
        check_no_open_work(principal, await tx.erasures.open_work(ids, owner))
        revoked = await revoke_all(tx, ids, at)
        already = await tx.erasures.among(ids)  # a person's agents erased before it
        fresh = [i for i in ids if i not in already]
        await tx.erasures.record([(_kind(i), i) for i in fresh], at)
        for agent_id in (i for i in fresh if "/" in i):
            await tx.principals.set_capabilities(agent_id, [])
            await tx.remote_agents.delete(agent_id)  # with the credential sent to it
        if principal.is_person:
            for schedule in await tx.schedules.of(principal.id, None):
                await tx.schedules.delete(schedule.id)
        marked = await _mark_tasks(tx, ids, owner)
    announce_revoked(store, revoked)
    return Erasure(principal.id, at, len(revoked), marked)


async def _erasable(tx: Tx, principal: Principal) -> list[str]:
    """The ids erased together: the principal's, and a person's agents'. not_found for a
    principal never registered, conflict for one already erased."""
    if await tx.principals.created_at(principal.kind, principal.id) is None:
        raise NotFound(f"no {principal.kind} {principal.id}")
    if await tx.erasures.contains(principal.id):
        raise Conflict(f"{principal.id} is already erased")
    if not principal.is_person:
        return [principal.id]
    return erased_together(principal.id, await tx.principals.agents_of(principal.id))


def _kind(principal_id: str) -> str:
    return "agent" if "/" in principal_id else "person"


async def _mark_tasks(tx: Tx, ids: list[str], owner: str | None) -> int:
    """`erased: true` on every reference to the ids in task rows and result revisions; how
    many tasks changed. Tasks that name none of them are not written."""
    erased = frozenset(ids)
    changed: list[str] = []
    for task in await tx.erasures.referring_tasks(ids, owner):
        before = task.to_protocol()
        after = mark_erased(before, erased)
        if after != before:
            await tx.erasures.set_references(task.id, after["requested_by"], after["result"])
            changed.append(task.id)
    for result_id, body in await tx.erasures.result_bodies(changed):
        marked = mark_erased({"result": body}, erased)["result"]
        if marked != body:
            await tx.erasures.set_result_body(result_id, marked)
    return len(changed)


# What other verbs ask: an erased principal can no longer be handed work, be named in a
# rule, be registered again, or get a token.


async def refuse_erased(
    tx: Tx, principal_id: str | None, what: str, error: type[ProtocolError] = InvalidInput
) -> None:
    """Refuse (`error`, invalid_input unless told) when the id names an erased principal."""
    if principal_id is not None and await tx.erasures.contains(principal_id):
        raise error(f"{what}: {principal_id} was erased")


async def principal_info(store: Store, principal_id: str) -> PrincipalInfo | None:
    """A person or agent by its id, erased ones too; None when unknown."""
    kind = _checked_kind(principal_id)
    async with store.read() as tx:
        created_at = await tx.principals.created_at(kind, principal_id)
        if created_at is None:
            return None
        offered = [] if kind == "person" else await tx.principals.capabilities_of(principal_id)
        erased = await tx.erasures.contains(principal_id)
    return PrincipalInfo(kind, principal_id, owner_of(principal_id), offered, erased, created_at)


def _checked_kind(principal_id: str) -> str:
    if isinstance(principal_id, str) and len(principal_id) <= 79:
        if SLUG.match(principal_id) and len(principal_id) <= 39:
            return "person"
        if AGENT_ID.match(principal_id):
            return "agent"
    raise InvalidInput(f"id: {str(principal_id)[:80]!r} is neither a handle nor an agent id")
