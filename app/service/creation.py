"""Verbs that send a task to an assignee through its owner's gate: handoff,
request_capability and reroute (whose act this is; declared in the verbs' registry)."""

from __future__ import annotations

from app.domain import gate
from app.domain.clock import new_id
from app.domain.errors import Conflict, InvalidInput, NotFound
from app.domain.principals import Principal, owner_of
from app.domain.table import table
from app.domain.task import Gate, Task
from app.domain.types import JSON
from app.service.arguments import RerouteArgs
from app.service.inputs import (
    HandoffInput,
    RequestCapabilityInput,
    check_capability,
)
from app.service.unit import Moves, Step, resume_parent, visible_task
from app.storage.store import Store
from app.storage.tx import Tx

Creation = HandoffInput | RequestCapabilityInput


async def handoff(store: Store, actor: Principal, inp: HandoffInput) -> Task:
    """Hand a task to a named agent; the assignee's owner's gate decides where it lands."""
    return await _create(store, actor, inp, inp.checked_packet())


async def request_capability(store: Store, actor: Principal, inp: RequestCapabilityInput) -> Task:
    """Hand a task to whichever registered agent offers a capability."""
    return await _create(store, actor, inp, inp.checked_packet())


async def _create(store: Store, actor: Principal, inp: Creation, packet: JSON) -> Task:
    try:
        return await _create_once(store, actor, inp, packet)
    except Conflict:
        # A concurrent call with the same idempotency key committed first: return its task.
        async with store.read() as tx:
            first = await tx.tasks.find_idempotent(actor.id, inp.idempotency_key or "")
            if first is None:
                raise
            return await _repeated(tx, first, inp, packet)


async def _create_once(store: Store, actor: Principal, inp: Creation, packet: JSON) -> Task:
    return await store.command(lambda tx: create_in(tx, actor, inp, packet))


async def create_in(
    tx: Tx,
    actor: Principal,
    inp: Creation,
    packet: JSON,
    schedule: tuple[str, int] | None = None,
) -> Task:
    """Create the task in `tx`: the creation verbs' one path (idempotency, the gate, the
    project's founding). `schedule` is (id, version) of the owner schedule whose run this
    is. Every refusal is raised before anything is written."""
    if inp.idempotency_key is not None:
        first = await tx.tasks.find_idempotent(actor.id, inp.idempotency_key)
        if first is not None:
            return await _repeated(tx, first, inp, packet)
    if isinstance(inp, HandoffInput):
        verb = "handoff"
        assignee = await _existing_agent(tx, inp.assignee, handoff_into=inp.project)
        route: JSON = {"via": "handoff"}
    else:
        verb = "request_capability"
        capability = check_capability(inp.capability)
        assignee = await _offering_agent(tx, actor, capability)
        route = {"via": "request_capability", "capability": capability}
    if inp.parent_task_id is not None:
        await visible_task(tx, actor, inp.parent_task_id)
    recorded = Moves(actor)
    task = Task(
        id=new_id(),
        project=inp.project,
        state="requested",
        assignee=assignee,
        packet=packet,
        requested_by=actor.as_reference(),
        route=route,
        created_at=recorded.at,
        updated_at=recorded.at,
        moved_at=recorded.at,
        requester=None if actor.is_person else actor.id,
        parent_task_id=inp.parent_task_id,
        origin_message_id=inp.origin_message_id,
        display_title=inp.display_title,
        turn_budget=inp.turn_budget,
        idempotency_key=inp.idempotency_key,
    )
    if schedule is not None:
        task.schedule_id, task.schedule_version = schedule
    recorded.record(task, "created", verb, None)
    await _pass_gate(tx, task, verb, recorded)
    await _found_project(tx, task.project, actor, recorded.at)
    ends_subtask = task.parent_task_id is not None and task.state in table().terminal
    if task.gate.approval_id is None and not ends_subtask:
        await tx.tasks.add(task, actor.id, recorded.events)
        return task
    if ends_subtask:
        # resume_parent will lock the parent: take it now, before the subtask's foreign key
        # shares it (two subtasks ending at once would each hold the share, wait on the other)
        await tx.tasks.get(task.parent_task_id or "", for_update=True)
    await tx.tasks.add(task, actor.id)
    await _record_hold(tx, task, recorded)  # after the task: the approval refers to it
    await resume_parent(tx, task, verb, recorded)  # a subtask the gate rejects has ended
    await tx.events.append(recorded.events)
    return task


# What a creation asks besides where it goes, by the names of the task it creates.
_ASKED = (
    "project",
    "packet",
    "parent_task_id",
    "display_title",
    "turn_budget",
    "origin_message_id",
)


def _asked(verb: str, task: JSON) -> JSON:
    """What the creation of `task` asked (the task as created: its `created` event's)."""
    to = task["assignee"] if verb == "handoff" else task["route"].get("capability")
    return {"verb": verb, "to": to, **{name: task.get(name) for name in _ASKED}}


def _asked_now(inp: Creation, packet: JSON) -> JSON:
    """What this creation asks, in the form `_asked` reads from a created task."""
    where: JSON
    if isinstance(inp, HandoffInput):
        verb, where = "handoff", {"assignee": inp.assignee}
    else:
        verb, where = (
            "request_capability",
            {"route": {"capability": check_capability(inp.capability)}},
        )
    fields = {name: getattr(inp, name) for name in _ASKED}
    return _asked(verb, {**fields, **where, "packet": packet})


async def _repeated(tx: Tx, first: Task, inp: Creation, packet: JSON) -> Task:
    """The task a creation repeated with its idempotency key returns: the first, when it
    asks the same; Conflict, naming the key, when it asks anything else."""
    created = await tx.events.first(first.id)
    if created is None or created.verb is None:
        return first
    if _asked(created.verb, created.task) != _asked_now(inp, packet):
        raise Conflict(
            f"idempotency_key {inp.idempotency_key!r} was used for a different request"
            f" (task {first.id}): use a new key for a new task"
        )
    return first


async def reroute(step: Step[RerouteArgs]) -> None:
    """Send a handed-back task again, to the same or another assignee, through the gate."""
    tx, task, args = step.tx, step.task, step.args
    if args.assignee is not None:
        task.assignee = await _existing_agent(tx, args.assignee)
        task.route = {"via": "handoff"}
    else:
        task.assignee = await _offering_agent(tx, step.actor, args.wanted or {})
        task.route = {"via": "request_capability", "capability": args.wanted}
    await _pass_gate(tx, task, step.verb, step.recorded, by_system=False)
    await _record_hold(tx, task, step.recorded)


async def _pass_gate(
    tx: Tx, task: Task, verb: str, recorded: Moves, by_system: bool = True
) -> None:
    request = gate.Request(
        assignee_owner=task.assignee_owner,
        requester_owner=task.requester_owner,
        requester_agent=task.requester,
        project=task.project,
        deliverable_type=task.packet["deliverable_type"],
        capability_kind=(task.route.get("capability") or {}).get("kind"),
    )
    decision = gate.decide(request, await tx.gate_rules.of(task.assignee_owner))
    task.gate = Gate(basis=decision.basis, rule_id=decision.rule_id)
    waiting_on = None
    if decision.outcome == "held":
        task.gate.approval_id = new_id()
        waiting_on = "owner_approval"
    recorded.move(
        task,
        verb,
        decision.to_state,
        by_system=by_system,
        waiting_on=waiting_on,
        note=decision.reason,
    )


async def _record_hold(tx: Tx, task: Task, recorded: Moves) -> None:
    """The pending approval of a task the gate has just held (none if it did not)."""
    if task.gate.approval_id is not None:
        await tx.approvals.insert(task.gate.approval_id, task.id, task.assignee_owner, recorded.at)


async def _existing_agent(tx: Tx, agent_id: str, handoff_into: str | None = None) -> str:
    """The agent, registered and not erased (an erased one is handed no work). `handoff_into`
    (the task's project): what the handoff reads next is read with it (agent_standing)."""
    registered, erased = await tx.principals.agent_standing(agent_id, handoff_into)
    if not registered:
        raise NotFound(f"no agent {agent_id}")
    if erased:  # as refuse_erased says it
        raise InvalidInput(f"assignee: {agent_id} was erased")
    return agent_id


async def _offering_agent(tx: Tx, actor: Principal, capability: JSON) -> str:
    """An agent offering the capability; the caller's own owner's agents first."""
    offering = await tx.principals.agents_offering(capability["kind"], capability["name"])
    if not offering:
        raise NotFound(f"no agent offers {capability['kind']} {capability['name']!r}")
    own = [a for a in offering if owner_of(a) == actor.owner]
    return (own or offering)[0]


async def _found_project(tx: Tx, project: str, actor: Principal, at: str) -> None:
    """The first task handed into a project founds it; the creator's owner administers it
    (of two owners founding one project at once, exactly one)."""
    if not await tx.projects.exists(project):
        await tx.principals.ensure_person(actor.owner, at)
        await tx.projects.found(project, actor.owner, at)
