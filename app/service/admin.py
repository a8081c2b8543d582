"""Owner administration: agents, gate rules, result rules, project members; and the
operator's `provision_token` (`prickle token create`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.domain.clock import new_id, now, rfc3339
from app.domain.errors import Conflict, Forbidden, NotFound
from app.domain.gate import GateRule
from app.domain.policy import ResultRule
from app.domain.principals import (
    Principal,
    agent,
    check_agent_id,
    check_handle,
    check_project,
    owner_of,
)
from app.domain.tokens import check_expires_in, check_label
from app.domain.types import JSON
from app.service.auth import NewToken, issue
from app.service.erasure import refuse_erased
from app.service.inputs import CapabilityInput, GateRuleInput, ResultRuleInput, check_capability
from app.storage.store import Store
from app.storage.tx import Tx


@dataclass(frozen=True)
class Registration:
    agent_id: str
    token: str


def _owner(actor: Principal) -> str:
    if not actor.is_person:
        raise Forbidden("only a person (an owner) administers agents, rules and projects")
    return actor.id


async def register_agent(
    store: Store,
    actor: Principal,
    name: str,
    capabilities: Sequence[CapabilityInput | JSON] | None = None,
) -> Registration:
    """Register (or re-register) `<caller>/<name>` with its capabilities and a new token."""
    owner = _owner(actor)
    agent_id = check_agent_id(f"{owner}/{check_handle(name, 'name')}")
    offered = [(c["kind"], c["name"]) for c in map(check_capability, capabilities or [])]
    moment = now()
    async with store.write() as tx:
        await refuse_erased(tx, agent_id, "register_agent", Conflict)
        await tx.principals.ensure_agent(agent_id, owner, rfc3339(moment))
        await tx.principals.set_capabilities(agent_id, offered)
        made = await issue(tx, agent(agent_id), moment)
    return Registration(agent_id, made.token)


async def set_agent_card_public(
    store: Store, actor: Principal, agent_id: str, public: bool
) -> bool:
    """Whether the agent's A2A card is served without a token: by the agent's owner only."""
    owner = _owner(actor)
    check_agent_id(agent_id, "agent_id")
    if owner_of(agent_id) != owner:
        raise Forbidden(f"only {owner_of(agent_id)} marks its agent {agent_id}'s card")
    async with store.write() as tx:
        if not await tx.principals.agent_exists(agent_id):
            raise NotFound(f"no agent {agent_id}")
        await refuse_erased(tx, agent_id, "set_agent_card_public", NotFound)
        await tx.principals.set_card_public(agent_id, public)
    return public


async def agent_card_public(store: Store, agent_id: str) -> bool:
    """Whether the agent's A2A card is served without a token."""
    async with store.read() as tx:
        return await tx.principals.card_public(agent_id)


async def provision_token(
    store: Store,
    principal: Principal,
    label: str | None = None,
    expires_in_seconds: int | None = None,
) -> NewToken:
    """A new token for a person or agent, creating the principal if missing: the operator's
    way in (`prickle token create`, and the first owner of `prickle serve`)."""
    label, expires_in_seconds = check_label(label), check_expires_in(expires_in_seconds)
    at = now()
    async with store.write() as tx:
        await refuse_erased(tx, principal.id, "token create", Conflict)
        if not principal.is_person:  # nor does a new agent of an erased person
            await refuse_erased(tx, principal.owner, "token create", Conflict)
        if principal.is_person:
            await tx.principals.ensure_person(principal.id, rfc3339(at))
        else:
            await tx.principals.ensure_agent(principal.id, owner_of(principal.id), rfc3339(at))
        return await issue(tx, principal, at, label, expires_in_seconds)


async def set_gate_rule(store: Store, actor: Principal, rule: GateRuleInput) -> GateRule:
    owner = _owner(actor)
    rule.check()
    made = GateRule(
        id=new_id(),
        owner=owner,
        effect=rule.effect,
        priority=rule.priority or 0,
        project=rule.project,
        requester_owner=rule.requester_owner,
        requester_agent=rule.requester_agent,
        deliverable_type=rule.deliverable_type,
        capability_kind=rule.capability_kind,
        created_at=rfc3339(now()),
    )
    async with store.write() as tx:
        await refuse_erased(tx, rule.requester_agent, "requester_agent")
        await refuse_erased(tx, rule.requester_owner, "requester_owner")
        await tx.gate_rules.insert(made)
    return made


async def delete_gate_rule(store: Store, actor: Principal, rule_id: str) -> bool:
    owner = _owner(actor)
    async with store.write() as tx:
        if not await tx.gate_rules.delete(rule_id, owner):
            raise NotFound(f"no gate rule {rule_id}")
    return True


async def set_result_rule(store: Store, actor: Principal, rule: ResultRuleInput) -> ResultRule:
    owner = _owner(actor)
    rule.check()
    made = ResultRule(
        id=new_id(),
        owner=owner,
        policy=rule.policy,
        project=rule.project,
        assignee=rule.assignee,
        deliverable_type=rule.deliverable_type,
        created_at=rfc3339(now()),
    )
    async with store.write() as tx:
        await refuse_erased(tx, rule.assignee, "assignee")
        await tx.result_rules.insert(made)
    return made


async def delete_result_rule(store: Store, actor: Principal, rule_id: str) -> bool:
    owner = _owner(actor)
    async with store.write() as tx:
        if not await tx.result_rules.delete(rule_id, owner):
            raise NotFound(f"no result rule {rule_id}")
    return True


async def add_project_member(store: Store, actor: Principal, project: str, handle: str) -> bool:
    """Only a project's administrators add members; membership grants sight of its tasks."""
    check_project(project)
    check_handle(handle)
    at = rfc3339(now())
    async with store.write() as tx:
        if not await tx.projects.exists(project):
            raise NotFound(f"no project {project}")
        await _administrator(tx, actor, project, "add members")
        if not await tx.principals.person_exists(handle):
            raise NotFound(f"no person {handle}")
        await tx.projects.add_member(project, handle, "member", at)
    return True


async def remove_project_member(store: Store, actor: Principal, project: str, handle: str) -> bool:
    """Only a project's administrators remove members, never its last administrator. The
    removed person's HTTP reads lose sight of the project's tasks at once, and its live
    subscriptions from their next event."""
    check_project(project)
    check_handle(handle)
    async with store.write() as tx:
        if not await tx.projects.exists(project):
            raise NotFound(f"no project {project}")
        await _administrator(tx, actor, project, "remove members")
        admins = await tx.projects.admins(project, for_update=True)
        if admins == [handle]:
            raise Conflict(f"{handle} is the last administrator of {project}")
        if not await tx.projects.remove_member(project, handle):
            raise NotFound(f"{handle} is not a member of {project}")
    return True


async def _administrator(tx: Tx, actor: Principal, project: str, action: str) -> None:
    if not actor.is_person or await tx.projects.role(project, actor.id) != "admin":
        raise Forbidden(f"only the administrators of {project} {action}")
