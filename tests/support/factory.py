"""Test helpers: a small cast of principals, and tasks driven to any position by the verbs.

The cast: alice owns the requester agent alice/planner; bob owns the assignee agent
bob/coder (and bob/helper); carol, with carol/spy, is a third owner who sees nothing.

`setup(store)` registers the agents and the standing rules `drive` relies on:
- bob's gate allows alice's requests; it holds project `held` and capability kind `data`,
  and denies project `banned` and capability kind `deploy` (bob/helper offers both kinds);
- alice's result rules: `require_approval` in project `review`, `require_complete_evidence`
  in `strict`, `auto_accept` in `easy`; elsewhere the default v0.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from sqlalchemy import select

from app.domain.errors import ProtocolError
from app.domain.events import Event
from app.domain.principals import Principal, agent, person
from app.domain.table import table
from app.domain.task import Task
from app.service import admin, creation
from app.service.inputs import GateRuleInput, HandoffInput, ResultInput, ResultRuleInput
from app.service.verbs import registry
from app.storage.repositories.approvals import approvals
from app.storage.repositories.records import checkpoints, results
from app.storage.repositories.tasks import tasks
from app.storage.store import Store

ALICE = person("alice")
PLANNER = agent("alice/planner")
BOB = person("bob")
CODER = agent("bob/coder")
HELPER = agent("bob/helper")
CAROL = person("carol")
SPY = agent("carol/spy")

# Every verb a caller uses on an existing task: the table's verbs but those that make a task.
TASK_VERBS = tuple(verb for verb in table().verbs if verb not in table().creating)

FINAL = ("completed", "rejected", "cancelled")

# Every task verb, by name, as declared (app/service/verbs.py).
VERBS = {verb.name: verb for verb in registry()}

# What the table's rules (narrowed by waiting_on, as the server chose) let callers do at each
# position: the verbs someone other than the server may use there.
ALLOWED: dict[tuple[str, str | None], set[str]] = {
    position: set(table().callers(*position)) for position in table().positions
}


async def register_agents(store: Store) -> None:
    await admin.register_agent(store, ALICE, "planner")
    await admin.register_agent(store, BOB, "coder", [{"kind": "repo", "name": "prickle"}])
    helper_offers = [{"kind": "deploy", "name": "prod"}, {"kind": "data", "name": "warehouse"}]
    await admin.register_agent(store, BOB, "helper", helper_offers)
    await admin.register_agent(store, CAROL, "spy")


async def setup(store: Store) -> None:
    """The agents, and the standing rules the positions of `drive` need."""
    await register_agents(store)
    alice_allowed = GateRuleInput(effect="allow", requester_owner="alice")
    await admin.set_gate_rule(store, BOB, alice_allowed)
    for effect, match in [
        ("hold", {"project": "held"}),
        ("hold", {"capability_kind": "data"}),
        ("deny", {"project": "banned"}),
        ("deny", {"capability_kind": "deploy"}),
    ]:
        priority = 20 if effect == "deny" else 10
        rule = GateRuleInput(effect=effect, priority=priority, **match)
        await admin.set_gate_rule(store, BOB, rule)
    for project, policy in [
        ("review", "require_approval"),
        ("strict", "require_complete_evidence"),
        ("easy", "auto_accept"),
    ]:
        await admin.set_result_rule(store, ALICE, ResultRuleInput(policy=policy, project=project))


def packet(**overrides: Any) -> dict[str, Any]:
    return {
        "task": "Add a health check endpoint",
        "deliverable_type": "code",
        "acceptance_criteria": ["GET /health answers 200", "it is documented"],
        **overrides,
    }


PACKET = packet()  # a valid packet, for tests that do not care what it asks


def planned_task(state: str, waiting_on: str | None = None, wait_agent: str | None = None) -> Task:
    """alice/planner's task for bob/coder, standing at (state, waiting_on), never stored."""
    return Task(
        id="T1",
        project="work",
        state=state,
        assignee="bob/coder",
        packet=packet(),
        requested_by={"kind": "agent", "agent_id": "alice/planner"},
        route={"via": "handoff"},
        created_at="",
        updated_at="",
        requester="alice/planner",
        waiting_on=waiting_on,
        wait_agent=wait_agent,
    )


def handoff_input(
    project: str = "work", assignee: str = "bob/coder", **fields: Any
) -> HandoffInput:
    fields.setdefault("packet", packet())
    return HandoffInput(project=project, assignee=assignee, **fields)


async def give(
    store: Store,
    by: Principal = PLANNER,
    project: str = "work",
    assignee: str = "bob/coder",
    **fields: Any,
) -> Task:
    """Hand a task off (the gate runs in the same call)."""
    return await creation.handoff(store, by, handoff_input(project, assignee, **fields))


def evidence(criteria: list[int] | None = None, **fields: Any) -> dict[str, Any]:
    item = {"kind": "test_output", "summary": "the tests pass", **fields}
    if criteria:
        item["criteria"] = criteria
    return item


def result(evidence_items: list[dict] | None = None, **fields: Any) -> ResultInput:
    """A result whose evidence covers both criteria of `packet()` unless told otherwise."""
    items = evidence_items if evidence_items is not None else [evidence([0, 1])]
    fields.setdefault("summary", "Done: /health answers 200 and is in the README")
    fields.setdefault("provenance", "agent_generated")
    return ResultInput(evidence=items, **fields)


CHECKPOINT = {"progress": "wrote the handler", "next_steps": ["document it"]}


async def call(store: Store, verb: str, who: Principal, task_id: str, **kw: Any) -> Task:
    """Any task verb with plausible arguments; keyword arguments override them."""
    defaults: dict[str, dict[str, Any]] = {
        "wait_on": {"on": "human", "question": "Which port?"},
        "answer": {"answer": "8000"},
        "return_result": {"result": result()},
        "decide_result": {"decision": "accept"},
        "reroute": {"assignee": "bob/coder"},
        "save_checkpoint": {"checkpoint": dict(CHECKPOINT)},
    }
    args = {**defaults.get(verb, {}), **kw}
    return await VERBS[verb](store, who, task_id, **args)


# Positions: (state, waiting_on, resume_to). `drive` builds a fresh task at any of them.
POSITIONS: list[tuple[str, str | None, str | None]] = [
    ("requested", None, None),
    ("routed", None, None),
    ("accepted", None, None),
    ("working", None, None),
    ("waiting", "owner_approval", None),
    ("waiting", "human", "accepted"),
    ("waiting", "human", "working"),
    ("waiting", "agent", "accepted"),
    ("waiting", "agent", "working"),
    ("waiting", "stopped", "accepted"),
    ("waiting", "stopped", "working"),
    ("verifying", None, None),
    ("approval", None, None),
    ("completed", None, None),
    ("rejected", None, None),
    ("cancelled", None, None),
    ("returned", None, None),
]


def position_id(position: tuple[str, str | None, str | None]) -> str:
    return "-".join(p for p in position if p)


async def drive(
    store: Store,
    state: str,
    waiting_on: str | None = None,
    resume_to: str | None = None,
    **fields: Any,
) -> Task:
    """A fresh task at (state, waiting_on, resume_to), reached through the service verbs.

    `requested` and `verifying` never outlast the call that enters them (the gate and the
    result policy decide at once), so those two are planted in storage.
    """
    if state in ("requested", "verifying"):
        return await _plant(store, state, fields)
    if state == "waiting" and waiting_on == "owner_approval":
        return await give(store, project="held", **fields)
    project = "review" if state == "approval" else fields.pop("project", "work")
    task = await give(store, project=project, **fields)
    steps = _steps(state, waiting_on, resume_to)
    for verb, who, kw in steps:
        task = await call(store, verb, who, task.id, **kw)
    expected = (state, waiting_on)
    assert (task.state, task.waiting_on) == expected, f"drove to {task.state}, not {expected}"
    assert task.resume_to == resume_to
    return task


def _steps(
    state: str, waiting_on: str | None, resume_to: str | None
) -> list[tuple[str, Principal, dict]]:
    accept = ("accept_task", CODER, {})
    start = ("start_task", CODER, {})
    if state == "routed":
        return []
    if state == "accepted":
        return [accept]
    if state in ("working", "completed", "approval"):
        run = [accept, start]
        return run if state == "working" else [*run, ("return_result", CODER, {})]
    if state == "waiting":
        run = [accept] if resume_to == "accepted" else [accept, start]
        how = {
            "human": ("wait_on", CODER, {"on": "human", "question": "Which port?"}),
            "agent": (
                "wait_on",
                CODER,
                {"on": "agent", "agent": "alice/planner", "question": "Port?"},
            ),
            "stopped": ("stop_run", BOB, {"reason": "pausing"}),
        }[waiting_on or ""]
        return [*run, how]
    return {
        "rejected": [("deny_task", BOB, {"reason": "not now"})],
        "cancelled": [("cancel_task", PLANNER, {"reason": "no longer needed"})],
        "returned": [("hand_back", CODER, {"reason": "not mine"})],
    }[state]


async def _plant(store: Store, state: str, fields: dict[str, Any]) -> Task:
    task = await drive(store, "routed" if state == "requested" else "working", **fields)
    async with store.write() as tx:
        task = await tx.tasks.get(task.id)
        assert task is not None
        old = task.version
        task.state = state
        await tx.tasks.update(task, old)
    return task


# Reading back what is stored.


async def load(store: Store, task_id: str) -> Task:
    async with store.read() as tx:
        task = await tx.tasks.get(task_id)
    assert task is not None
    return task


async def events_of(store: Store, task_id: str) -> list[Event]:
    async with store.read() as tx:
        return await tx.events.after(0, 10_000, task_id=task_id)


async def snapshot(store: Store, task_id: str | None = None) -> dict[str, Any]:
    """Every stored row about a task (or, with no id, the count of every task and event)."""
    async with store.read() as tx:
        if task_id is None:
            return {
                "tasks": len(await tx.rows(select(tasks.c.id))),
                "events": len(await tx.events.after(0, 100_000)),
            }
        row = await tx.one(select(tasks).where(tasks.c.id == task_id))
        return {
            "task": dict(row._mapping),
            "events": [e.__dict__ for e in await tx.events.after(0, 10_000, task_id=task_id)],
            "results": _rows(await tx.rows(select(results).where(results.c.task_id == task_id))),
            "checkpoints": _rows(
                await tx.rows(select(checkpoints).where(checkpoints.c.task_id == task_id))
            ),
            "approvals": _rows(
                await tx.rows(select(approvals).where(approvals.c.task_id == task_id))
            ),
        }


def _rows(rows: list[Any]) -> list[dict[str, Any]]:
    return sorted((dict(r._mapping) for r in rows), key=lambda r: str(r.get("id")))


async def refused(
    store: Store, task_id: str, error: type[ProtocolError], verb: str, who: Principal, **kw: Any
) -> ProtocolError:
    """Call the verb, expect `error`, and check that nothing about the task changed."""
    before = await snapshot(store, task_id)
    try:
        await call(store, verb, who, task_id, **kw)
    except error as raised:
        after = await snapshot(store, task_id)
        assert after == before, f"{verb} by {who.id} changed the task though refused"
        return raised
    raise AssertionError(f"{verb} by {who.id} was not refused with {error.__name__}")


# The protocol's task object.

_SCHEMA = Path(__file__).resolve().parents[2] / "app" / "domain" / "protocol" / "task.schema.json"


@cache
def task_validator() -> Draft202012Validator:
    schema = json.loads(_SCHEMA.read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, format_checker=FormatChecker())


def assert_valid(task: Task) -> None:
    """The task object is valid against task.schema.json, formats (date-time) included."""
    errors = [
        f"{list(e.absolute_path)}: {e.message}"
        for e in task_validator().iter_errors(task.to_protocol())
    ]
    assert not errors, errors
