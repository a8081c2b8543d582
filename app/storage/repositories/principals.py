"""Persons and agents, and the capabilities agents offer."""

from __future__ import annotations

from sqlalchemy import bindparam, delete, exists, func, insert, select, update

from app.domain.principals import owner_of
from app.storage.repositories import rules
from app.storage.repositories.base import Repository, insert_missing
from app.storage.repositories.projects import members
from app.storage.statements import once
from app.storage.tables import AgentRow, CapabilityRow, ErasedPrincipalRow, PersonRow, table_of

persons = table_of(PersonRow)
agents = table_of(AgentRow)
capabilities = table_of(CapabilityRow)

_PERSON_EXISTS = select(persons.c.handle).where(persons.c.handle == bindparam("handle"))
_AGENT_EXISTS = select(agents.c.id).where(agents.c.id == bindparam("agent_id"))
_erased = table_of(ErasedPrincipalRow)
# whether the agent is registered, and whether it was erased: one statement, not two
_AGENT_STANDING = once(
    select(
        exists().where(agents.c.id == bindparam("agent_id")),
        exists().where(_erased.c.id == bindparam("agent_id")),
    )
)
# the same, with what a handoff to the agent reads next: whether the project exists, and the
# agent's owner's gate rules (one row per rule, or one row with none)
_facts = select(
    exists().where(agents.c.id == bindparam("agent_id")).label("registered"),
    exists().where(_erased.c.id == bindparam("agent_id")).label("erased"),
    exists().where(members.c.project == bindparam("project")).label("founded"),
).subquery("facts")
_HANDOFF_STANDING = once(
    select(_facts, *rules.GATE.beside.columns).select_from(
        _facts.outerjoin(rules.GATE.table, rules.GATE.table.c.owner == bindparam("owner"))
    )
)
_PERSON_CREATED = select(persons.c.created_at).where(persons.c.handle == bindparam("handle"))
_AGENT_CREATED = select(agents.c.created_at).where(agents.c.id == bindparam("agent_id"))
_AGENTS_OF = select(agents.c.id).where(agents.c.owner == bindparam("owner")).order_by(agents.c.id)
_CARD_PUBLIC = select(agents.c.card_public).where(agents.c.id == bindparam("agent_id"))
_SET_CARD_PUBLIC = (
    update(agents)
    .where(agents.c.id == bindparam("agent_id"))
    .values(card_public=bindparam("public"))
)
_COUNT_PERSONS = select(func.count()).select_from(persons)
_DROP_CAPABILITIES = delete(capabilities).where(capabilities.c.agent_id == bindparam("agent_id"))
_INSERT_CAPABILITIES = insert(capabilities)
_OFFERING = (
    select(capabilities.c.agent_id)
    .where(capabilities.c.kind == bindparam("kind"), capabilities.c.name == bindparam("name"))
    .order_by(capabilities.c.agent_id)
)
_CAPABILITIES_OF = (
    select(capabilities.c.kind, capabilities.c.name)
    .where(capabilities.c.agent_id == bindparam("agent_id"))
    .order_by(capabilities.c.kind, capabilities.c.name)
)


class Principals(Repository):
    __slots__ = ()

    async def ensure_person(self, handle: str, at: str) -> None:
        if not await self.person_exists(handle):
            await insert_missing(self.tx, persons, {"handle": handle, "created_at": at})

    async def person_exists(self, handle: str) -> bool:
        return await self.tx.one(_PERSON_EXISTS, {"handle": handle}) is not None

    async def ensure_agent(self, agent_id: str, owner: str, at: str) -> None:
        """The agent, and its owner as a person, unless they exist."""
        await self.ensure_person(owner, at)
        if not await self.agent_exists(agent_id):
            row = {"id": agent_id, "owner": owner, "created_at": at}
            await insert_missing(self.tx, agents, row)

    async def agent_exists(self, agent_id: str) -> bool:
        return await self.tx.one(_AGENT_EXISTS, {"agent_id": agent_id}) is not None

    async def agent_standing(
        self, agent_id: str, handoff_into: str | None = None
    ) -> tuple[bool, bool]:
        """(registered, erased) for the agent id. `handoff_into` (a project): the same
        statement reads what a handoff to the agent reads next, the agent's owner's gate
        rules and whether the project exists; `tx.gate_rules.of` and `tx.projects.exists`
        answer them for the rest of the transaction without reading them again."""
        if handoff_into is None:
            registered, erased = await self.tx.one(_AGENT_STANDING, {"agent_id": agent_id})
            return bool(registered), bool(erased)
        owner = owner_of(agent_id)
        params = {"agent_id": agent_id, "project": handoff_into, "owner": owner}
        rows = await self.tx.rows(_HANDOFF_STANDING, params)
        self.tx.gate_rules.known_in(owner, rows)
        facts = rows[0]._mapping
        self.tx.projects.known(handoff_into, bool(facts["founded"]))
        return bool(facts["registered"]), bool(facts["erased"])

    async def created_at(self, kind: str, principal_id: str) -> str | None:
        """When the person (kind `person`) or agent was registered; None when unknown."""
        if kind == "person":
            row = await self.tx.one(_PERSON_CREATED, {"handle": principal_id})
        else:
            row = await self.tx.one(_AGENT_CREATED, {"agent_id": principal_id})
        return row[0] if row else None

    async def agents_of(self, owner: str) -> list[str]:
        return [r[0] for r in await self.tx.rows(_AGENTS_OF, {"owner": owner})]

    async def count_persons(self) -> int:
        count: int = (await self.tx.conn.execute(_COUNT_PERSONS)).scalar_one()
        return count

    async def set_capabilities(self, agent_id: str, offered: list[tuple[str, str]]) -> None:
        """Replace what the agent offers with `offered` (kind, name) pairs."""
        await self.tx.conn.execute(_DROP_CAPABILITIES, {"agent_id": agent_id})
        if offered:
            rows = [{"agent_id": agent_id, "kind": k, "name": n} for k, n in dict.fromkeys(offered)]
            await self.tx.conn.execute(_INSERT_CAPABILITIES, rows)

    async def agents_offering(self, kind: str, name: str) -> list[str]:
        return [r[0] for r in await self.tx.rows(_OFFERING, {"kind": kind, "name": name})]

    async def capabilities_of(self, agent_id: str) -> list[tuple[str, str]]:
        rows = await self.tx.rows(_CAPABILITIES_OF, {"agent_id": agent_id})
        return [(r[0], r[1]) for r in rows]

    async def card_public(self, agent_id: str) -> bool:
        """Whether the agent's A2A card is served without a token (False if no such agent)."""
        row = await self.tx.one(_CARD_PUBLIC, {"agent_id": agent_id})
        return bool(row and row[0])

    async def set_card_public(self, agent_id: str, public: bool) -> None:
        await self.tx.conn.execute(_SET_CARD_PUBLIC, {"agent_id": agent_id, "public": public})
