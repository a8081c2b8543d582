"""The permission gate of the assignee's owner: route, hold for approval, or reject."""

from __future__ import annotations

import pytest
from factory import (
    ALICE,
    BOB,
    CAROL,
    CODER,
    PLANNER,
    events_of,
    give,
    packet,
    register_agents,
    snapshot,
)
from sqlalchemy import select

from app.domain.errors import NotFound
from app.domain.gate import Decision, GateRule, Request, decide
from app.service import admin, creation, verbs
from app.service.inputs import (
    GateRuleInput,
    HandoffInput,
    RequestCapabilityInput,
)
from app.storage.repositories.approvals import approvals

REQUEST = Request(
    assignee_owner="bob",
    requester_owner="alice",
    requester_agent="alice/planner",
    project="web",
    deliverable_type="code",
    capability_kind="repo",
)


def rule(id: str, effect: str, priority: int = 0, owner: str = "bob", **match: str) -> GateRule:
    return GateRule(
        id=id,
        owner=owner,
        effect=effect,
        priority=priority,
        created_at=f"2026-01-01T00:00:0{id[-1]}Z",
        **match,
    )


# The decision itself (domain).


def test_the_same_owner_routes_before_any_rule_is_read() -> None:
    same = Request(**{**REQUEST.__dict__, "requester_owner": "bob"})
    assert decide(same, [rule("r1", "deny", 100)]) == Decision("routed", basis="same_owner")


def test_the_highest_priority_matching_rule_decides() -> None:
    rules = [rule("r1", "allow", 1), rule("r2", "deny", 5), rule("r3", "hold", 3)]
    decision = decide(REQUEST, rules)
    assert (decision.outcome, decision.rule_id) == ("rejected", "r2")
    assert "r2" in (decision.reason or "")


def test_an_allow_rule_routes_with_basis_rule_and_its_id() -> None:
    assert decide(REQUEST, [rule("r1", "allow")]) == Decision("routed", basis="rule", rule_id="r1")


def test_a_hold_rule_holds_for_the_owner() -> None:
    decision = decide(REQUEST, [rule("r1", "hold"), rule("r2", "allow", -1)])
    assert (decision.outcome, decision.to_state, decision.rule_id) == ("held", "waiting", "r1")


def test_among_rules_of_equal_priority_the_older_decides() -> None:
    assert decide(REQUEST, [rule("r2", "deny"), rule("r1", "allow")]).outcome == "routed"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("project", "web"),
        ("requester_owner", "alice"),
        ("requester_agent", "alice/planner"),
        ("deliverable_type", "code"),
        ("capability_kind", "repo"),
    ],
)
def test_a_rule_matches_on_each_field_it_sets(field: str, value: str) -> None:
    assert decide(REQUEST, [rule("r1", "allow", **{field: value})]).outcome == "routed"
    other = "other-value" if field != "requester_agent" else "alice/other"
    assert decide(REQUEST, [rule("r1", "allow", **{field: other})]).outcome == "held"


def test_a_rule_that_sets_no_match_field_matches_anything() -> None:
    assert decide(REQUEST, [rule("r1", "deny")]).outcome == "rejected"


def test_a_rule_needs_every_field_it_sets_to_match() -> None:
    both = rule("r1", "allow", project="web", deliverable_type="doc")
    assert decide(REQUEST, [both]).outcome == "held"


def test_a_rule_of_another_owner_is_ignored() -> None:
    decision = decide(REQUEST, [rule("r1", "allow", owner="carol")])
    assert decision == Decision("held", reason="no gate rule of bob matched")


# The gate at handoff, request_capability and reroute (service).


async def test_a_handoff_to_an_agent_of_the_same_owner_is_routed(store) -> None:
    await register_agents(store)
    task = await give(store, by=BOB)
    assert (task.state, task.gate.basis, task.gate.rule_id) == ("routed", "same_owner", None)
    task = await creation.handoff(store, CODER, HandoffInput("work", "bob/helper", packet()))
    assert (task.state, task.gate.basis) == ("routed", "same_owner")


async def test_an_allow_rule_of_the_assignee_owner_routes_the_handoff(store) -> None:
    await register_agents(store)
    allow = await admin.set_gate_rule(
        store, BOB, GateRuleInput(effect="allow", requester_owner="alice")
    )
    task = await give(store)
    assert (task.state, task.gate.basis, task.gate.rule_id) == ("routed", "rule", allow.id)
    assert task.gate.approval_id is None


async def test_a_deny_rule_rejects_the_handoff_and_the_reason_names_it(store) -> None:
    await register_agents(store)
    await admin.set_gate_rule(store, BOB, GateRuleInput(effect="allow", priority=1))
    deny = await admin.set_gate_rule(
        store, BOB, GateRuleInput(effect="deny", priority=2, project="work")
    )
    task = await give(store)
    assert (task.state, task.waiting_on, task.gate.rule_id) == ("rejected", None, deny.id)
    gated = (await events_of(store, task.id))[-1]
    assert deny.id in (gated.note or "")


async def test_a_hold_rule_holds_the_handoff_for_the_owner_with_an_approval(store) -> None:
    await register_agents(store)
    await admin.set_gate_rule(store, BOB, GateRuleInput(effect="hold", deliverable_type="code"))
    task = await give(store)
    assert (task.state, task.waiting_on) == ("waiting", "owner_approval")
    assert task.gate.approval_id


async def test_with_no_matching_rule_the_handoff_is_held_for_the_owner(store) -> None:
    await register_agents(store)
    await admin.set_gate_rule(store, BOB, GateRuleInput(effect="allow", project="elsewhere"))
    # carol's rule: not bob's gate
    await admin.set_gate_rule(store, CAROL, GateRuleInput(effect="allow"))
    task = await give(store)
    assert (task.state, task.waiting_on, task.gate.basis) == ("waiting", "owner_approval", None)
    async with store.read() as tx:
        [row] = await tx.rows(select(approvals).where(approvals.c.task_id == task.id))
    assert (row.id, row.owner, row.status) == (task.gate.approval_id, "bob", "pending")


async def test_approving_a_held_handoff_routes_it_with_basis_approval(store) -> None:
    await register_agents(store)
    task = await give(store)
    routed = await verbs.approve_handoff(store, BOB, task.id, reason="ok")
    assert (routed.state, routed.waiting_on) == ("routed", None)
    assert (routed.gate.basis, routed.gate.approval_id) == ("approval", task.gate.approval_id)
    async with store.read() as tx:
        [row] = await tx.rows(select(approvals).where(approvals.c.task_id == task.id))
    assert (row.status, row.reason) == ("approved", "ok")


async def test_denying_a_held_handoff_rejects_it(store) -> None:
    await register_agents(store)
    task = await give(store)
    rejected = await verbs.deny_task(store, BOB, task.id, reason="no")
    assert (rejected.state, rejected.waiting_on) == ("rejected", None)
    async with store.read() as tx:
        [row] = await tx.rows(select(approvals).where(approvals.c.task_id == task.id))
    assert row.status == "denied"


async def test_a_deleted_rule_no_longer_decides(store) -> None:
    await register_agents(store)
    allow = await admin.set_gate_rule(store, BOB, GateRuleInput(effect="allow"))
    assert await admin.delete_gate_rule(store, BOB, allow.id)
    assert (await give(store)).state == "waiting"
    with pytest.raises(NotFound):
        await admin.delete_gate_rule(store, BOB, allow.id)


async def test_request_capability_picks_an_agent_offering_it_and_records_the_route(store) -> None:
    await register_agents(store)
    await admin.set_gate_rule(store, BOB, GateRuleInput(effect="allow", capability_kind="repo"))
    capability = {"kind": "repo", "name": "prickle"}
    inp = RequestCapabilityInput(project="work", packet=packet(), capability=capability)
    task = await creation.request_capability(store, PLANNER, inp)
    assert (task.assignee, task.state) == ("bob/coder", "routed")
    assert task.route == {"via": "request_capability", "capability": capability}
    assert (await give(store)).route == {"via": "handoff"}


async def test_request_capability_prefers_an_agent_of_the_callers_own_owner(store) -> None:
    await register_agents(store)
    await admin.register_agent(store, ALICE, "builder", [{"kind": "repo", "name": "prickle"}])
    inp = RequestCapabilityInput(
        project="work", packet=packet(), capability={"kind": "repo", "name": "prickle"}
    )
    task = await creation.request_capability(store, PLANNER, inp)
    assert (task.assignee, task.gate.basis) == ("alice/builder", "same_owner")


async def test_request_capability_nobody_offers_is_not_found_and_creates_no_task(store) -> None:
    await register_agents(store)
    before = await snapshot(store)
    capability = {"kind": "mcp", "name": "nope"}
    inp = RequestCapabilityInput(project="work", packet=packet(), capability=capability)
    with pytest.raises(NotFound, match="no agent offers mcp 'nope'"):
        await creation.request_capability(store, PLANNER, inp)
    assert await snapshot(store) == before


async def test_reroute_runs_the_gate_of_the_new_assignees_owner(store) -> None:
    await register_agents(store)
    await admin.set_gate_rule(store, BOB, GateRuleInput(effect="allow"))
    task = await give(store)
    await verbs.hand_back(store, CODER, task.id, reason="not mine")

    held = await verbs.reroute(store, PLANNER, task.id, assignee="carol/spy")
    assert (held.assignee, held.state, held.waiting_on) == (
        "carol/spy",
        "waiting",
        "owner_approval",
    )
    async with store.read() as tx:
        rows = await tx.rows(select(approvals).where(approvals.c.task_id == task.id))
    assert [(r.owner, r.status) for r in rows] == [("carol", "pending")]
    routed = await verbs.approve_handoff(store, CAROL, task.id)
    assert (routed.state, routed.gate.basis) == ("routed", "approval")


async def test_reroute_to_an_owner_who_denies_rejects_the_task(store) -> None:
    await register_agents(store)
    await admin.set_gate_rule(store, BOB, GateRuleInput(effect="allow"))
    await admin.set_gate_rule(
        store, CAROL, GateRuleInput(effect="deny", requester_agent="alice/planner")
    )
    task = await give(store)
    await verbs.hand_back(store, CODER, task.id)
    rejected = await verbs.reroute(store, PLANNER, task.id, assignee="carol/spy")
    assert (rejected.state, rejected.assignee) == ("rejected", "carol/spy")


async def test_reroute_by_capability_sets_the_route_and_the_gate_decides(store) -> None:
    await register_agents(store)
    await admin.set_gate_rule(store, BOB, GateRuleInput(effect="allow"))
    task = await give(store)
    await verbs.hand_back(store, CODER, task.id)
    capability = {"kind": "repo", "name": "prickle"}
    rerouted = await verbs.reroute(store, PLANNER, task.id, capability=capability)
    assert rerouted.route == {"via": "request_capability", "capability": capability}
    assert (rerouted.state, rerouted.gate.basis) == ("routed", "rule")


async def test_a_handoff_to_an_agent_nobody_registered_is_not_found(store) -> None:
    await register_agents(store)
    before = await snapshot(store)
    with pytest.raises(NotFound, match="no agent bob/ghost"):
        await give(store, assignee="bob/ghost")
    assert await snapshot(store) == before


async def test_cancelling_a_held_task_closes_its_approval(store) -> None:
    await register_agents(store)
    task = await give(store)
    cancelled = await verbs.cancel_task(store, PLANNER, task.id)
    assert (cancelled.state, cancelled.waiting_on) == ("cancelled", None)
    async with store.read() as tx:
        [row] = await tx.rows(select(approvals).where(approvals.c.task_id == task.id))
    assert row.status == "cancelled"
