"""Every move of the table, made by its actor: the state it lands in and the event it logs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from factory import (
    ALICE,
    ALLOWED,
    BOB,
    CODER,
    PLANNER,
    POSITIONS,
    TASK_VERBS,
    call,
    drive,
    events_of,
    load,
    packet,
    planned_task,
    position_id,
    refused,
    result,
)

from app.api.errors import extensions
from app.domain.errors import InvalidState
from app.domain.moves import allowed_verbs
from app.domain.principals import Principal
from app.domain.table import table
from app.service import creation, verbs
from app.service.inputs import HandoffInput, RequestCapabilityInput

pytestmark = pytest.mark.cast


@dataclass
class Case:
    start: tuple[str, str | None, str | None]
    verb: str
    who: Principal
    to: str
    waiting_on: str | None = None
    kw: dict[str, Any] = field(default_factory=dict)
    kind: str = "moved"
    label: str = ""

    @property
    def from_state(self) -> str:
        return "verifying" if self.label.startswith("policy") else self.start[0]

    @property
    def id(self) -> str:
        extra = f"-{self.label}" if self.label else ""
        return f"{position_id(self.start)}-{self.verb}-{self.who.id}-to-{self.to}{extra}"


def _at(state: str, waiting_on: str | None = None, resume_to: str | None = None) -> tuple:
    return (state, waiting_on, resume_to)


# Each move of the table with the actor who makes it and where it lands, written out here
# apart from the table on purpose: restating it is this test's point (a table edited by
# mistake fails here), so a new verb adds its cases
# (test_the_cases_cover_every_move_and_verb_of_the_table).
CASES = [
    Case(_at("requested"), "cancel_task", PLANNER, "cancelled"),
    Case(_at("routed"), "accept_task", CODER, "accepted"),
    Case(_at("routed"), "hand_back", CODER, "returned"),
    Case(_at("routed"), "deny_task", BOB, "rejected"),
    Case(_at("routed"), "cancel_task", PLANNER, "cancelled"),
    Case(_at("accepted"), "start_task", CODER, "working"),
    Case(_at("accepted"), "return_result", CODER, "verifying", kind="result"),
    Case(_at("accepted"), "hand_back", CODER, "returned"),
    Case(_at("accepted"), "cancel_task", PLANNER, "cancelled"),
    Case(_at("working"), "return_result", CODER, "verifying", kind="result"),
    Case(_at("working"), "hand_back", CODER, "returned"),
    Case(_at("working"), "cancel_task", PLANNER, "cancelled"),
    Case(_at("waiting", "owner_approval"), "approve_handoff", BOB, "routed"),
    Case(_at("waiting", "owner_approval"), "deny_task", BOB, "rejected"),
    Case(_at("verifying"), "cancel_task", PLANNER, "cancelled"),
    # The result policy's moves out of verifying, made inside return_result.
    Case(_at("working"), "return_result", CODER, "completed", label="policy-v0"),
    Case(
        _at("working"),
        "return_result",
        CODER,
        "approval",
        label="policy-review",
        kw={"project": "review"},
    ),
    Case(
        _at("working"),
        "return_result",
        CODER,
        "working",
        label="policy-strict",
        kw={
            "project": "strict",
            "result": result([{"kind": "note", "summary": "half", "criteria": [0]}]),
        },
    ),
    Case(_at("approval"), "decide_result", ALICE, "completed", kw={"decision": "accept"}),
    Case(_at("approval"), "decide_result", ALICE, "working", kw={"decision": "request_changes"}),
    Case(_at("approval"), "decide_result", ALICE, "rejected", kw={"decision": "reject"}),
    Case(_at("approval"), "cancel_task", PLANNER, "cancelled"),
    Case(_at("returned"), "reroute", PLANNER, "routed", kw={"assignee": "bob/coder"}),
    Case(
        _at("returned"),
        "reroute",
        PLANNER,
        "waiting",
        "owner_approval",
        kw={"assignee": None, "capability": {"kind": "data", "name": "warehouse"}},
    ),
    Case(
        _at("returned"),
        "reroute",
        PLANNER,
        "rejected",
        kw={"assignee": None, "capability": {"kind": "deploy", "name": "prod"}},
    ),
    Case(_at("returned"), "cancel_task", PLANNER, "cancelled"),
]

for _from in ("accepted", "working"):
    CASES += [
        Case(_at(_from), "wait_on", CODER, "waiting", "human", kw={"on": "human"}),
        Case(
            _at(_from),
            "wait_on",
            CODER,
            "waiting",
            "agent",
            kw={"on": "agent", "agent": "alice/planner"},
        ),
        Case(_at(_from), "stop_run", BOB, "waiting", "stopped"),
        Case(_at("waiting", "stopped", _from), "resume_run", BOB, _from),
        Case(_at("waiting", "human", _from), "answer", ALICE, _from, kind="answered"),
        Case(_at("waiting", "human", _from), "answer", BOB, _from, kind="answered"),
        Case(_at("waiting", "agent", _from), "answer", PLANNER, _from, kind="answered"),
    ]
    for _on in ("human", "agent", "stopped"):
        hander = BOB if _on == "stopped" else CODER
        CASES += [
            Case(_at("waiting", _on, _from), "hand_back", hander, "returned"),
            Case(_at("waiting", _on, _from), "cancel_task", PLANNER, "cancelled"),
        ]
CASES.append(Case(_at("waiting", "owner_approval"), "cancel_task", PLANNER, "cancelled"))


def _split(kw: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Separate the fields that shape the task (its project) from the verb's arguments."""
    shaping = {k: v for k, v in kw.items() if k == "project"}
    return shaping, {k: v for k, v in kw.items() if k != "project"}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
async def test_each_move_made_by_its_actor_lands_where_the_table_says_and_logs_its_event(
    store, case: Case
) -> None:
    shaping, kw = _split(case.kw)
    task = await drive(store, *case.start, **shaping)
    seen = len(await events_of(store, task.id))

    moved = await call(store, case.verb, case.who, task.id, **kw)

    final = case.to if case.to != "verifying" else "completed"
    assert (moved.state, moved.waiting_on) == (final, case.waiting_on)
    stored = await load(store, task.id)
    assert (stored.state, stored.waiting_on, stored.version) == (
        final,
        case.waiting_on,
        moved.version,
    )
    new = (await events_of(store, task.id))[seen:]
    assert stored.version == task.version + len(new)
    [event] = [e for e in new if (e.from_state, e.to_state) == (case.from_state, case.to)]
    system = case.label.startswith("policy")
    assert event.kind == ("moved" if system else case.kind)
    assert event.verb == case.verb
    assert event.actor == (None if system else case.who.id)
    assert event.waiting_on == (case.waiting_on if case.to == "waiting" else None)
    assert event.task["state"] == case.to


@pytest.mark.parametrize(
    ("project", "to_state", "waiting_on"),
    [("work", "routed", None), ("held", "waiting", "owner_approval"), ("banned", "rejected", None)],
)
async def test_handoff_records_created_then_the_gate_move_by_the_system(
    store, project: str, to_state: str, waiting_on: str | None
) -> None:
    task = await creation.handoff(
        store, PLANNER, HandoffInput(project=project, assignee="bob/coder", packet=packet())
    )
    assert (task.state, task.waiting_on, task.version) == (to_state, waiting_on, 2)
    created, gated = await events_of(store, task.id)
    assert (created.kind, created.from_state, created.to_state) == ("created", None, "requested")
    assert (created.verb, created.actor, created.version) == ("handoff", "alice/planner", 1)
    assert (gated.kind, gated.from_state, gated.to_state) == ("moved", "requested", to_state)
    assert (gated.verb, gated.actor, gated.waiting_on, gated.version) == (
        "handoff",
        None,
        waiting_on,
        2,
    )


@pytest.mark.parametrize(
    ("capability", "to_state", "waiting_on"),
    [
        ({"kind": "repo", "name": "prickle"}, "routed", None),
        ({"kind": "data", "name": "warehouse"}, "waiting", "owner_approval"),
        ({"kind": "deploy", "name": "prod"}, "rejected", None),
    ],
)
async def test_request_capability_records_created_then_the_gate_move_by_the_system(
    store, capability: dict, to_state: str, waiting_on: str | None
) -> None:
    inp = RequestCapabilityInput(project="work", capability=capability, packet=packet())
    task = await creation.request_capability(store, PLANNER, inp)
    assert (task.state, task.waiting_on) == (to_state, waiting_on)
    created, gated = await events_of(store, task.id)
    assert (created.kind, created.verb) == ("created", "request_capability")
    assert (gated.from_state, gated.to_state, gated.verb, gated.actor) == (
        "requested",
        to_state,
        "request_capability",
        None,
    )


def test_the_cases_cover_every_move_and_verb_of_the_table() -> None:
    covered = {(c.from_state, c.to, c.verb) for c in CASES}
    covered |= {
        ("requested", to, verb)
        for to in ("routed", "waiting", "rejected")
        for verb in ("handoff", "request_capability")
    }
    listed = {(m.from_state, m.to_state, v) for m in table().moves for v in m.verbs}
    assert covered == listed
    assert len({(f, t) for f, t, _ in covered}) == 35


async def test_an_owner_makes_the_moves_of_its_own_agents(store) -> None:
    task = await drive(store, "routed")
    task = await verbs.accept_task(store, BOB, task.id)
    event = (await events_of(store, task.id))[-1]
    assert (task.state, event.actor) == ("accepted", "bob")
    task = await verbs.cancel_task(store, ALICE, task.id)
    assert task.state == "cancelled"


async def test_leaving_waiting_clears_waiting_on_and_what_it_waited_for(store) -> None:
    task = await drive(store, "waiting", "agent", "working")
    assert (task.wait_agent, task.question, task.resume_to) == ("alice/planner", "Port?", "working")
    task = await verbs.answer(store, PLANNER, task.id, "8080")
    stored = await load(store, task.id)
    assert (
        stored.state,
        stored.waiting_on,
        stored.wait_agent,
        stored.question,
        stored.resume_to,
    ) == (
        "working",
        None,
        None,
        None,
        None,
    )


async def test_every_move_changes_updated_at_and_keeps_created_at(store) -> None:
    task = await drive(store, "routed")
    accepted = await verbs.accept_task(store, CODER, task.id)
    assert accepted.created_at == task.created_at
    assert accepted.updated_at > task.updated_at


# The cast's principal for each actor name of the table.
CAST_AS = {
    "assignee": CODER,
    "assignee_owner": BOB,
    "requester_side": PLANNER,
    "requester_owner": ALICE,
    "answerer": ALICE,
}


def _right_actor() -> dict[str, Principal]:
    """For each verb, a principal who would be its actor (the first rule naming a caller in the
    table), so that only the state refuses it."""
    rules = [r for m in table().moves for r in m.rules] + [a.rule for a in table().actions]
    found: dict[str, Principal] = {}
    for rule in rules:
        if rule.actor in CAST_AS:
            found.setdefault(rule.verb, CAST_AS[rule.actor])
    return found


RIGHT_ACTOR = _right_actor()


@pytest.mark.parametrize("position", POSITIONS, ids=position_id)
async def test_a_verb_the_table_does_not_allow_fails_with_invalid_state_and_changes_nothing(
    store, position: tuple
) -> None:
    task = await drive(store, *position)
    state, waiting_on, _ = position
    refused_verbs = sorted(set(TASK_VERBS) - ALLOWED[(state, waiting_on)])
    assert refused_verbs
    for verb in refused_verbs:
        error = await refused(store, task.id, InvalidState, verb, RIGHT_ACTOR[verb])
        assert error.code == "invalid_state"
        assert (error.verb, error.state, error.waiting_on) == (verb, state, waiting_on)
        assert extensions(error) == {
            "code": "invalid_state",
            "state": state,
            "waiting_on": waiting_on,
        }
        assert error.message.startswith(f"Can't {verb} when in {state}")


def test_the_allowed_verbs_of_each_position_are_what_the_domain_offers_its_actors() -> None:
    for (state, waiting_on), allowed in ALLOWED.items():
        waited_on = "alice/planner" if waiting_on == "agent" else None
        task = planned_task(state, waiting_on, waited_on)
        offered = set()
        for who in (ALICE, PLANNER, BOB, CODER):
            offered |= set(allowed_verbs(task, who))
        assert offered == allowed, (state, waiting_on)


async def test_wait_on_needs_no_question(store) -> None:
    task = await drive(store, "working")
    waiting = await verbs.wait_on(store, CODER, task.id, "human")
    assert (waiting.state, waiting.waiting_on, waiting.question) == ("waiting", "human", None)


async def test_the_servers_own_moves_out_of_verifying_are_no_callers_to_make(store) -> None:
    task = await drive(store, "verifying")
    for who in (CODER, PLANNER):
        error = await refused(store, task.id, InvalidState, "return_result", who)
        assert error.state == "verifying"
