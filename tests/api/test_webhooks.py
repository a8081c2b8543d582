"""Webhooks against a real server and a real receiver on 127.0.0.1 (tests/support/receiver.py).

Signatures are verified with the standardwebhooks package's own `Webhook.verify`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from live import Cast
from receiver import Receiver
from server import Server, module_database, start
from standardwebhooks.webhooks import WebhookVerificationError

from app.domain.errors import InvalidInput
from app.domain.webhooks import message_id
from app.service.webhook_urls import client

ENV = {
    "PRICKLE_WEBHOOK_BACKOFF": "0.2,0.3",
    "PRICKLE_WEBHOOK_GIVE_UP_SECONDS": "1.5",
    "PRICKLE_WEBHOOK_LEASE_SECONDS": "3",
}
FIELDS = {
    "cursor",
    "seq",
    "kind",
    "task_id",
    "project",
    "from_state",
    "to_state",
    "waiting_on",
    "verb",
    "actor",
    "at",
    "task",
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("webhooks")
    with module_database(directory) as url:
        started = start(url, directory / "logs", "--allow-private-webhooks", env=ENV)
        try:
            yield started
        finally:
            started.stop()


@pytest.fixture(scope="module")
def cast(server: Server) -> Cast:
    return Cast(server).add("alice", "bob", "carol", "alice/coder", "carol/coder")


@pytest.fixture(autouse=True)
def _no_webhooks_left(request: pytest.FixtureRequest) -> Iterator[None]:
    """Each test's webhooks are deleted after it (their receivers are gone)."""
    yield
    if "cast" in request.fixturenames:
        cast: Cast = request.getfixturevalue("cast")
        for who in ("alice", "bob"):
            for webhook in webhooks(cast, who):
                variables = {"id": webhook["id"]}
                cast.server.run_data("mutations/delete_webhook", variables, cast.token(who))


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as receiver:
        yield receiver


def create(cast: Cast, who: str, url: str, **filters: Any) -> dict[str, Any]:
    body = cast.server.run(
        "mutations/create_webhook", {"input": {"url": url, **filters}}, cast.token(who)
    )
    assert not body.get("errors"), body["errors"]
    return body["data"]["create_webhook"]


def webhooks(cast: Cast, who: str) -> list[dict[str, Any]]:
    return cast.server.run_data("queries/webhooks", {}, cast.token(who))["webhooks"]


def deliveries(cast: Cast, who: str, webhook_id: str) -> list[dict[str, Any]]:
    variables = {"webhook_id": webhook_id, "first": 500}
    return cast.server.run_data("queries/webhook_deliveries", variables, cast.token(who))[
        "webhook_deliveries"
    ]


def until(check: Any, timeout: float = 20) -> Any:
    deadline = time.monotonic() + timeout
    while not (found := check()):
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.05)
    return found


def test_events_arrive_signed_in_order_with_the_event_and_its_task(
    cast: Cast, receiver: Receiver
) -> None:
    made = create(cast, "alice", receiver.url)
    secret, webhook = made["secret"], made["webhook"]
    task = cast.handoff("alice", "alice/coder", "signed")
    cast.move("alice/coder", "accept_task", task["id"])
    cast.move("alice/coder", "start_task", task["id"])
    got = receiver.wait_for(4)
    bodies = [r.verified(secret) for r in got]
    assert [b["type"] for b in bodies] == ["task.event"] * 4
    events = [b["data"] for b in bodies]
    assert {*events[0]} == FIELDS
    assert [(e["kind"], e["verb"]) for e in events] == [
        ("created", "handoff"),
        ("moved", "handoff"),
        ("moved", "accept_task"),
        ("moved", "start_task"),
    ]
    seqs = [e["seq"] for e in events]
    assert seqs == sorted(seqs) and [e["cursor"] for e in events] == [str(s) for s in seqs]
    assert [r.id for r in got] == [f"{webhook['id']}_{s}" for s in seqs]
    assert events[-1]["task"]["state"] == "working" and events[-1]["task"]["id"] == task["id"]
    [listed] = until(
        lambda: [w for w in webhooks(cast, "alice") if w["last_cursor"] == str(seqs[-1])]
    )
    assert listed["pending"] == 0 and listed["enabled"] is True
    assert "secret" not in listed
    attempts = deliveries(cast, "alice", webhook["id"])
    assert [(d["event_cursor"], d["attempt"], d["status_code"]) for d in attempts] == [
        (str(s), 1, 200) for s in seqs
    ]


def test_each_filter_narrows_what_is_sent(cast: Cast) -> None:
    with Receiver() as everything, Receiver() as created, Receiver() as one_task:
        create(cast, "alice", everything.url, project=cast.project("filtered"))
        create(cast, "alice", created.url, kinds=["created"], assignee=cast.id("alice/coder"))
        first = cast.handoff("alice", "alice/coder", "filtered")
        create(cast, "alice", one_task.url, task_id=first["id"])
        second = cast.handoff("alice", "alice/coder", "filtered")
        cast.move("alice/coder", "accept_task", first["id"])
        cast.move("alice/coder", "accept_task", second["id"])
        cast.handoff("alice", "alice/coder", "elsewhere")
        got = everything.wait_for(6)
        assert [(r.data["task_id"], r.data["verb"]) for r in got] == [
            (first["id"], "handoff"),
            (first["id"], "handoff"),
            (second["id"], "handoff"),
            (second["id"], "handoff"),
            (first["id"], "accept_task"),
            (second["id"], "accept_task"),
        ]
        assert [r.data["kind"] for r in created.wait_for(3)] == ["created"] * 3
        [only] = one_task.wait_for(1)
        assert (only.data["task_id"], only.data["verb"]) == (first["id"], "accept_task")
        time.sleep(0.5)
        assert len(everything.received) == 6 and len(one_task.received) == 1


def test_an_empty_kinds_list_is_refused_rather_than_matching_nothing(
    cast: Cast, receiver: Receiver
) -> None:
    variables = {"input": {"url": receiver.url, "kinds": []}}
    body = cast.server.run("mutations/create_webhook", variables, cast.token("alice"))
    [error] = body["errors"]
    assert error["extensions"]["code"] == "invalid_input"
    assert "omit kinds" in error["message"] and "every kind" in error["message"]
    assert webhooks(cast, "alice") == []


def test_an_owner_is_sent_only_what_it_sees_also_after_losing_sight(
    cast: Cast, receiver: Receiver
) -> None:
    project = cast.project("shared")
    first = cast.handoff("alice", "alice/coder", "shared")  # alice founds the project
    admin = cast.token("alice")
    member = {"project": project, "handle": cast.id("bob")}
    cast.server.run_data("mutations/add_project_member", member, admin)
    create(cast, "bob", receiver.url)
    cast.move("alice/coder", "accept_task", first["id"])  # bob sees it: a member
    cast.handoff("carol", "carol/coder", "carols")  # bob never sees carol's task
    [seen] = receiver.wait_for(1)
    assert (seen.data["task_id"], seen.data["verb"]) == (first["id"], "accept_task")
    cast.server.run_data("mutations/remove_project_member", member, admin)
    cast.move("alice/coder", "start_task", first["id"])  # no longer visible to bob
    own = cast.handoff("bob", "alice/coder", "bobs")  # bob's own: the marker that comes later
    got = receiver.wait_for(3)
    assert [r.data["task_id"] for r in got[1:]] == [own["id"]] * 2
    assert len(receiver.received) == 3


def test_a_failure_is_retried_with_the_same_webhook_id(cast: Cast, receiver: Receiver) -> None:
    answers = iter([500, 503])
    receiver.status = lambda _request: next(answers, 200)
    made = create(cast, "alice", receiver.url)
    cast.handoff("alice", "alice/coder", "retried")
    got = receiver.wait_for(4, acknowledged=False)
    assert [r.status for r in got] == [500, 503, 200, 200]
    assert len({r.id for r in got[:3]}) == 1 and got[3].id != got[0].id
    secret = made["secret"]
    assert all(r.verified(secret)["data"]["verb"] == "handoff" for r in got)
    webhook_id = made["webhook"]["id"]
    attempts = until(lambda: len(found := deliveries(cast, "alice", webhook_id)) == 4 and found)
    assert [(d["attempt"], d["status_code"]) for d in attempts] == [
        (1, 500),
        (2, 503),
        (3, 200),
        (1, 200),
    ]
    assert attempts[0]["error"] == "HTTP 500" and attempts[2]["error"] is None
    [listed] = [w for w in webhooks(cast, "alice") if w["id"] == webhook_id]
    assert listed["last_error"] == "HTTP 503" and listed["pending"] == 0


def test_after_a_rotation_events_are_signed_with_the_new_secret(
    cast: Cast, receiver: Receiver
) -> None:
    made = create(cast, "alice", receiver.url)
    variables = {"id": made["webhook"]["id"]}
    rotated = cast.server.run_data(
        "mutations/rotate_webhook_secret", variables, cast.token("alice")
    )
    secret = rotated["rotate_webhook_secret"]["secret"]
    assert secret.startswith("whsec_") and secret != made["secret"]
    cast.handoff("alice", "alice/coder", "rotated")
    got = receiver.wait_for(2)
    assert [r.verified(secret)["data"]["verb"] for r in got] == ["handoff", "handoff"]
    with pytest.raises(WebhookVerificationError):
        got[0].verified(made["secret"])


def test_a_failing_endpoint_delays_no_other_webhook(cast: Cast, receiver: Receiver) -> None:
    """One endpoint holds every request for 8 s; another webhook's events still arrive
    at once."""
    release = threading.Event()
    with Receiver() as stuck:
        stuck.status = lambda _request: 500 if release.wait(8) else 504
        try:
            create(cast, "alice", stuck.url, project=cast.project("stuck"))
            create(cast, "alice", receiver.url, project=cast.project("stuck"))
            task = cast.handoff("alice", "alice/coder", "stuck")
            got = receiver.wait_for(2, timeout=5)
            assert [r.data["task_id"] for r in got] == [task["id"]] * 2
            assert stuck.acknowledged() == []
        finally:
            release.set()


def test_an_answer_later_than_the_timeout_is_a_failed_attempt_sent_again(
    start_server: Any, receiver: Receiver
) -> None:
    """PRICKLE_WEBHOOK_TIMEOUT_SECONDS bounds each request: the first one held for 6 s is
    given up after 1 s, recorded as failed, and the event sent again (same webhook-id)
    while the first is still held."""
    env = {**ENV, "PRICKLE_WEBHOOK_TIMEOUT_SECONDS": "1"}
    cast = Cast(start_server("--allow-private-webhooks", env=env)).add("alice", "alice/coder")
    release = threading.Event()
    first = threading.Event()

    def status(_request: Any) -> int:
        if not first.is_set():
            first.set()
            release.wait(6)
        return 200

    receiver.status = status
    try:
        webhook_id = create(cast, "alice", receiver.url)["webhook"]["id"]
        cast.handoff("alice", "alice/coder", "slow")
        got = receiver.wait_for(2, timeout=5)
        assert len(receiver.received) == 2  # while the first request is still held
        attempts = until(lambda: len(found := deliveries(cast, "alice", webhook_id)) == 3 and found)
    finally:
        release.set()
    failed, *later = attempts
    assert (failed["attempt"], failed["status_code"]) == (1, None)
    assert failed["error"] == "no answer within 1 s"
    assert 900 <= failed["duration_ms"] < 5000
    assert [(d["attempt"], d["status_code"]) for d in later] == [(2, 200), (1, 200)]
    seqs = [r.data["seq"] for r in got]
    assert seqs == sorted(seqs) and got[0].id == message_id(webhook_id, seqs[0])


def test_a_redirect_is_a_failed_attempt_and_not_followed(cast: Cast, receiver: Receiver) -> None:
    with Receiver() as elsewhere:
        answers = iter([307])
        receiver.status = lambda _request: next(answers, 200)
        receiver.location = elsewhere.url
        made = create(cast, "alice", receiver.url)
        cast.handoff("alice", "alice/coder", "redirected")
        got = receiver.wait_for(3, acknowledged=False)
        assert [r.status for r in got] == [307, 200, 200] and got[0].id == got[1].id
        webhook_id = made["webhook"]["id"]
        attempts = until(lambda: len(found := deliveries(cast, "alice", webhook_id)) == 3 and found)
        assert [(d["attempt"], d["status_code"], d["error"]) for d in attempts] == [
            (1, 307, "HTTP 307"),
            (2, 200, None),
            (1, 200, None),
        ]
        assert elsewhere.received == []


def test_disabled_after_the_give_up_time_then_enabled_sends_what_was_missed(
    cast: Cast, receiver: Receiver
) -> None:
    receiver.status = 500
    made = create(cast, "alice", receiver.url)
    webhook_id = made["webhook"]["id"]
    tasks = [cast.handoff("alice", "alice/coder", "missed") for _ in range(2)]

    def disabled() -> Any:
        return [w for w in webhooks(cast, "alice") if w["id"] == webhook_id and not w["enabled"]]

    [off] = until(disabled)
    assert "HTTP 500" in off["disabled_reason"] and off["pending"] == 4
    tried = len(receiver.received)
    cast.handoff("alice", "alice/coder", "missed")
    time.sleep(0.8)
    assert len(receiver.received) == tried  # nothing is sent while disabled
    receiver.status = 200
    on = cast.server.run_data("mutations/enable_webhook", {"id": webhook_id}, cast.token("alice"))
    assert on["enable_webhook"]["enabled"] is True
    got = receiver.wait_for(6)
    assert [r.data["task_id"] for r in got[:4]] == [t["id"] for t in tasks for _ in (1, 2)]
    assert got[0].id == receiver.received[0].id  # the first failed event, sent again
    seqs = [r.data["seq"] for r in got]
    assert seqs == sorted(seqs)


def test_a_private_address_is_refused_without_the_flag(
    start_server: Any, receiver: Receiver
) -> None:
    plain = start_server()
    for url in (
        receiver.url,
        "http://localhost:9/hook",
        "http://10.1.2.3/hook",
        "http://169.254.169.254/latest",
        "http://[::1]/hook",
        "http://224.0.0.1/hook",
        "http://100.100.100.200/latest",  # shared address space (RFC 6598): not global
        "http://[::ffff:10.0.0.1]/hook",
        "ftp://example.com/hook",
        "not a url",
    ):
        body = plain.run("mutations/create_webhook", {"input": {"url": url}})
        assert body["errors"][0]["extensions"]["code"] == "invalid_input", url
    assert plain.data("{ webhooks { id } }")["webhooks"] == []


async def test_the_client_checks_the_address_again_when_it_connects(receiver: Receiver) -> None:
    guarded = client(allow_private=False)
    try:
        with pytest.raises(InvalidInput):
            await guarded.post(receiver.url, content=b"{}")
        # a name is resolved again at each connection, and its address checked
        with pytest.raises(InvalidInput, match="'localhost' resolves to"):
            await guarded.post(receiver.url.replace("127.0.0.1", "localhost"), content=b"{}")
        assert receiver.received == []
    finally:
        await guarded.aclose()
    allowed = client(allow_private=True)
    try:
        assert (await allowed.post(receiver.url, content=b"{}")).status_code == 200
    finally:
        await allowed.aclose()


async def test_the_client_tries_each_address_of_a_name_until_one_answers(
    receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A name whose first address does not answer (an IPv6 one without a route, say) is
    reached at the next; nothing listens on 127.0.0.2 at the receiver's port."""
    from app.service import webhook_urls

    async def two(host: str, port: int) -> list[str]:
        assert host == "receiver.test"
        return ["127.0.0.2", "127.0.0.1"]

    monkeypatch.setattr(webhook_urls, "resolve", two)
    guarded = client(allow_private=True)
    try:
        url = receiver.url.replace("127.0.0.1", "receiver.test")
        assert (await guarded.post(url, content=b"{}")).status_code == 200
    finally:
        await guarded.aclose()
    assert len(receiver.received) == 1


def test_the_metrics_count_the_events_a_failing_webhook_still_owes(
    cast: Cast, receiver: Receiver
) -> None:
    """`prickle_webhook_backlog`: events after each enabled webhook's last delivered one."""
    from metrics import scrape, value

    receiver.status = 500  # nothing is acknowledged: the webhook's cursor stays put
    create(cast, "alice", receiver.url, project=cast.project("owed"))
    before = value(scrape(cast.server), "prickle_webhook_backlog")
    for _ in range(3):  # a created and a moved event each
        cast.handoff("alice", "alice/coder", "owed")
    assert value(scrape(cast.server), "prickle_webhook_backlog") == before + 6
