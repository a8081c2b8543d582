"""Creating tasks: idempotent handoffs, and inputs refused before anything is written."""

from __future__ import annotations

import pytest
from factory import (
    ALICE,
    CODER,
    PLANNER,
    drive,
    events_of,
    give,
    handoff_input,
    packet,
    refused,
    snapshot,
)

from app.domain.errors import Conflict, InvalidInput, NotFound
from app.service import creation, verbs
from app.service.inputs import RequestCapabilityInput

pytestmark = pytest.mark.cast


async def test_the_same_idempotency_key_from_the_same_principal_returns_the_first_task(
    store,
) -> None:
    first = await give(store, idempotency_key="k-1", display_title="Health")
    counts = await snapshot(store)
    again = await give(store, idempotency_key="k-1", display_title="Health")
    assert (again.id, again.version, again.packet) == (first.id, first.version, first.packet)
    assert await snapshot(store) == counts
    assert len(await events_of(store, first.id)) == 2


@pytest.mark.parametrize(
    "changed",
    [
        pytest.param({"packet": packet(task="Something else")}, id="packet"),
        pytest.param({"assignee": "alice/planner"}, id="assignee"),
        pytest.param({"project": "elsewhere"}, id="project"),
        pytest.param({"display_title": "Another"}, id="display-title"),
    ],
)
async def test_an_idempotency_key_reused_for_a_different_request_is_a_conflict(
    store, changed: dict
) -> None:
    first = await give(store, idempotency_key="k-1", display_title="Health")
    counts = await snapshot(store)
    with pytest.raises(Conflict, match=r"idempotency_key 'k-1' was used for a different request"):
        await give(store, idempotency_key="k-1", **{"display_title": "Health", **changed})
    assert await snapshot(store) == counts
    assert len(await events_of(store, first.id)) == 2


async def test_the_first_task_comes_back_even_after_it_moved_on(store) -> None:
    first = await give(store, idempotency_key="k-1")
    await verbs.accept_task(store, CODER, first.id)
    again = await give(store, idempotency_key="k-1")
    assert (again.id, again.state) == (first.id, "accepted")


async def test_the_same_idempotency_key_from_another_principal_creates_another_task(store) -> None:
    first = await give(store, idempotency_key="k-1")
    other = await give(store, by=ALICE, idempotency_key="k-1")
    assert other.id != first.id


async def test_request_capability_is_idempotent_by_key_too(store) -> None:
    def inp() -> RequestCapabilityInput:
        return RequestCapabilityInput(
            project="work",
            packet=packet(),
            capability={"kind": "repo", "name": "prickle"},
            idempotency_key="k-2",
        )

    first = await creation.request_capability(store, PLANNER, inp())
    counts = await snapshot(store)
    assert (await creation.request_capability(store, PLANNER, inp())).id == first.id
    assert await snapshot(store) == counts
    other = inp()
    other.capability = {"kind": "repo", "name": "other"}
    with pytest.raises(Conflict, match="'k-2'"):
        await creation.request_capability(store, PLANNER, other)


async def test_a_handoff_fills_the_packets_defaults_and_starts_at_version_two(store) -> None:
    task = await give(store, display_title="Health check")
    assert task.packet == {**packet(), "context": "", "files": [], "depends_on": []}
    assert (task.version, task.requester, task.display_title) == (
        2,
        "alice/planner",
        "Health check",
    )
    assert task.requested_by == {"kind": "agent", "agent_id": "alice/planner"}
    assert task.created_at == task.updated_at


async def test_task_ids_are_server_made_and_sort_by_creation(store) -> None:
    ids = [(await give(store)).id for _ in range(5)]
    assert ids == sorted(ids)
    assert all(len(i) <= 64 and i.replace("_", "").replace("-", "").isalnum() for i in ids)


TOO_BIG = [
    pytest.param({"packet": packet(task="x" * 501)}, id="task-501-chars"),
    pytest.param({"packet": packet(task="")}, id="empty-task"),
    pytest.param(
        {"packet": packet(acceptance_criteria=[f"c{i}" for i in range(21)])}, id="21-criteria"
    ),
    pytest.param({"packet": packet(acceptance_criteria=[])}, id="no-criteria"),
    pytest.param({"packet": packet(deliverable_type="poem")}, id="unknown-deliverable-type"),
    pytest.param({"packet": packet(colour="red")}, id="unknown-packet-field"),
    pytest.param({"packet": packet(context="x" * 4001)}, id="context-4001"),
    pytest.param({"packet": packet(files=["f"] * 51)}, id="51-files"),
    pytest.param({"project": "Work"}, id="project-uppercase"),
    pytest.param({"project": "a" * 40}, id="project-40-chars"),
    pytest.param({"project": "-work"}, id="project-leading-dash"),
    pytest.param({"assignee": "bob"}, id="assignee-without-owner"),
    pytest.param({"assignee": "Bob/coder"}, id="assignee-uppercase"),
    pytest.param({"assignee": "bob/coder/x"}, id="assignee-two-slashes"),
    pytest.param({"assignee": "bob/" + "c" * 80}, id="assignee-too-long"),
    pytest.param({"display_title": "t" * 201}, id="title-201"),
    pytest.param({"display_title": ""}, id="empty-title"),
    pytest.param({"origin_message_id": "msg 1"}, id="message-id-with-space"),
    pytest.param({"parent_task_id": "../etc"}, id="parent-id-malformed"),
    pytest.param({"idempotency_key": ""}, id="empty-idempotency-key"),
    pytest.param({"idempotency_key": "k" * 201}, id="idempotency-key-201"),
]


@pytest.mark.parametrize("bad", TOO_BIG)
async def test_a_handoff_outside_the_schema_is_invalid_input_and_creates_nothing(
    store, bad
) -> None:
    before = await snapshot(store)
    with pytest.raises(InvalidInput) as raised:
        await creation.handoff(store, PLANNER, handoff_input(**bad))
    assert raised.value.code == "invalid_input"
    assert await snapshot(store) == before


async def test_a_handoff_under_an_unknown_or_invisible_parent_is_not_found(store) -> None:
    hidden = await give(store, by=ALICE, assignee="alice/planner")  # bob/coder is no party to it
    before = await snapshot(store)
    for parent in ("01UNKNOWN", hidden.id):
        with pytest.raises(NotFound, match=f"no task {parent}"):
            await give(store, by=CODER, assignee="bob/helper", parent_task_id=parent)
    assert await snapshot(store) == before


@pytest.mark.parametrize("verb", ["accept_task", "cancel_task", "return_result", "save_checkpoint"])
async def test_a_verb_on_an_unknown_task_is_not_found(store, verb: str) -> None:
    from factory import call

    with pytest.raises(NotFound, match="no task 01H0NOTHERE"):
        await call(store, verb, CODER, "01H0NOTHERE")


async def test_a_malformed_task_id_is_invalid_input(store) -> None:
    from factory import call

    with pytest.raises(InvalidInput, match="task_id"):
        await call(store, "accept_task", CODER, "no such/task")


@pytest.mark.parametrize(
    ("verb", "kw", "error"),
    [
        pytest.param("wait_on", {"on": "robot"}, InvalidInput, id="wait-on-robot"),
        pytest.param(
            "wait_on", {"on": "agent", "agent": "Alice"}, InvalidInput, id="wait-on-bad-agent"
        ),
        pytest.param(
            "wait_on",
            {"on": "human", "agent": "alice/planner"},
            InvalidInput,
            id="wait-on-human-naming-agent",
        ),
        pytest.param(
            "wait_on", {"on": "agent", "agent": "alice/ghost"}, NotFound, id="wait-on-unknown-agent"
        ),
        pytest.param("wait_on", {"on": "agent"}, InvalidInput, id="wait-on-agent-naming-none"),
        pytest.param(
            "wait_on", {"on": "agent", "agent": "bob/coder"}, InvalidInput, id="wait-on-itself"
        ),
        pytest.param(
            "wait_on", {"on": "human", "question": "?" * 4001}, InvalidInput, id="question-4001"
        ),
        pytest.param("hand_back", {"reason": "r" * 1001}, InvalidInput, id="reason-1001"),
        pytest.param("cancel_task", {"reason": "r" * 1001}, InvalidInput, id="cancel-reason-1001"),
        pytest.param(
            "save_checkpoint", {"checkpoint": "progress"}, InvalidInput, id="checkpoint-not-object"
        ),
    ],
)
async def test_a_verb_with_bad_arguments_is_refused_and_changes_nothing(
    store, verb, kw, error
) -> None:
    task = await drive(store, "working")
    who = PLANNER if verb == "cancel_task" else CODER
    await refused(store, task.id, error, verb, who, **kw)


@pytest.mark.parametrize(
    ("kw", "error"),
    [
        pytest.param({"assignee": "not an agent"}, InvalidInput, id="malformed-assignee"),
        pytest.param({"assignee": "bob/ghost"}, NotFound, id="unknown-assignee"),
        pytest.param(
            {"assignee": None, "capability": {"kind": "mcp", "name": "x"}},
            NotFound,
            id="nobody-offers",
        ),
        pytest.param({"assignee": None}, InvalidInput, id="neither"),
        pytest.param({"capability": {"kind": "repo", "name": "prickle"}}, InvalidInput, id="both"),
        pytest.param(
            {"assignee": None, "capability": {"kind": "spell", "name": "x"}},
            InvalidInput,
            id="unknown-capability-kind",
        ),
    ],
)
async def test_a_reroute_with_bad_arguments_is_refused_and_changes_nothing(
    store, kw, error
) -> None:
    task = await drive(store, "returned")
    await refused(store, task.id, error, "reroute", PLANNER, **kw)
