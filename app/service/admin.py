"""Owner administration: agents and tokens, gate rules, result rules, project members."""

from __future__ import annotations

from dataclasses import dataclass

from app.domain import shapes
from app.domain.clock import new_id, now, rfc3339
from app.domain.errors import Forbidden, InvalidInput, NotFound
from app.domain.gate import GateRule
from app.domain.policy import POLICIES, ResultRule
from app.domain.principals import (
    Principal,
    agent,
    check_agent_id,
    check_handle,
    check_project,
    owner_of,
)  # fmt: skip
from app.service.auth import issue
from app.storage.store import Store

CAPABILITY_KINDS = ("mcp", "repo", "deploy", "data", "other")


@dataclass(frozen=True)
class Registration:
    agent_id: str
    token: str


def _owner(actor: Principal) -> str:
    if not actor.is_person:
        raise Forbidden("only a person (an owner) administers agents, rules and projects")
    return actor.id


async def register_agent(
    store: Store, actor: Principal, name: str, capabilities: list[dict] | None = None
) -> Registration:
    """Register (or re-register) `<caller>/<name>` with its capabilities and a new token."""
    owner = _owner(actor)
    agent_id = check_agent_id(f"{owner}/{check_handle(name, 'name')}")
    offered = [(c["kind"], c["name"]) for c in (shapes.check("capability", c) for c in capabilities or [])]
    at = rfc3339(now())
    async with store.write() as tx:
        await tx.principals.ensure_agent(agent_id, owner, at)
        await tx.principals.set_capabilities(agent_id, offered)
        token = await issue(tx, agent(agent_id), at)
    return Registration(agent_id, token)


async def create_token(store: Store, principal: Principal) -> str:
    """A new token for a person or agent, creating the principal if missing (the CLI)."""
    at = rfc3339(now())
    async with store.write() as tx:
        if principal.is_person:
            await tx.principals.ensure_person(principal.id, at)
        else:
            await tx.principals.ensure_agent(principal.id, owner_of(principal.id), at)
        return await issue(tx, principal, at)


async def set_gate_rule(store: Store, actor: Principal, fields: dict) -> GateRule:
    owner = _owner(actor)
    if fields.get("effect") not in ("allow", "deny", "hold"):
        raise InvalidInput(f"effect: {fields.get('effect')!r} is not one of allow, deny, hold")
    _check_match_fields(fields)
    if fields.get("capability_kind") not in (None, *CAPABILITY_KINDS):
        raise InvalidInput(f"capability_kind: {fields['capability_kind']!r} is not a capability kind")
    priority = fields.get("priority") or 0
    if not -1_000_000 <= priority <= 1_000_000:
        raise InvalidInput("priority: must be between -1000000 and 1000000")
    rule = GateRule(
        id=new_id(), owner=owner, effect=fields["effect"], priority=priority,
        project=fields.get("project"), requester_owner=fields.get("requester_owner"),
        requester_agent=fields.get("requester_agent"),
        deliverable_type=fields.get("deliverable_type"),
        capability_kind=fields.get("capability_kind"), created_at=rfc3339(now()),
    )  # fmt: skip
    async with store.write() as tx:
        await tx.gate_rules.insert(rule)
    return rule


async def delete_gate_rule(store: Store, actor: Principal, rule_id: str) -> bool:
    owner = _owner(actor)
    async with store.write() as tx:
        if not await tx.gate_rules.delete(rule_id, owner):
            raise NotFound(f"no gate rule {rule_id}")
    return True


async def set_result_rule(store: Store, actor: Principal, fields: dict) -> ResultRule:
    owner = _owner(actor)
    if fields.get("policy") not in POLICIES:
        raise InvalidInput(f"policy: {fields.get('policy')!r} is not one of {', '.join(POLICIES)}")
    _check_match_fields(fields)
    rule = ResultRule(
        id=new_id(), owner=owner, policy=fields["policy"], project=fields.get("project"),
        assignee=fields.get("assignee"), deliverable_type=fields.get("deliverable_type"),
        created_at=rfc3339(now()),
    )  # fmt: skip
    async with store.write() as tx:
        await tx.result_rules.insert(rule)
    return rule


async def delete_result_rule(store: Store, actor: Principal, rule_id: str) -> bool:
    owner = _owner(actor)
    async with store.write() as tx:
        if not await tx.result_rules.delete(rule_id, owner):
            raise NotFound(f"no result rule {rule_id}")
    return True


def _check_match_fields(fields: dict) -> None:
    if fields.get("project") is not None:
        check_project(fields["project"])
    if fields.get("requester_owner") is not None:
        check_handle(fields["requester_owner"], "requester_owner")
    for name in ("requester_agent", "assignee"):
        if fields.get(name) is not None:
            check_agent_id(fields[name], name)
    if fields.get("deliverable_type") is not None:
        shapes.check("deliverable_type", fields["deliverable_type"])


async def add_project_member(store: Store, actor: Principal, project: str, handle: str) -> bool:
    """Only a project's administrators add members; membership grants sight of its tasks."""
    check_project(project)
    check_handle(handle)
    at = rfc3339(now())
    async with store.write() as tx:
        if not await tx.projects.exists(project):
            raise NotFound(f"no project {project}")
        if not actor.is_person or await tx.projects.role(project, actor.id) != "admin":
            raise Forbidden(f"only the administrators of {project} add members")
        if not await tx.principals.person_exists(handle):
            raise NotFound(f"no person {handle}")
        await tx.projects.add_member(project, handle, "member", at)
    return True

