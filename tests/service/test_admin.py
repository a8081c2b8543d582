"""Owner administration: agents, gate rules and result rules belong to a person."""

from __future__ import annotations

import pytest
from factory import ALICE, BOB, CODER, register_agents

from app.domain.errors import Forbidden, InvalidInput, NotFound
from app.service import admin
from app.service.inputs import GateRuleInput, ResultRuleInput


async def test_an_agent_administers_nothing(store) -> None:
    await register_agents(store)
    with pytest.raises(Forbidden, match="only a person"):
        await admin.register_agent(store, CODER, "minion")
    with pytest.raises(Forbidden):
        await admin.set_gate_rule(store, CODER, GateRuleInput(effect="allow"))
    with pytest.raises(Forbidden):
        await admin.set_result_rule(store, CODER, ResultRuleInput(policy="auto_accept"))


@pytest.mark.parametrize(
    "fields",
    [
        pytest.param({"effect": "maybe"}, id="unknown-effect"),
        pytest.param({"effect": "allow", "project": "Not A Slug"}, id="bad-project"),
        pytest.param({"effect": "allow", "requester_agent": "alice"}, id="bad-requester-agent"),
        pytest.param({"effect": "allow", "requester_owner": "Alice"}, id="bad-requester-owner"),
        pytest.param({"effect": "allow", "deliverable_type": "poem"}, id="bad-deliverable-type"),
        pytest.param({"effect": "allow", "capability_kind": "magic"}, id="bad-capability-kind"),
        pytest.param({"effect": "allow", "priority": 10**7}, id="priority-too-high"),
    ],
)
async def test_a_malformed_gate_rule_is_invalid_input(store, fields: dict) -> None:
    with pytest.raises(InvalidInput):
        await admin.set_gate_rule(store, BOB, GateRuleInput(**fields))


@pytest.mark.parametrize(
    "fields",
    [
        pytest.param({"policy": "vibes"}, id="unknown-policy"),
        pytest.param({"policy": "auto_accept", "assignee": "bob"}, id="bad-assignee"),
    ],
)
async def test_a_malformed_result_rule_is_invalid_input(store, fields: dict) -> None:
    with pytest.raises(InvalidInput):
        await admin.set_result_rule(store, ALICE, ResultRuleInput(**fields))


async def test_an_owner_deletes_only_its_own_rules(store) -> None:
    gate_rule = await admin.set_gate_rule(store, BOB, GateRuleInput(effect="allow"))
    result_rule = await admin.set_result_rule(store, ALICE, ResultRuleInput(policy="auto_accept"))
    with pytest.raises(NotFound):
        await admin.delete_gate_rule(store, ALICE, gate_rule.id)
    with pytest.raises(NotFound):
        await admin.delete_result_rule(store, BOB, result_rule.id)
    assert await admin.delete_gate_rule(store, BOB, gate_rule.id)
    assert await admin.delete_result_rule(store, ALICE, result_rule.id)


async def test_registering_an_agent_again_replaces_its_capabilities(store) -> None:
    await admin.register_agent(store, BOB, "coder", [{"kind": "repo", "name": "a"}])
    await admin.register_agent(store, BOB, "coder", [{"kind": "mcp", "name": "b"}])
    async with store.read() as tx:
        assert await tx.principals.capabilities_of("bob/coder") == [("mcp", "b")]


async def test_adding_a_member_to_an_unknown_project_is_not_found(store) -> None:
    with pytest.raises(NotFound, match="no project nowhere"):
        await admin.add_project_member(store, ALICE, "nowhere", "bob")
