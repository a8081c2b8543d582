"""An owner's rules: gate rules (who may hand its agents work) and result rules."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from sqlalchemy import Table, bindparam, delete, insert, select

from app.domain.gate import GateRule
from app.domain.policy import ResultRule
from app.storage import mapping
from app.storage.direct import direct
from app.storage.tables import GateRuleRow, ResultRuleRow, table_of

if TYPE_CHECKING:
    from app.storage.store import Tx

gate_rules = table_of(GateRuleRow)
result_rules = table_of(ResultRuleRow)

Rule = TypeVar("Rule", GateRule, ResultRule)


class Kind(Generic[Rule]):
    """One kind of rule: its table's statements and how its row becomes a rule."""

    def __init__(self, table: Table, from_row: Callable[[Any], Rule]) -> None:
        self.table = table
        self.from_row: Callable[[Any], Rule] = from_row
        self.of = select(table).where(table.c.owner == bindparam("owner"))
        self.insert = insert(table)
        self.delete = delete(table).where(
            table.c.id == bindparam("rule_id"), table.c.owner == bindparam("owner")
        )


GATE: Kind[GateRule] = Kind(gate_rules, mapping.gate_rule_from_row)
RESULT: Kind[ResultRule] = Kind(result_rules, mapping.result_rule_from_row)
# a handoff reads its gate rules with the agent (Principals.agent_standing) and return_result
# its result rules with the task (Tasks.get); request_capability and reroute read them alone
direct(GATE.of)


class Rules(Generic[Rule]):
    __slots__ = ("kind", "tx")

    def __init__(self, tx: Tx, kind: Kind[Rule]) -> None:
        self.tx = tx
        self.kind: Kind[Rule] = kind

    async def of(self, owner: str) -> list[Rule]:
        """The owner's rules: as read ahead in this transaction (`known`), or read now."""
        known = self.tx.read_ahead.get((self.kind.table.name, owner))
        if known is not None:
            return list(known)
        rows = await self.tx.rows(self.kind.of, {"owner": owner})
        return [self.kind.from_row(r) for r in rows]

    def known(self, owner: str, rules: list[Rule]) -> None:
        """The owner's rules, read by a statement that read something else too: `of` answers
        them for the rest of the transaction without reading them again."""
        self.tx.read_ahead[(self.kind.table.name, owner)] = rules

    async def insert(self, rule: Rule) -> None:
        await self.tx.conn.execute(self.kind.insert, rule.__dict__)

    async def delete(self, rule_id: str, owner: str) -> bool:
        """Whether the owner had the rule (and no longer has it)."""
        params = {"rule_id": rule_id, "owner": owner}
        return bool((await self.tx.conn.execute(self.kind.delete, params)).rowcount == 1)
