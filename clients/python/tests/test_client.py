"""Every verb and query of the client against a real `prickle serve`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from conftest import HELPER_OFFERS, Cast, packet, result
from prickle_client import AsyncClient, Client, Task, TaskState


@pytest.fixture(scope="module")
def planner(cast: Cast) -> Iterator[Client]:
    with cast.client("alice/planner") as client:
        yield client


@pytest.fixture(scope="module")
def coder(cast: Cast) -> Iterator[Client]:
    with cast.client("bob/coder") as client:
        yield client


@pytest.fixture(scope="module")
def bob(cast: Cast) -> Iterator[Client]:
    with cast.client("bob") as client:
        yield client


@pytest.fixture(scope="module")
def alice(cast: Cast) -> Iterator[Client]:
    with cast.client("alice") as client:
        yield client


def accepted(planner: Client, coder: Client, project: str = "apps") -> Task:
    task = planner.handoff(project, "bob/coder", packet())
    return coder.accept_task(task.id)


def test_handoff_routes_and_returns_the_typed_task(planner: Client) -> None:
    task = planner.handoff("apps", "bob/coder", packet(), display_title="Health", turn_budget=9)
    assert task.state is TaskState.routed
    assert (task.assignee, task.requester) == ("bob/coder", "alice/planner")
    assert task.display_title == "Health" and task.turn_budget == 9
    assert task.packet.acceptance_criteria == packet()["acceptance_criteria"]
    assert task.version >= 1 and "cancel_task" in task.allowed_verbs
    assert task.as_protocol["id"] == task.id


def test_a_handoff_with_an_idempotency_key_makes_one_task(planner: Client) -> None:
    first = planner.handoff("apps", "bob/coder", packet(), idempotency_key="once-1")
    again = planner.handoff("apps", "bob/coder", packet(), idempotency_key="once-1")
    assert again.id == first.id


def test_request_capability_routes_to_the_agent_offering_it(planner: Client) -> None:
    task = planner.request_capability("apps", HELPER_OFFERS, packet())
    assert task.assignee == "bob/helper"
    assert task.route.capability is not None and task.route.capability.name == "prickle"


def test_the_whole_run_accept_start_checkpoint_return(planner: Client, coder: Client) -> None:
    task = accepted(planner, coder)
    assert task.state is TaskState.accepted
    task = coder.start_task(task.id, expected_version=task.version)
    assert task.state is TaskState.working
    task = coder.save_checkpoint(task.id, {"progress": "half", "next_steps": ["the rest"]})
    assert task.latest_checkpoint is not None and task.latest_checkpoint.next_steps == ["the rest"]
    done = coder.return_result(task.id, result(submission_id="s-1"))
    assert done.state is TaskState.completed
    assert done.result is not None and done.result.submission_id == "s-1"


def test_wait_on_a_human_and_the_answer(planner: Client, coder: Client, alice: Client) -> None:
    task = coder.start_task(accepted(planner, coder).id)
    task = coder.wait_on(task.id, "human", question="Which port?")
    assert task.state is TaskState.waiting and task.waiting_on is not None
    assert alice.answer(task.id, "8080").state is TaskState.working


def test_stop_run_resume_run_and_hand_back(planner: Client, coder: Client, bob: Client) -> None:
    task = coder.start_task(accepted(planner, coder).id)
    assert bob.stop_run(task.id, "pause").state is TaskState.waiting
    assert bob.resume_run(task.id).state is TaskState.working
    back = coder.hand_back(task.id, "not mine", {"progress": "looked at it"})
    assert back.state is TaskState.returned


def test_reroute_after_a_hand_back(planner: Client, coder: Client) -> None:
    task = planner.handoff("apps", "bob/coder", packet())
    coder.hand_back(task.id, "busy")
    again = planner.reroute(task.id, assignee="bob/helper")
    assert (again.state, again.assignee) == (TaskState.routed, "bob/helper")


def test_approve_handoff_and_deny_task_by_the_owner(cast: Cast, bob: Client) -> None:
    with cast.client("carol/spy") as spy:  # bob's gate has no rule for carol: it holds
        held = spy.handoff("apps", "bob/coder", packet())
        other = spy.handoff("apps", "bob/coder", packet())
    assert held.state is TaskState.waiting
    assert bob.approve_handoff(held.id, "fine").state is TaskState.routed
    assert bob.deny_task(other.id, "no").state is TaskState.rejected


def test_decide_result_and_cancel_task(planner: Client, coder: Client, alice: Client) -> None:
    task = accepted(planner, coder, project="review")
    waiting = coder.return_result(task.id, result())
    assert waiting.state is TaskState.approval
    assert alice.decide_result(task.id, "accept").state is TaskState.completed
    other = planner.handoff("apps", "bob/coder", packet())
    assert planner.cancel_task(other.id, "not needed").state is TaskState.cancelled


def test_queries_me_task_tasks_and_task_events(planner: Client, coder: Client) -> None:
    assert planner.me().id == "alice/planner"
    made = [planner.handoff("pages", "bob/coder", packet()).id for _ in range(5)]
    assert planner.task(made[0]) is not None and planner.task("no-such-task") is None
    listed = [t.id for t in planner.tasks(project="pages", page_size=2)]
    assert listed == made
    assert [t.id for t in coder.tasks(project="pages", state="routed")] == made
    page = planner.tasks_page(project="pages", first=2)
    assert page.total_count == 5 and page.page_info.has_next_page
    events = planner.task_events(task_id=made[0])
    assert [e.to_state for e in events][-1] is TaskState.routed


async def test_the_async_client_is_the_same_api(cast: Cast) -> None:
    async with AsyncClient(cast.url, cast.tokens["alice/planner"]) as planner:
        task = await planner.handoff("apps", "bob/coder", packet())
        assert (await planner.task(task.id)) is not None
        assert [t.id async for t in planner.tasks(project="apps", state="routed")][-1] == task.id


def test_queries_task_graph_task_states_allowed_moves_and_principal(
    planner: Client, alice: Client
) -> None:
    parent = planner.handoff("graph", "bob/coder", packet())
    graph = planner.task_graph(parent.id, depth=2)
    assert graph is not None and graph.root_id == parent.id
    assert [t.id for t in graph.tasks] == [parent.id] and not graph.truncated
    assert planner.task_graph("no-such-task") is None
    states = {s.name: s for s in planner.task_states()}
    assert states[TaskState.completed].terminal and not states[TaskState.routed].terminal
    moves = planner.allowed_moves()
    assert any(m.from_ is TaskState.routed and "accept_task" in m.verbs for m in moves)
    found = alice.principal("alice/planner")
    assert found is not None and (found.kind, found.owner) == ("agent", "alice")
    assert alice.principal("nobody-at-all") is None


def test_the_owners_administration(cast: Cast, planner: Client, alice: Client) -> None:
    made = alice.register_agent("clerk", [{"kind": "repo", "name": "ledger"}])
    assert made.agent_id == "alice/clerk" and made.token
    extra = alice.create_token(agent="alice/clerk", label="spare")
    assert extra.token_info.principal == "alice/clerk" and extra.token_info.label == "spare"
    assert extra.token_info.id in [t.id for t in alice.tokens()]
    assert alice.revoke_token(extra.token_info.id).revoked_at is not None
    rule = alice.set_gate_rule({"effect": "deny", "project": "closed", "priority": 5})
    assert alice.delete_gate_rule(rule.id) is True
    policy = alice.set_result_rule({"policy": "require_approval", "project": "closed"})
    assert alice.delete_result_rule(policy.id) is True
    planner.handoff("shared", "bob/coder", packet())  # the project, administered by alice
    assert alice.add_project_member("shared", "carol") is True
    assert alice.remove_project_member("shared", "carol") is True

    schedule = alice.create_schedule(
        {"project": "timed", "assignee": "alice/clerk", "packet": packet(), "every_seconds": 3600}
    )
    assert [s.id for s in alice.schedules(project="timed")] == [schedule.id]
    assert alice.pause_schedule(schedule.id).paused
    assert not alice.resume_schedule(schedule.id).paused
    changed = {"project": "timed", "assignee": "alice/clerk", "packet": packet()}
    assert alice.update_schedule(schedule.id, {**changed, "every_seconds": 7200}).every_seconds
    ran = alice.run_schedule_now(schedule.id)
    assert (ran.project, ran.assignee) == ("timed", "alice/clerk")
    assert alice.delete_schedule(schedule.id) is True

    hook = alice.create_webhook({"url": "https://1.1.1.1/prickle", "project": "quiet"})
    assert hook.secret and hook.webhook.id in [w.id for w in alice.webhooks()]
    assert alice.enable_webhook(hook.webhook.id).enabled
    assert alice.rotate_webhook_secret(hook.webhook.id).secret != hook.secret
    assert alice.webhook_deliveries(hook.webhook.id) == []
    assert alice.delete_webhook(hook.webhook.id) is True

    alice.cancel_task(ran.id)
    erased = alice.erase_agent("alice/clerk")
    assert erased.principal == "alice/clerk" and erased.tokens_revoked >= 1
    with Client(cast.url, cast.server.token("dora")) as dora:
        assert dora.erase_person("dora").principal == "dora"
