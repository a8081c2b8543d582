"""An owner's rules: gate rules (who may hand its agents work) and result rules."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from sqlalchemy import Table, bindparam, delete, insert, select

from app.domain.gate import GateRule
from app.domain.policy import ResultRule
from app.storage.repositories.base import Prefixed, UnitOfWork
from app.storage.statements import once
from app.storage.tables import GateRuleRow, ResultRuleRow, table_of

gate_rules = table_of(GateRuleRow)
result_rules = table_of(ResultRuleRow)

Rule = TypeVar("Rule", GateRule, ResultRule)


class Kind(Generic[Rule]):
    """One kind of rule: its table's statements and how its row becomes a rule."""

    def __init__(self, table: Table, rule: type[Rule]) -> None:
        self.table = table
        self.rule: type[Rule] = rule  # made from a row's values by column name
        # its columns as another statement selects them beside its own (Rules.known_in)
        self.beside = Prefixed(table, "rule_")
        self.of = select(table).where(table.c.owner == bindparam("owner"))
        self.insert = insert(table)
        self.delete = delete(table).where(
            table.c.id == bindparam("rule_id"), table.c.owner == bindparam("owner")
        )


GATE: Kind[GateRule] = Kind(gate_rules, GateRule)
RESULT: Kind[ResultRule] = Kind(result_rules, ResultRule)
# a handoff reads its gate rules with the agent (Principals.agent_standing) and return_result
# its result rules with the task (Tasks.get); request_capability and reroute read them alone
once(GATE.of)


class Rules(Generic[Rule]):
    __slots__ = ("kind", "tx")

    def __init__(self, tx: UnitOfWork, kind: Kind[Rule]) -> None:
        self.tx = tx
        self.kind: Kind[Rule] = kind

    async def of(self, owner: str) -> list[Rule]:
        """The owner's rules: as read ahead in this transaction (`known`), or read now."""
        known = self.tx.read_ahead.get((self.kind.table.name, owner))
        if known is not None:
            return list(known)
        rows = await self.tx.rows(self.kind.of, {"owner": owner})
        return [self.kind.rule(**r._mapping) for r in rows]

    def known_in(self, owner: str, rows: Sequence[Any]) -> None:
        """The owner's rules, in `rows` of a statement that read something else too and
        joined the rules (`kind.beside`; a row without a rule has them null): `of` answers
        them for the rest of the transaction without reading them again."""
        values = [self.kind.beside.values(row) for row in rows]
        found = [self.kind.rule(**v) for v in values if v["id"] is not None]
        self.tx.read_ahead[(self.kind.table.name, owner)] = found

    async def insert(self, rule: Rule) -> None:
        await self.tx.conn.execute(self.kind.insert, rule.__dict__)

    async def delete(self, rule_id: str, owner: str) -> bool:
        """Whether the owner had the rule (and no longer has it)."""
        params = {"rule_id": rule_id, "owner": owner}
        return bool((await self.tx.conn.execute(self.kind.delete, params)).rowcount == 1)
