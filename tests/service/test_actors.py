"""Who may make each move: the wrong principal is refused, and an invisible one finds nothing."""

from __future__ import annotations

import pytest
from factory import (
    ALICE,
    ALLOWED,
    BOB,
    CAROL,
    CODER,
    PLANNER,
    POSITIONS,
    SPY,
    TASK_VERBS,
    drive,
    give,
    planned_task,
    position_id,
    refused,
)

from app.domain.actors import actor_for, is_actor
from app.domain.errors import Forbidden, NotFound
from app.domain.moves import allowed_verbs
from app.domain.principals import person
from app.domain.table import table
from app.service import admin, verbs

pytestmark = pytest.mark.cast

# Each verb's actor, written out here apart from the table on purpose: restating it is this
# test's point, so a new verb names its actor here too.
ASSIGNEE = {"accept_task", "start_task", "wait_on", "return_result", "hand_back", "save_checkpoint"}
ASSIGNEE_OWNER = {"stop_run", "resume_run", "approve_handoff", "deny_task"}
REQUESTER_SIDE = {"cancel_task", "reroute"}

# (state, waiting_on) -> the verbs allowed there, each with principals who see the task
# but are not the verb's actor there.
WRONG = {
    "assignee": [PLANNER, ALICE],  # the requester side is not the assignee
    "assignee_owner": [CODER, PLANNER, ALICE],  # not even the assignee agent itself
    "requester_side": [CODER, BOB],
    "requester_owner": [PLANNER, CODER, BOB],  # the requester agent is not its owner
}


def wrong_principals(verb: str, waiting_on: str | None):  # type: ignore[no-untyped-def]
    if verb == "answer":
        # human: a person of the requester side or the assignee's owner; agent: the named agent
        return [CODER, PLANNER] if waiting_on == "human" else [CODER, BOB]
    if verb == "hand_back" and waiting_on == "stopped":
        return WRONG["assignee_owner"]
    if verb in ASSIGNEE:
        return WRONG["assignee"]
    if verb in ASSIGNEE_OWNER:
        return WRONG["assignee_owner"]
    if verb in REQUESTER_SIDE:
        return WRONG["requester_side"]
    assert verb == "decide_result"
    return WRONG["requester_owner"]


LIVE = [p for p in POSITIONS if p[0] not in ("completed", "rejected", "cancelled")]


@pytest.mark.parametrize("position", LIVE, ids=position_id)
async def test_a_principal_who_sees_the_task_but_is_not_the_actor_is_forbidden_and_changes_nothing(
    store, position: tuple
) -> None:
    task = await drive(store, *position)
    state, waiting_on, _ = position
    for verb in sorted(ALLOWED[(state, waiting_on)]):
        for who in wrong_principals(verb, waiting_on):
            error = await refused(store, task.id, Forbidden, verb, who)
            assert error.code == "forbidden"
            assert who.id in error.message


SOME = [
    ("routed", None, None),
    ("waiting", "owner_approval", None),
    ("waiting", "agent", "working"),
    ("approval", None, None),
    ("returned", None, None),
    ("completed", None, None),
]


@pytest.mark.parametrize("position", SOME, ids=position_id)
async def test_a_principal_who_cannot_see_the_task_gets_not_found_for_every_verb(
    store, position: tuple
) -> None:
    task = await drive(store, *position)
    for verb in TASK_VERBS:
        for who in (CAROL, SPY):
            error = await refused(store, task.id, NotFound, verb, who)
            assert error.code == "not_found"
            assert error.message == f"no task {task.id}"


async def test_a_project_member_sees_the_task_but_may_not_move_it(store) -> None:
    task = await drive(store, "routed")
    await admin.provision_token(store, person("dave"))
    await admin.add_project_member(store, ALICE, "work", "dave")
    await refused(store, task.id, Forbidden, "cancel_task", person("dave"))
    await refused(store, task.id, Forbidden, "accept_task", person("dave"))


async def test_only_a_project_administrator_adds_members(store) -> None:
    await give(store)  # alice's agent founds project `work`; alice administers it
    await admin.provision_token(store, person("dave"))
    with pytest.raises(Forbidden, match="only the administrators of work add members"):
        await admin.add_project_member(store, BOB, "work", "dave")
    assert await admin.add_project_member(store, ALICE, "work", "dave")


async def test_the_person_who_requested_a_task_is_its_requester_side(store) -> None:
    task = await give(store, by=ALICE)
    assert (task.requester, task.requested_by) == (None, {"kind": "person", "handle": "alice"})
    await refused(store, task.id, NotFound, "cancel_task", PLANNER)  # not a party to it
    cancelled = await verbs.cancel_task(store, ALICE, task.id)
    assert cancelled.state == "cancelled"


async def test_each_principal_is_offered_the_verbs_it_may_call_now(store) -> None:
    task = await drive(store, "routed")
    offered = {who.id: set(allowed_verbs(task, who)) for who in (ALICE, PLANNER, BOB, CODER, CAROL)}
    assert offered == {
        "alice": {"cancel_task"},
        "alice/planner": {"cancel_task"},
        "bob": {"accept_task", "hand_back", "deny_task"},  # the owner acts for its agent too
        "bob/coder": {"accept_task", "hand_back"},
        "carol": set(),
    }


def test_every_actor_the_table_names_but_the_server_is_a_principal_check() -> None:
    task = planned_task("routed")
    for role in set(table().actors) - {"system"}:
        assert isinstance(is_actor(role, CODER, task), bool), role


def test_the_actor_of_a_verb_is_read_from_the_tables_rules_where_the_task_stands() -> None:
    assert actor_for("hand_back", planned_task("waiting", "stopped")) == "assignee_owner"
    assert actor_for("hand_back", planned_task("waiting", "human")) == "assignee"
    assert actor_for("resume_run", planned_task("waiting", "human")) is None
    assert actor_for("return_result", planned_task("verifying")) == "system"
