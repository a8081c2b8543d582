"""People act from the board: the verbs in the detail panel, the inbox, find, the timeline.

Headless Chromium against a real `prickle serve` on a database seeded through the service
layer (the cast of tests/support/factory.py: alice's agent hands work to bob's agents; bob's gate
holds project `held`; alice's result rule asks for her approval in project `review`).
What a person does in the page is then read back through the API: the event log names
that person as the actor.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from axe import every_violation
from chromium import ARTIFACTS, wait_until
from factory import ALICE, BOB, CAROL, CODER, call, drive, evidence, give, packet, result, setup
from server import Server, module_database, start

from app.service import admin
from app.storage.migrate import upgrade
from app.storage.store import Store

pytestmark = pytest.mark.once  # the same on either backend: not run on PostgreSQL

LONG_HISTORY = 45  # checkpoints on one task: its timeline needs three pages


@dataclass
class Cast:
    alice: str
    bob: str
    carol: str
    coder: str  # an agent's token
    tasks: dict[str, str] = field(default_factory=dict)  # what each test moves, by name


async def seed(url: str) -> Cast:
    store = Store(url)
    try:
        await upgrade(store.engine)
        await setup(store)
        tasks = {
            "held": (await drive(store, "waiting", "owner_approval")).id,
            "held_for_inbox": (await drive(store, "waiting", "owner_approval")).id,
            "approval": (await drive(store, "approval")).id,
            "question": (await drive(store, "waiting", "human", "working")).id,
            "cancel": (await drive(store, "routed")).id,
            "stale": (await drive(store, "routed")).id,
            "narrow": (await drive(store, "approval")).id,
            "returned": (await drive(store, "returned")).id,
            "asks_alice": (await drive(store, "waiting", "human", "accepted")).id,
            "answered_meanwhile": (await drive(store, "waiting", "human", "working")).id,
            "held_phone": (await drive(store, "waiting", "owner_approval")).id,
            "approval_phone": (await drive(store, "approval")).id,
            "question_phone": (await drive(store, "waiting", "human", "working")).id,
            "send_back": (await drive(store, "approval")).id,
            "question_offline": (await drive(store, "waiting", "human", "working")).id,
            "reject_it": (await drive(store, "approval")).id,
        }
        evidenced = await drive(store, "working", project="review", display_title="Evidenced")
        items = [
            evidence([0], url="https://ci.example/runs/7"),
            evidence(kind="note", summary="The PR is open", url="https://git.example/pr/7"),
        ]
        await call(store, "return_result", CODER, evidenced.id, result=result(items))
        tasks["evidenced"] = evidenced.id
        denied = await drive(store, "waiting", "owner_approval", display_title="Denied by bob")
        await call(store, "deny_task", BOB, denied.id, reason="Not in this quarter")
        tasks["denied"] = denied.id
        sent_back = await drive(store, "approval", display_title="Sent back to work")
        verdicts = [{"criterion": 1, "accepted": False, "note": "No README section"}]
        decision = {"decision": "request_changes", "verdicts": verdicts, "reason": "Document it"}
        await call(store, "decide_result", ALICE, sent_back.id, **decision)
        tasks["sent_back"] = sent_back.id
        for i in range(3):  # bob approves these together from his inbox
            held = await drive(store, "waiting", "owner_approval", display_title=f"Bulk {i}")
            tasks[f"bulk{i}"] = held.id
        for i in range(3):  # alice decides these together from hers
            returned = await drive(store, "approval", display_title=f"Decide together {i}")
            tasks[f"decide{i}"] = returned.id
        handed = await give(store, display_title="Handed back with a reason")
        await call(store, "hand_back", CODER, handed.id, reason="The schema is missing")
        tasks["handed"] = handed.id
        for i, (title, assignee) in enumerate(
            [
                ("Rotate the signing keys", "bob/coder"),
                ("Migrate the billing tables", "bob/helper"),
                ("Rotate the log files", "bob/helper"),
            ]
        ):
            task = await give(store, assignee=assignee, display_title=title)
            tasks[f"find{i}"] = task.id
        long = await drive(store, "working", display_title="A long history")
        for i in range(LONG_HISTORY):
            checkpoint = {"progress": f"step {i} done"}
            await call(store, "save_checkpoint", CODER, long.id, checkpoint=checkpoint)
        tasks["long"] = long.id
        tokens = [(await admin.provision_token(store, p)).token for p in (ALICE, BOB, CAROL, CODER)]
        return Cast(*tokens, tasks=tasks)
    finally:
        await store.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Cast]]:
    directory = tmp_path_factory.mktemp("board_act")
    with module_database(directory) as url:
        cast = asyncio.run(seed(url))
        server = start(url, directory / "logs")
        try:
            yield server, cast
        finally:
            server.stop()


def sign_in(page: Any, server: Server, token: str, query: str) -> None:
    page.goto(f"{server.base_url}/board?{query}")
    page.fill("#token", token)
    page.click("#token-form button[type=submit]")
    wait_until(page, "prickleBoard.status === 'live' && prickleBoard.inbox !== null")


def open_task(page: Any, server: Server, token: str, project: str, task_id: str) -> Any:
    sign_in(page, server, token, f"project={project}&task={task_id}")
    detail = page.locator(f"#detail [data-task='{task_id}']")
    detail.wait_for()
    return detail


def show_task(page: Any, task_id: str) -> Any:
    """Open another task in the panel of a board already signed in."""
    page.evaluate(f"prickleBoard.open('{task_id}')")
    detail = page.locator(f"#detail [data-task='{task_id}']")
    detail.wait_for()
    return detail


def verbs_shown(page: Any) -> list[str]:
    return page.evaluate(
        "[...document.querySelectorAll('#detail form.verb')].map(f => f.dataset.verb)"
    )


def allowed_verbs(server: Server, task_id: str, token: str) -> list[str]:
    query = "query($id: ID!) { task(id: $id) { allowed_verbs } }"
    return server.data(query, {"id": task_id}, token)["task"]["allowed_verbs"]


def task_of(server: Server, task_id: str, token: str) -> dict[str, Any]:
    query = (
        "query($id: ID!) { task(id: $id) { state version waiting_on result {"
        " verdicts { criterion accepted note } decided_by { ... on PersonRef { handle } } } } }"
    )
    return server.data(query, {"id": task_id}, token)["task"]


def last_event(server: Server, task_id: str, token: str) -> dict[str, Any]:
    query = (
        "query($t: ID!) { task_events(task_id: $t, first: 500) "
        "{ edges { node { kind verb actor from_state to_state } } } }"
    )
    edges = server.data(query, {"t": task_id}, token)["task_events"]["edges"]
    return edges[-1]["node"]


def events_count(server: Server, task_id: str, token: str) -> int:
    query = "query($t: ID!) { task_events(task_id: $t, first: 0) { total_count } }"
    return server.data(query, {"t": task_id}, token)["task_events"]["total_count"]


def column_of(page: Any, task_id: str) -> str | None:
    return page.evaluate(
        "(id) => document.querySelector(`.card[data-id='${id}']`)"
        "?.closest('.column')?.dataset.state ?? null",
        task_id,
    )


def shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), full_page=True)


def done_as_own(page: Any, task_id: str, state: str) -> None:
    """The panel, redrawn for the person's own move, says it is done and takes nothing away."""
    page.locator(f"#detail [data-task='{task_id}'][data-state={state}]").wait_for()
    status = page.locator("#act-status")
    status.filter(has_text="done").wait_for()
    assert "error" not in (status.get_attribute("class") or "")
    assert page.locator("#detail .lost").count() == 0, page.locator("#detail .lost").inner_text()
    assert "before it was sent" not in page.locator("#detail").inner_text()


# acting


def test_a_person_approves_a_held_handoff_from_the_board(served, page) -> None:
    server, cast = served
    task_id = cast.tasks["held"]
    detail = open_task(page, server, cast.bob, "held", task_id)
    assert sorted(verbs_shown(page)) == sorted(allowed_verbs(server, task_id, cast.bob))
    assert "approve_handoff" in verbs_shown(page)
    shot(page, "board-act-approve.png")

    form = detail.locator("form[data-verb=approve_handoff]")
    form.get_by_label("Reason").fill("Fine by me")
    form.get_by_role("button", name="Approve handoff").click()

    wait_until(page, f"prickleBoard.stateOf('{task_id}') === 'routed'")
    done_as_own(page, task_id, "routed")
    assert column_of(page, task_id) == "routed"
    event = last_event(server, task_id, cast.bob)
    assert (event["verb"], event["actor"], event["from_state"], event["to_state"]) == (
        "approve_handoff",
        "bob",
        "waiting",
        "routed",
    )


def test_a_person_decides_a_result_with_a_verdict_per_criterion(served, page) -> None:
    server, cast = served
    task_id = cast.tasks["approval"]
    detail = open_task(page, server, cast.alice, "review", task_id)
    form = detail.locator("form[data-verb=decide_result]")
    form.get_by_label("Decision").select_option("accept")
    form.get_by_label("1. GET /health answers 200").select_option("yes")
    form.get_by_label("2. it is documented").select_option("no")
    form.get_by_label("note on criterion 2").fill("The README section is thin")
    form.get_by_label("Reason").fill("Good enough to ship")
    shot(page, "board-act-decide.png")
    form.get_by_role("button", name="Decide").click()

    wait_until(page, f"prickleBoard.stateOf('{task_id}') === 'completed'")
    done_as_own(page, task_id, "completed")
    event = last_event(server, task_id, cast.alice)
    assert (event["verb"], event["actor"], event["to_state"]) == (
        "decide_result",
        "alice",
        "completed",
    )
    result = task_of(server, task_id, cast.alice)["result"]
    assert result["verdicts"] == [
        {"criterion": 0, "accepted": True, "note": None},
        {"criterion": 1, "accepted": False, "note": "The README section is thin"},
    ]
    assert result["decided_by"] == {"handle": "alice"}


def test_a_decision_reads_in_the_protocols_words_with_its_verdicts(served, page) -> None:
    server, cast = served
    task_id = cast.tasks["send_back"]
    detail = open_task(page, server, cast.alice, "review", task_id)
    form = detail.locator("form[data-verb=decide_result]")
    form.get_by_label("Decision").select_option("request_changes")
    form.get_by_label("1. GET /health answers 200").select_option("yes")
    form.get_by_label("2. it is documented").select_option("no")
    form.get_by_label("note on criterion 2").fill("No README section yet")
    form.get_by_label("Reason").fill("Document it, then send it again")
    form.get_by_role("button", name="Decide").click()
    done_as_own(page, task_id, "working")

    status = page.locator("#detail .result-status").inner_text()
    assert status == "changes requested", status  # the result's status is `rejected`
    asked = page.locator("#detail .asked").inner_text()
    assert "Changes requested" in asked and "alice" in asked
    assert "Document it, then send it again" in asked and "No README section yet" in asked
    assert "not accepted" in asked
    decided = page.locator("#detail #timeline .tl", has_text="requested changes")
    decided.wait_for()
    assert "alice" in decided.inner_text()
    shot(page, "board-changes-requested.png")
    assert every_violation(page, "#detail") == []

    task_id = cast.tasks["reject_it"]
    detail = show_task(page, task_id)
    form = detail.locator("form[data-verb=decide_result]")
    form.get_by_label("Decision").select_option("reject")
    form.get_by_label("2. it is documented").select_option("no")
    form.get_by_role("button", name="Decide").click()
    done_as_own(page, task_id, "rejected")
    assert page.locator("#detail .result-status").inner_text() == "rejected"
    page.locator("#detail #timeline .tl", has_text="rejected the result").wait_for()


def test_a_person_answers_a_task_waiting_on_a_human(served, page) -> None:
    server, cast = served
    task_id = cast.tasks["question"]
    detail = open_task(page, server, cast.alice, "work", task_id)
    form = detail.locator("form[data-verb=answer]")
    form.get_by_label("Answer").fill("Port 8080")
    form.get_by_role("button", name="Answer").click()

    wait_until(page, f"prickleBoard.stateOf('{task_id}') === 'working'")
    done_as_own(page, task_id, "working")
    event = last_event(server, task_id, cast.alice)
    assert (event["verb"], event["actor"], event["to_state"]) == ("answer", "alice", "working")


def test_on_a_phone_the_persons_own_moves_are_done_not_lost(served, browser) -> None:
    server, cast = served
    context = browser.new_context(viewport={"width": 390, "height": 844})
    try:
        tab = context.new_page()
        detail = open_task(tab, server, cast.bob, "held", cast.tasks["held_phone"])
        form = detail.locator("form[data-verb=approve_handoff]")
        form.get_by_label("Reason").fill("Fine by me")
        form.get_by_role("button", name="Approve handoff").click()
        done_as_own(tab, cast.tasks["held_phone"], "routed")

        tab.evaluate("sessionStorage.clear()")
        task_id = cast.tasks["approval_phone"]
        detail = open_task(tab, server, cast.alice, "review", task_id)
        form = detail.locator("form[data-verb=decide_result]")
        form.get_by_label("Decision").select_option("accept")
        form.get_by_label("Reason").fill("Ship it")
        form.get_by_role("button", name="Decide").click()
        done_as_own(tab, task_id, "completed")

        task_id = cast.tasks["question_phone"]
        detail = show_task(tab, task_id)
        form = detail.locator("form[data-verb=answer]")
        form.get_by_label("Answer").fill("Port 8080")
        form.get_by_role("button", name="Answer").click()
        done_as_own(tab, task_id, "working")
        shot(tab, "board-390-answered.png")
    finally:
        context.close()


def test_a_person_cancels_a_task_from_the_board(served, page) -> None:
    server, cast = served
    task_id = cast.tasks["cancel"]
    detail = open_task(page, server, cast.alice, "work", task_id)
    page.evaluate("window.notReloaded = true")
    form = detail.locator("form[data-verb=cancel_task]")
    form.get_by_label("Reason").fill("No longer needed")
    form.get_by_role("button", name="Cancel task").click()

    wait_until(page, f"prickleBoard.stateOf('{task_id}') === 'cancelled'")
    assert column_of(page, task_id) == "cancelled"
    assert page.evaluate("window.notReloaded") is True
    event = last_event(server, task_id, cast.alice)
    assert (event["verb"], event["actor"], event["to_state"]) == (
        "cancel_task",
        "alice",
        "cancelled",
    )
    page.locator(f"#detail [data-task='{task_id}'][data-state=cancelled]").wait_for()
    assert verbs_shown(page) == []


def test_a_principal_without_a_verb_never_sees_its_control(served, page) -> None:
    server, cast = served
    task_id = cast.tasks["held_for_inbox"]
    open_task(page, server, cast.alice, "held", task_id)  # the requester's owner, not the gate's
    shown = verbs_shown(page)
    assert sorted(shown) == sorted(allowed_verbs(server, task_id, cast.alice))
    assert "approve_handoff" not in shown and "deny_task" not in shown
    assert page.locator("#detail form[data-verb=approve_handoff]").count() == 0


def test_a_stale_view_gets_conflict_and_refreshes(served, page) -> None:
    server, cast = served
    task_id = cast.tasks["stale"]
    detail = open_task(page, server, cast.alice, "work", task_id)
    drawn = int(detail.get_attribute("data-version"))
    page.evaluate("prickleBoard.pauseConnection()")  # the view stops hearing of moves
    server.run_data("mutations/accept_task", {"task_id": task_id}, cast.bob)

    detail.locator("form[data-verb=cancel_task] button").click()

    status = page.locator("#act-status")
    status.filter(has_text="conflict").wait_for()
    assert "refreshed" in status.inner_text()
    page.locator(f"#detail [data-task='{task_id}'][data-version='{drawn + 1}']").wait_for()
    shot(page, "board-act-conflict.png")
    assert task_of(server, task_id, cast.alice)["state"] == "accepted"  # nothing was overwritten
    assert page.evaluate("prickleBoard.acted") == [
        {"verb": "cancel_task", "task_id": task_id, "ok": False, "code": "conflict"}
    ]
    page.evaluate("prickleBoard.resumeConnection()")
    wait_until(page, f"prickleBoard.stateOf('{task_id}') === 'accepted'")


def test_a_refused_move_is_shown_in_words_with_its_code_and_changes_nothing(served, page) -> None:
    server, cast = served
    task_id = cast.tasks["returned"]
    detail = open_task(page, server, cast.alice, "work", task_id)
    form = detail.locator("form[data-verb=reroute]")
    form.get_by_label("New assignee").fill("bob/nobody")
    form.get_by_role("button", name="Reroute").click()

    status = page.locator("#act-status.error")
    status.wait_for()
    [acted] = page.evaluate("prickleBoard.acted")
    assert acted["ok"] is False and acted["code"]
    assert status.inner_text().startswith("Not done: ")
    assert status.inner_text().endswith(f"({acted['code']})")
    assert task_of(server, task_id, cast.alice)["state"] == "returned"
    assert column_of(page, task_id) == "returned"


def test_a_move_the_network_stopped_is_said_in_words_and_sent_again(served, browser) -> None:
    server, cast = served
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    errors: list[str] = []  # offline, the browser logs failed requests: only script errors count
    tab.on("pageerror", lambda error: errors.append(str(error)))
    try:
        task_id = cast.tasks["question_offline"]
        detail = open_task(tab, server, cast.alice, "work", task_id)
        form = detail.locator("form[data-verb=answer]")
        form.get_by_label("Answer").fill("Port 9090")
        context.set_offline(True)
        form.get_by_role("button", name="Answer").click()

        status = tab.locator("#act-status.error")
        status.wait_for()
        said = status.inner_text()
        assert "Can't reach the server" in said and "was not sent" in said, said
        assert "Failed to fetch" not in said
        shot(tab, "board-not-sent.png")
        context.set_offline(False)
        wait_until(tab, "prickleBoard.status === 'live'")
        status.get_by_role("button", name="Send again").click()
        done_as_own(tab, task_id, "working")
        event = last_event(server, task_id, cast.alice)
        assert (event["verb"], event["actor"]) == ("answer", "alice")

        context.set_offline(True)
        other = cast.tasks["handed"]
        tab.evaluate(f"prickleBoard.open('{other}')")
        failed = tab.locator("#detail-body .error")
        failed.wait_for()
        assert "Could not open this task: Can't reach the server" in failed.inner_text()
        context.set_offline(False)
        failed.get_by_role("button", name="Try again").click()
        tab.locator(f"#detail [data-task='{other}']").wait_for()
        assert errors == []
    finally:
        context.close()


def test_what_a_person_typed_survives_a_live_refresh_of_the_panel(served, page) -> None:
    server, cast = served
    task_id = cast.tasks["long"]
    detail = open_task(page, server, cast.alice, "work", task_id)
    drawn = int(detail.get_attribute("data-version"))
    reason = detail.locator("form[data-verb=cancel_task]").get_by_label("Reason")
    reason.fill("Half-typed reas")
    checkpoint = {"task_id": task_id, "checkpoint": {"progress": "meanwhile"}}
    server.run_data("mutations/save_checkpoint", checkpoint, cast.bob)

    page.locator(f"#detail [data-task='{task_id}'][data-version='{drawn + 1}']").wait_for()
    reason = page.locator("#detail form[data-verb=cancel_task]").get_by_label("Reason")
    assert reason.input_value() == "Half-typed reas"
    assert page.evaluate("document.activeElement.name") == "reason"


# the inbox


def test_the_inbox_shows_a_new_held_handoff_live_and_drops_it_once_decided(served, page) -> None:
    server, cast = served
    sign_in(page, server, cast.bob, "project=work&inbox=1")
    assert page.locator("#inbox").is_visible()
    assert cast.tasks["held_for_inbox"] in page.evaluate("prickleBoard.inbox")

    inp = {
        "project": "held",
        "assignee": "bob/coder",
        "packet": packet(),
        "display_title": "Needs bob",
    }
    sent = time.monotonic()
    created = server.run_data("mutations/handoff", {"input": inp}, cast.alice)["handoff"]["id"]
    item = page.locator(f"#inbox-list [data-id='{created}']")
    item.wait_for()
    seen = time.monotonic() - sent
    assert "handoff held for your approval" in item.inner_text()
    assert "Needs bob" in item.inner_text()
    print(f"inbox: a new held handoff shown {seen * 1000:.0f} ms after the mutation returned")
    shot(page, "board-inbox.png")
    assert every_violation(page, "#inbox") == []  # axe-core: no violation at all

    item.get_by_role("button").click()
    detail = page.locator(f"#detail [data-task='{created}']")
    detail.locator("form[data-verb=approve_handoff] button").click()
    item.wait_for(state="detached")
    assert created not in page.evaluate("prickleBoard.inbox")
    assert last_event(server, created, cast.bob)["actor"] == "bob"


def test_the_inbox_gathers_results_and_questions_from_every_project(served, page) -> None:
    server, cast = served
    sign_in(page, server, cast.alice, "project=held&inbox=1")
    inbox = page.evaluate("prickleBoard.inbox")
    for name, why, project in [
        ("narrow", "result waits for your decision", "review"),
        ("asks_alice", "question waits for your answer", "work"),
    ]:
        assert cast.tasks[name] in inbox
        text = page.locator(f"#inbox-list [data-id='{cast.tasks[name]}']").inner_text()
        assert why in text and project in text
    asked = page.locator(f"#inbox-list [data-id='{cast.tasks['asks_alice']}'] .q").inner_text()
    assert "Which port?" in asked  # the question itself, in the item
    assert cast.tasks["held_for_inbox"] not in inbox  # bob's to approve, not alice's
    page.locator(f"#inbox-list [data-id='{cast.tasks['asks_alice']}'] button").click()
    page.locator(
        f"#detail [data-task='{cast.tasks['asks_alice']}'] form[data-verb=answer]"
    ).wait_for()


def test_the_inbox_filter_lists_every_project_with_something_waiting_and_how_much(
    served, page
) -> None:
    server, cast = served
    sign_in(page, server, cast.alice, "project=held&inbox=1")
    page.locator("#inbox-project").select_option("work")  # one project's items shown only
    page.locator("#inbox-list[data-project=work]").wait_for()
    query = "{ inbox(first: 500) { edges { node { project } } } }"
    edges = server.data(query, None, cast.alice)["inbox"]["edges"]
    waiting = Counter(e["node"]["project"] for e in edges)
    assert len(waiting) >= 2, waiting  # more than the one chosen
    choices = page.locator("#inbox-project option").all_inner_texts()
    expected = [f"{p} ({n})" for p, n in sorted(waiting.items())]
    assert choices == [f"every project ({sum(waiting.values())})", *expected], choices


def test_the_inbox_is_a_queue_grouped_oldest_first_with_handoffs_approved_together(
    served, page
) -> None:
    server, cast = served
    sign_in(page, server, cast.alice, "project=work&inbox=1")
    groups = page.evaluate(
        "[...document.querySelectorAll('#inbox-list [data-group]')].map(g => g.dataset.group)"
    )
    assert groups[:1] == ["decide"] and "answer" in groups, groups  # what is asked, decide first
    answer = page.locator("[data-group=answer] [data-id] time")
    since = answer.evaluate_all("ts => ts.map(t => t.getAttribute('datetime'))")
    assert since == sorted(since), since  # oldest waiting first
    page.locator("#inbox-project").select_option("review")
    page.locator("#inbox-list[data-project=review]").wait_for()  # read again, for review
    shown = page.evaluate(
        "[...document.querySelectorAll('#inbox-list [data-id]')].map(e => e.dataset.id)"
    )
    assert shown and all(page.evaluate("prickleBoard.inbox").count(i) == 1 for i in shown)
    assert cast.tasks["asks_alice"] not in shown and cast.tasks["narrow"] in shown
    assert every_violation(page, "#inbox") == []

    page.evaluate("sessionStorage.clear()")
    sign_in(page, server, cast.bob, "project=held&inbox=1")
    bulk = [cast.tasks[f"bulk{i}"] for i in range(3)]
    for task_id in bulk:
        page.locator(f"[data-group=approve] [data-id='{task_id}'] input[type=checkbox]").check()
    page.evaluate("prickleBoard.pauseConnection()")  # the inbox cannot hear of the move below
    move = {"task_id": bulk[2], "reason": "Not needed after all"}
    server.run_data("mutations/cancel_task", move, cast.alice)
    page.get_by_role("button", name="Approve selected").click()

    outcome = page.locator("#inbox-outcome")
    outcome.filter(has_text="Approved 2 of 3").wait_for()
    for task_id in bulk[:2]:
        assert "approved" in outcome.locator(f"[data-outcome='{task_id}']").inner_text()
        assert last_event(server, task_id, cast.bob)["verb"] == "approve_handoff"
    refused = outcome.locator(f"[data-outcome='{bulk[2]}']").inner_text()
    assert "not done" in refused and "someone moved it" in refused, refused
    assert task_of(server, bulk[2], cast.bob)["state"] == "cancelled"  # one request each
    shot(page, "board-inbox-bulk.png")
    page.evaluate("prickleBoard.resumeConnection()")
    for task_id in bulk:
        page.locator(f"#inbox-list [data-id='{task_id}']").wait_for(state="detached")


def test_results_are_decided_together_with_one_decision_each_done_or_refused_alone(
    served, page
) -> None:
    server, cast = served
    sign_in(page, server, cast.alice, "project=review&inbox=1")
    together = [cast.tasks[f"decide{i}"] for i in range(3)]
    for task_id in together:
        page.locator(f"[data-group=decide] [data-id='{task_id}'] input[type=checkbox]").check()
    page.get_by_role("button", name="Decide selected").click()  # no decision chosen yet
    page.locator("#inbox-outcome", has_text="Choose a decision").wait_for()
    assert all(task_of(server, t, cast.alice)["state"] == "approval" for t in together)

    page.evaluate("prickleBoard.pauseConnection()")  # the inbox cannot hear of the move below
    move = {"task_id": together[2], "decision": "accept"}
    server.run_data("mutations/decide_result", move, cast.alice)
    page.get_by_label("Decision for the selected results").select_option("request_changes")
    page.get_by_label("Reason for deciding the selected results").fill("Add the README section")
    page.get_by_role("button", name="Decide selected").click()

    outcome = page.locator("#inbox-outcome")
    outcome.filter(has_text="Decided (changes requested) 2 of 3").wait_for()
    for task_id in together[:2]:
        assert "changes requested" in outcome.locator(f"[data-outcome='{task_id}']").inner_text()
        assert last_event(server, task_id, cast.alice)["verb"] == "decide_result"
        assert task_of(server, task_id, cast.alice)["state"] == "working"
    refused = outcome.locator(f"[data-outcome='{together[2]}']").inner_text()
    assert "not done" in refused and "someone moved it" in refused, refused
    assert task_of(server, together[2], cast.alice)["state"] == "completed"  # one request each
    shot(page, "board-inbox-decide.png")
    assert every_violation(page, "#inbox") == []
    page.evaluate("prickleBoard.resumeConnection()")
    for task_id in together:
        page.locator(f"#inbox-list [data-id='{task_id}']").wait_for(state="detached")


def test_the_inbox_of_someone_with_nothing_waiting_is_empty(served, page) -> None:
    server, cast = served
    sign_in(page, server, cast.carol, "inbox=1")
    assert page.evaluate("prickleBoard.inbox") == []
    assert "Nothing waits on you." in page.locator("#inbox-list").inner_text()


# find


def test_find_filters_the_board_and_the_url_keeps_the_view(served, page) -> None:
    server, cast = served
    sign_in(page, server, cast.alice, "project=work")
    wait_until(page, f"prickleBoard.stateOf('{cast.tasks['find0']}') === 'routed'")
    page.get_by_label("Text").fill("rotate")
    wait_until(page, "location.search.includes('q=rotate')")
    visible = page.evaluate(
        "[...document.querySelectorAll('.card')].filter(c => !c.hidden).map(c => c.dataset.id)"
    )
    assert sorted(visible) == sorted([cast.tasks["find0"], cast.tasks["find2"]])

    page.get_by_label("Assignee").fill("helper")
    page.locator("#find-state").select_option("routed")
    wait_until(page, "location.search.includes('assignee=helper')")
    assert page.evaluate("prickleBoard.shown") == 1
    assert page.locator(".column:not([hidden])").count() == 1
    assert "1 of" in page.locator("#find-shown").inner_text()

    shared = page.url
    page.goto(shared)  # reloaded, or opened by someone it was shared with
    wait_until(page, "prickleBoard.status === 'live' && prickleBoard.size > 0")
    assert page.input_value("#find-text") == "rotate"
    assert page.input_value("#find-assignee") == "helper"
    assert page.input_value("#find-state") == "routed"
    visible = page.evaluate(
        "[...document.querySelectorAll('.card')].filter(c => !c.hidden).map(c => c.dataset.id)"
    )
    assert visible == [cast.tasks["find2"]]

    page.get_by_role("button", name="Clear").click()
    wait_until(page, "!location.search.includes('q=')")
    assert page.evaluate("prickleBoard.shown") == page.evaluate("prickleBoard.size")


# the timeline


def test_the_timeline_pages_through_a_long_history(served, page) -> None:
    server, cast = served
    task_id = cast.tasks["long"]
    detail = open_task(page, server, cast.alice, "work", task_id)
    total = events_count(server, task_id, cast.alice)
    assert total > 40
    items = detail.locator("#timeline .tl")
    items.first.wait_for()
    assert items.count() == 20
    assert f"20 of {total} events" in detail.locator(".tl-count").inner_text()
    first = items.first.inner_text()
    assert "alice/planner" in first and "created" in first

    detail.get_by_role("button", name="Show 20 more").click()
    wait_until(page, "document.querySelectorAll('#timeline .tl').length === 40")
    detail.get_by_role("button", name=f"Show {total - 40} more").click()
    wait_until(page, f"document.querySelectorAll('#timeline .tl').length === {total}")
    assert not detail.locator("#timeline button.more").is_visible()
    seqs = page.evaluate("[...document.querySelectorAll('#timeline .tl')].map(e => +e.dataset.seq)")
    assert seqs == sorted(seqs) and len(set(seqs)) == total
    detail.locator("#timeline").scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "board-timeline.png"))
    last = items.last.inner_text()
    assert "checkpointed" in last and "save_checkpoint" in last
    assert "bob/coder" in items.nth(total - 2).inner_text()

    # A new event refreshes the panel and keeps every page the reader opened.
    server.run_data(
        "mutations/save_checkpoint",
        {"task_id": task_id, "checkpoint": {"progress": "one more"}},
        cast.bob,
    )
    wait_until(page, f"document.querySelectorAll('#timeline .tl').length === {total + 1}")


# keyboard and narrow screens


def test_the_panel_is_reachable_by_keyboard_and_every_control_is_labelled(served, page) -> None:
    server, cast = served
    task_id = cast.tasks["held_for_inbox"]
    sign_in(page, server, cast.bob, "project=held")
    page.focus(f".card[data-id='{task_id}']")
    page.keyboard.press("Enter")
    page.locator(f"#detail [data-task='{task_id}'] form.verb").first.wait_for()
    assert page.evaluate("document.activeElement.id") == "detail-title"
    reached = set()
    for _ in range(12):
        page.keyboard.press("Tab")
        reached.add(
            page.evaluate("document.activeElement.closest('form.verb')?.dataset.verb ?? ''")
        )
        if {"approve_handoff", "deny_task"} <= reached:
            break
    assert {"approve_handoff", "deny_task"} <= reached
    unlabelled = page.evaluate(
        "[...document.querySelectorAll('input, select, textarea, button')]"
        ".filter(e => e.offsetParent !== null)"
        ".filter(e => !(e.labels?.length || e.getAttribute('aria-label') || e.textContent.trim()))"
        ".map(e => e.outerHTML)"
    )
    assert unlabelled == []
    page.keyboard.press("Escape")
    assert page.locator("#detail").is_hidden()
    assert page.evaluate("document.activeElement.dataset.id") == task_id


def test_arrow_keys_move_between_cards_and_columns_and_i_opens_the_inbox(served, page) -> None:
    server, cast = served
    sign_in(page, server, cast.alice, "project=work")
    focusable = "document.querySelectorAll('#board .card[tabindex=\"0\"]').length"
    assert page.evaluate(focusable) == 1  # the board is one Tab stop, not one per card
    at = "(() => { const c = document.activeElement.closest('.card');"
    at += " return c && [c.closest('.column').dataset.state, c.dataset.id]; })()"
    page.focus("#board .card[tabindex='0']")
    column, first = page.evaluate(at)
    page.keyboard.press("ArrowDown")
    assert page.evaluate(at)[0] == column and page.evaluate(at)[1] != first
    page.keyboard.press("ArrowUp")
    assert page.evaluate(at) == [column, first]
    page.keyboard.press("ArrowRight")
    right = page.evaluate(at)
    assert right and right[0] != column
    assert page.evaluate(focusable) == 1
    page.keyboard.press("ArrowLeft")
    assert page.evaluate(at) == [column, first]

    page.keyboard.press("i")
    assert page.locator("#inbox").is_visible()
    item = page.evaluate("document.activeElement.closest('#inbox-list [data-id]')?.dataset.id")
    assert item in page.evaluate("prickleBoard.inbox")
    page.keyboard.press("Enter")
    page.locator(f"#detail [data-task='{item}'] form.verb").first.wait_for()
    assert page.evaluate("document.activeElement.id") == "detail-title"
    page.keyboard.press("Tab")
    first_form = page.evaluate("document.querySelector('#detail form.verb').dataset.verb")
    assert first_form in ("decide_result", "answer", "approve_handoff"), first_form
    assert page.evaluate("document.activeElement.closest('form.verb')?.dataset.verb") == first_form
    assert every_violation(page) == []


def test_the_board_and_the_panel_are_readable_360_pixels_wide(served, browser) -> None:
    server, cast = served
    context = browser.new_context(viewport={"width": 360, "height": 740})
    try:
        tab = context.new_page()
        task_id = cast.tasks["narrow"]
        sign_in(tab, server, cast.alice, "project=review&inbox=1")
        overflow = "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        assert tab.evaluate(overflow) <= 0
        shot(tab, "board-360.png")
        # opened from the keyboard: at this width the board snaps to a column after a scroll,
        # and on a loaded machine a click's press and release landed apart on a board still
        # settling (the card took focus; no click reached it, so nothing opened)
        tab.locator(f".card[data-id='{task_id}']").press("Enter")
        detail = tab.locator(f"#detail [data-task='{task_id}'] form[data-verb=decide_result]")
        detail.wait_for()
        assert tab.evaluate(overflow) <= 0
        wide = tab.evaluate(
            "[...document.querySelectorAll('#detail *')]"
            ".filter(e => e.getBoundingClientRect().right > innerWidth + 1 && !e.closest('pre'))"
            ".map(e => e.tagName + '.' + e.className)"
        )
        assert wide == []
        tab.screenshot(path=str(ARTIFACTS / "board-360-panel.png"), full_page=True)
        assert every_violation(tab) == []
    finally:
        context.close()


# what is asked, the forms, the time (issue: the board for a person deciding)


def test_what_is_asked_stands_above_the_form_that_answers_it(served, page) -> None:
    server, cast = served
    question = cast.tasks["asks_alice"]
    detail = open_task(page, server, cast.alice, "work", question)
    order = page.evaluate(
        "[...document.querySelectorAll('#detail .act > *, #detail .asked')]"
        ".map(e => e.classList.contains('asked') ? 'asked' : e.dataset.verb)"
    )
    assert order[0] == "asked" and order[1] == "answer", order  # the question, then Answer
    asked = detail.locator(".asked").inner_text()
    assert "Which port?" in asked and "bob/coder" in asked
    assert re.search(r"just now|\d+ (min|h|d) ago", asked), asked
    shot(page, "board-asked-question.png")

    result = cast.tasks["narrow"]
    detail = show_task(page, result)
    asked = detail.locator(".asked").inner_text()
    assert "Result to decide" in asked and "Done: /health answers 200" in asked
    assert "GET /health answers 200" in asked and "#1 test_output the tests pass" in asked
    assert page.evaluate("document.querySelector('#detail .act form').dataset.verb") == (
        "decide_result"
    )
    evidence = detail.locator("ol li:has-text('the tests pass') .muted").first.inner_text()
    assert "criteria 1, 2" in evidence  # numbered as the packet's list is, from 1
    shot(page, "board-asked-result.png")

    handed = cast.tasks["handed"]
    detail = show_task(page, handed)
    assert "The schema is missing" in detail.locator(".asked").inner_text()
    assert every_violation(page, "#detail") == []


def test_above_the_form_stands_all_a_decision_needs(served, page) -> None:
    server, cast = served
    task_id = cast.tasks["evidenced"]
    detail = open_task(page, server, cast.alice, "review", task_id)
    asked = detail.locator(".asked")
    text = asked.inner_text()
    assert "The PR is open" in text  # evidence that cites no criterion, too
    assert asked.locator("a[href='https://git.example/pr/7']").count() == 1
    assert asked.locator("a[href='https://ci.example/runs/7']").count() == 1
    uncovered = asked.locator(".asked-criteria > li", has_text="it is documented")
    assert "no evidence" in uncovered.inner_text()
    assert "returned by bob/coder" in text and re.search(r"waiting (< 1 min|\d+ (min|h|d))", text)
    shot(page, "board-asked-evidence.png")
    assert every_violation(page, "#detail") == []

    page.evaluate("sessionStorage.clear()")
    detail = open_task(page, server, cast.bob, "held", cast.tasks["held_for_inbox"])
    text = detail.locator(".asked").inner_text()
    # bob, who may approve it, reads which of his gate rules held it, in words
    why = "Held because your rule: hold handoffs from other owners' agents in project held"
    assert why in text and "(priority 10)" in text, text
    assert "alice/planner" in text and "project held" in text
    assert "gate rule" not in text  # the rule's id only under "details"
    assert re.search(r"waiting (< 1 min|\d+ (min|h|d))", text)
    assert every_violation(page, "#detail") == []

    page.evaluate("sessionStorage.clear()")  # alice, who asked, never reads bob's rules
    detail = open_task(page, server, cast.alice, "held", cast.tasks["held_for_inbox"])
    text = detail.locator(".asked").inner_text()
    assert "bob's permission gate holds handoffs like this one" in text, text
    assert "your rule" not in text and "priority" not in text


def test_words_come_first_and_axe_finds_nothing_in_any_view(served, page) -> None:
    server, cast = served
    sign_in(page, server, cast.alice, "project=review&inbox=1")
    assert every_violation(page) == []  # the board and the inbox
    for name, says in [
        ("evidenced", "no evidence"),  # an uncovered criterion
        ("sent_back", "Changes requested"),
        ("denied", "denied"),
        ("held_for_inbox", "permission gate"),
    ]:
        task_id = cast.tasks[name]
        detail = show_task(page, task_id)
        shown = detail.inner_text()
        assert says in shown, (name, shown)
        head = shown.split("\nACT\n")[0] + shown.split("\nTASK\n")[1].split("\nPACKET\n")[0]
        assert task_id not in head and "_" not in head, head  # no ids, no verbs up front
        assert every_violation(page, "#detail") == [], name
    details = page.locator("#detail details.ids").first
    details.locator("summary").click()
    opened = details.inner_text()
    assert cast.tasks["held_for_inbox"] in opened and "cancel_task" in opened
    shot(page, "board-details.png")


def test_forms_come_in_the_likely_order_with_their_own_labels_and_no_default_decision(
    served, page
) -> None:
    server, cast = served
    detail = open_task(page, server, cast.bob, "held", cast.tasks["held_for_inbox"])
    verbs = verbs_shown(page)
    assert verbs[0] == "approve_handoff" and verbs[-1] == "deny_task", verbs
    labels = page.evaluate(
        "[...document.querySelectorAll('#detail form.verb label')].map(l => l.textContent)"
    )
    assert len(labels) == len(set(labels)), labels  # no two boxes with the same label

    page.evaluate("sessionStorage.clear()")
    detail = open_task(page, server, cast.alice, "review", cast.tasks["narrow"])
    form = detail.locator("form[data-verb=decide_result]")
    assert form.get_by_label("Decision").input_value() == ""  # one click decides nothing
    form.get_by_role("button", name="Decide").click()
    assert page.evaluate("prickleBoard.acted") == []  # the browser asks for a decision
    assert task_of(server, cast.tasks["narrow"], cast.alice)["state"] == "approval"


def test_a_form_a_live_event_removes_says_why_and_keeps_the_typed_text(served, page) -> None:
    server, cast = served
    task_id = cast.tasks["answered_meanwhile"]
    detail = open_task(page, server, cast.alice, "work", task_id)
    detail.locator("form[data-verb=answer]").get_by_label("Answer").fill("Use port 9000")
    server.run_data("mutations/answer", {"task_id": task_id, "answer": "8000"}, cast.bob)

    lost = page.locator("#detail .lost")
    lost.wait_for()
    assert "working" in lost.inner_text() and "bob" in lost.inner_text()
    assert lost.locator("textarea").input_value() == "Use port 9000"
    assert page.locator("#detail form[data-verb=answer]").count() == 0
    shot(page, "board-lost-form.png")


def test_times_read_relative_with_the_instant_on_hover(served, page) -> None:
    server, cast = served
    detail = open_task(page, server, cast.alice, "work", cast.tasks["long"])
    first = detail.locator("#timeline time").first
    first.wait_for()
    assert re.fullmatch(r"just now|\d+ (min|h|d) ago", first.inner_text()), first.inner_text()
    assert first.get_attribute("title") and "T" not in first.get_attribute("title")
    card = page.locator(f".card[data-id='{cast.tasks['long']}'] time")
    assert re.fullmatch(r"last move (just now|\d+ (min|h|d) ago)", card.inner_text())
    routed = page.locator(f".card[data-id='{cast.tasks['find0']}'] time")
    assert re.fullmatch(r"waiting (< 1 min|\d+ (min|h|d))", routed.inner_text())


def test_the_inbox_is_offered_to_people_only(served, page) -> None:
    server, cast = served
    sign_in(page, server, cast.coder, "project=work&inbox=1")
    assert page.locator("#inbox-toggle").is_hidden()
    assert page.locator("#inbox").is_hidden()
    wait_until(page, f"prickleBoard.stateOf('{cast.tasks['cancel']}') !== null")
