"""Every operation document in graphql/ runs against a real server and does what it says.

The walk below uses each mutation document at least once, the query documents on what it
made, and the subscription document over both WebSocket subprotocols.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from typing import Any

import pytest
from factory import PACKET
from jsonschema import Draft202012Validator, FormatChecker
from server import Server, document, operation_documents, persons
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from app.api.schema import schema
from app.domain.table import task_schema

VALIDATOR = Draft202012Validator(task_schema(), format_checker=FormatChecker())
EVIDENCE = [
    {"kind": "link", "summary": "the notes", "url": "https://example.com/notes", "criteria": [0, 1]}
]
RESULT = {"summary": "Notes written", "provenance": "agent_generated", "evidence": EVIDENCE}


@pytest.fixture(scope="module")
def tokens(api_server: Server) -> dict[str, str]:
    return persons(api_server, "alice", "bob", "carol")


class Walk:
    """Runs documents as one principal or another, checking every task it gets back."""

    def __init__(self, server: Server, tokens: dict[str, str]) -> None:
        self.server = server
        self.tokens = tokens

    def __call__(self, doc: str, who: str, /, **variables: Any) -> Any:
        data = self.server.run_data(doc, variables, self.tokens[who])
        value = next(iter(data.values()))
        if isinstance(value, dict) and "as_protocol" in value:
            assert list(VALIDATOR.iter_errors(value["as_protocol"])) == [], doc
        return value

    def refused(self, doc: str, who: str, /, **variables: Any) -> dict[str, Any]:
        body = self.server.run(doc, variables, self.tokens[who])
        assert body["errors"], body
        return body["errors"][0]


@pytest.fixture(scope="module")
def walk(api_server: Server, tokens: dict[str, str]) -> Walk:
    walk = Walk(api_server, dict(tokens))
    registered = [
        ("alice", "planner", None),
        ("bob", "coder", [{"kind": "repo", "name": "prickle"}]),
        ("bob", "helper", [{"kind": "data", "name": "warehouse"}]),
    ]
    for owner, name, capabilities in registered:
        made = walk("mutations/register_agent", owner, name=name, capabilities=capabilities)
        assert made["agent_id"] == f"{owner}/{name}"
        walk.tokens[made["agent_id"]] = made["token"]
    return walk


def test_the_documents_cover_every_mutation_and_query_field() -> None:
    names = set(operation_documents())
    for kind, type_ in (("mutations", "Mutation"), ("queries", "Query")):
        fields = schema.get_type_by_name(type_).fields  # type: ignore[union-attr]
        missing = {f.name for f in fields} - {n.split("/")[1] for n in names if n.startswith(kind)}
        assert missing == set(), f"no document in graphql/{kind} for {sorted(missing)}"
    assert "subscriptions/task_events" in names


def test_a_task_through_review_with_questions_stops_and_a_second_revision(walk: Walk) -> None:
    allow = walk(
        "mutations/set_gate_rule", "bob", input={"effect": "allow", "requester_owner": "alice"}
    )
    review = walk(
        "mutations/set_result_rule",
        "alice",
        input={"policy": "require_approval", "project": "review"},
    )
    assert (allow["effect"], review["policy"]) == ("allow", "require_approval")
    task = walk(
        "mutations/handoff",
        "alice/planner",
        input={
            "project": "review",
            "assignee": "bob/coder",
            "packet": PACKET,
            "idempotency_key": "notes-1",
        },
    )
    assert task["state"] == "routed" and task["allowed_verbs"] == ["cancel_task"]
    assert walk("mutations/add_project_member", "alice", project="review", handle="carol") is True
    tid = task["id"]
    walk("mutations/accept_task", "bob/coder", task_id=tid)
    walk("mutations/start_task", "bob/coder", task_id=tid)
    walk("mutations/save_checkpoint", "bob/coder", task_id=tid, checkpoint={"progress": "drafted"})
    asked = walk(
        "mutations/wait_on", "bob/coder", task_id=tid, on="human", question="Which release?"
    )
    assert (asked["state"], asked["waiting_on"]) == ("waiting", "human")
    assert walk("mutations/answer", "alice", task_id=tid, answer="2.0")["state"] == "working"
    stopped = walk("mutations/stop_run", "bob", task_id=tid, reason="lunch")
    assert stopped["waiting_on"] == "stopped"
    assert walk("mutations/resume_run", "bob", task_id=tid)["state"] == "working"
    first = walk("mutations/return_result", "bob/coder", task_id=tid, result=RESULT)
    assert (first["state"], first["result"]["status"]) == ("approval", "submitted")
    verdicts = [{"criterion": 1, "accepted": False, "note": "no issue links"}]
    changes = walk(
        "mutations/decide_result",
        "alice",
        task_id=tid,
        decision="request_changes",
        verdicts=verdicts,
        reason="link the issues",
    )
    assert (changes["state"], changes["result"]["verdicts"]) == ("working", verdicts)
    walk(
        "mutations/return_result",
        "bob/coder",
        task_id=tid,
        result={**RESULT, "submission_id": "rev-2"},
    )
    done = walk("mutations/decide_result", "alice", task_id=tid, decision="accept")
    assert (done["state"], done["result"]["revision"]) == ("completed", 2)
    assert done["result"]["decided_by"] == {"kind": "person", "handle": "alice", "erased": None}

    full = walk("queries/task", "carol", id=tid)  # a member of "review" now
    assert [r["status"] for r in full["results"]] == ["superseded", "accepted"]
    assert full["checkpoints"][0]["checkpoint"]["progress"] == "drafted"
    page = walk("queries/tasks", "carol", project="review", state="completed")
    assert [e["node"]["id"] for e in page["edges"]] == [tid]
    history = walk("queries/task_events", "carol", task_id=tid, first=3)
    assert history["page_info"]["has_next_page"] and history["total_count"] == len(full["events"])
    rest = walk(
        "queries/task_events",
        "carol",
        task_id=tid,
        after=history["page_info"]["end_cursor"],
        first=100,
    )
    seqs = [e["node"]["seq"] for e in history["edges"] + rest["edges"]]
    assert seqs == sorted(seqs) == [e["seq"] for e in full["events"]]
    assert walk("mutations/remove_project_member", "alice", project="review", handle="carol")
    assert walk("queries/task", "carol", id=tid) is None  # no longer a member
    assert walk("mutations/delete_result_rule", "alice", id=review["id"]) is True
    assert walk("mutations/delete_gate_rule", "bob", id=allow["id"]) is True
    assert walk.refused("mutations/delete_gate_rule", "bob", id=allow["id"])["extensions"] == {
        "code": "not_found"
    }


def test_a_task_by_capability_handed_back_rerouted_and_cancelled(walk: Walk) -> None:
    task = walk(
        "mutations/request_capability",
        "alice/planner",
        input={
            "project": "caps",
            "capability": {"kind": "repo", "name": "prickle"},
            "packet": PACKET,
        },
    )
    assert task["assignee"] == "bob/coder"
    assert task["route"] == {
        "via": "request_capability",
        "capability": {"kind": "repo", "name": "prickle"},
    }
    tid = task["id"]
    if task["state"] == "waiting":  # bob's gate holds alice's requests unless a rule allows them
        walk("mutations/approve_handoff", "bob", task_id=tid, reason="fine")
    back = walk(
        "mutations/hand_back",
        "bob/coder",
        task_id=tid,
        reason="not mine",
        checkpoint={"progress": "looked at it", "open_questions": ["who owns this?"]},
    )
    assert back["state"] == "returned" and back["latest_checkpoint_by"]["handed_back"] is True
    moved = walk("mutations/reroute", "alice/planner", task_id=tid, assignee="bob/helper")
    assert (moved["assignee"], moved["state"], moved["waiting_on"]) == (
        "bob/helper",
        "waiting",
        "owner_approval",
    )
    gone = walk("mutations/cancel_task", "alice", task_id=tid, reason="done elsewhere")
    assert gone["state"] == "cancelled" and gone["allowed_verbs"] == []


def test_a_held_task_denied(walk: Walk) -> None:
    task = walk(
        "mutations/handoff",
        "alice/planner",
        input={
            "project": "held",
            "assignee": "bob/helper",
            "packet": PACKET,
            "display_title": "Notes",
        },
    )
    assert task["waiting_on"] == "owner_approval"
    as_bob = walk("queries/task", "bob", id=task["id"])
    assert sorted(as_bob["allowed_verbs"]) == ["approve_handoff", "deny_task"]
    graph = walk("queries/task_graph", "bob", task_id=task["id"])
    assert ([t["id"] for t in graph["tasks"]], graph["edges"]) == ([task["id"]], [])
    inbox = walk("queries/inbox", "bob", first=500)
    assert task["id"] in [e["node"]["id"] for e in inbox["edges"]]
    waiting = Counter(e["node"]["project"] for e in inbox["edges"])
    projects = walk("queries/inbox_projects", "bob")  # the inbox's filter, with its counts
    assert projects == [{"project": p, "count": n} for p, n in sorted(waiting.items())]
    assert walk("queries/inbox_projects", "bob", asked="decide_result") == []
    asked = walk("queries/inbox", "alice", first=500)  # alice asked; bob decides
    assert task["id"] not in [e["node"]["id"] for e in asked["edges"]]
    head = int(walk("queries/event_head", "bob"))
    denied = walk("mutations/deny_task", "bob", task_id=task["id"], reason="not now")
    assert denied["state"] == "rejected"
    assert int(walk("queries/event_head", "bob")) > head  # the denial's event, past it
    ends = walk.server.run_data("queries/events_seen_after_head", {}, walk.tokens["bob"])
    assert int(ends["event_head"]) > head
    assert all(int(seq) > int(ends["event_head"]) for seq in ends["events_seen_after_head"])
    inbox = walk("queries/inbox", "bob", first=500)
    assert task["id"] not in [e["node"]["id"] for e in inbox["edges"]]


def test_the_table_and_the_caller(walk: Walk) -> None:
    states = walk("queries/task_states", "alice")
    assert [s["name"] for s in states if s["terminal"]] == ["completed", "rejected", "cancelled"]
    moves = walk("queries/allowed_moves", "alice")
    assert len(moves) == 35 and {"from", "to", "verbs", "actor", "note"} <= set(moves[0])
    assert walk("queries/me", "bob/coder") == {"kind": "agent", "id": "bob/coder", "owner": "bob"}


def test_tokens_made_listed_and_revoked(walk: Walk) -> None:
    made = walk(
        "mutations/create_token", "bob", agent="bob/coder", label="ci", expires_in_seconds=3600
    )
    info = made["token_info"]
    assert (info["principal"], info["label"], info["revoked_at"]) == ("bob/coder", "ci", None)
    assert info["id"] in [t["id"] for t in walk("queries/tokens", "bob")]
    revoked = walk("mutations/revoke_token", "bob", id=info["id"])
    assert revoked["id"] == info["id"] and revoked["revoked_at"] is not None


def test_schedules_hand_off_tasks_paused_resumed_run_now_and_deleted(walk: Walk) -> None:
    allow = walk(
        "mutations/set_gate_rule",
        "bob",
        input={"effect": "allow", "requester_owner": "alice", "project": "sched"},
    )
    every = {"project": "sched", "assignee": "bob/coder", "packet": PACKET, "every_seconds": 1}
    made = walk("mutations/create_schedule", "alice", input=every)
    assert (made["owner"], made["version"], made["runs"], made["catch_up"]) == (
        "alice",
        1,
        0,
        "skip",
    )
    deadline = time.monotonic() + 15
    while (listed := walk("queries/schedules", "alice", project="sched"))[0]["runs"] < 3:
        assert time.monotonic() < deadline, listed
        time.sleep(0.2)
    paused = walk("mutations/pause_schedule", "alice", id=made["id"])
    assert (paused["paused"], paused["next_run_at"]) == (True, None)
    runs = paused["runs"]
    page = walk("queries/tasks", "alice", project="sched", first=500)
    assert page["total_count"] == runs >= 3
    for edge in page["edges"]:
        task = edge["node"]
        assert (task["requester"], task["requested_by"]["handle"]) == (None, "alice")
        assert list(VALIDATOR.iter_errors(task["as_protocol"])) == []
    refused = walk.refused("mutations/pause_schedule", "carol", id=made["id"])
    assert refused["extensions"] == {"code": "not_found"}
    refused = walk.refused(
        "mutations/create_schedule", "alice", input={**every, "cron": "* * * * *"}
    )
    assert refused["extensions"] == {"code": "invalid_input"}
    refused = walk.refused("mutations/create_schedule", "alice/planner", input=every)
    assert refused["extensions"] == {"code": "forbidden"}

    changed = walk(
        "mutations/update_schedule",
        "alice",
        id=made["id"],
        input={**every, "every_seconds": None, "cron": "0 9 * * MON", "timezone": "Europe/Berlin"},
    )
    assert (changed["version"], changed["cron"], changed["paused"]) == (2, "0 9 * * MON", True)
    resumed = walk("mutations/resume_schedule", "alice", id=made["id"])
    assert resumed["paused"] is False and resumed["next_run_at"] > resumed["created_at"]
    task = walk("mutations/run_schedule_now", "alice", id=made["id"])
    assert task["state"] == "routed"
    walk("mutations/accept_task", "bob/coder", task_id=task["id"])
    walk("mutations/start_task", "bob/coder", task_id=task["id"])
    done = walk("mutations/return_result", "bob/coder", task_id=task["id"], result=RESULT)
    assert done["result"]["lineage"]["cause"] == {
        "kind": "owner_schedule",
        "schedule_id": made["id"],
        "version": 2,
        "task_id": task["id"],
        "owner": "alice",
    }
    assert done["as_protocol"]["result"]["lineage"]["cause"] == done["result"]["lineage"]["cause"]
    [mine] = walk("queries/schedules", "alice")
    assert (mine["runs"], mine["last_task_id"]) == (runs + 1, task["id"])
    assert walk("queries/schedules", "carol", project="sched") == []
    assert walk("mutations/delete_schedule", "alice", id=made["id"]) is True
    assert walk("queries/schedules", "alice") == []
    assert walk("mutations/delete_gate_rule", "bob", id=allow["id"]) is True


def test_agents_and_persons_erased_and_principal(walk: Walk) -> None:
    made = walk("mutations/register_agent", "carol", name="temp")
    walk.tokens["carol/temp"] = made["token"]
    walk.tokens.update(persons(walk.server, "erin"))
    task = walk(
        "mutations/handoff",
        "carol/temp",
        input={"project": "erasing", "assignee": "carol/temp", "packet": PACKET},
    )
    busy = walk.refused("mutations/erase_agent", "carol", agent_id="carol/temp")
    assert busy["extensions"] == {"code": "conflict"} and task["id"] in busy["message"]
    walk("mutations/cancel_task", "carol", task_id=task["id"])
    done = walk("mutations/erase_agent", "carol", agent_id="carol/temp")
    assert (done["principal"], done["tokens_revoked"], done["tasks_marked"]) == ("carol/temp", 1, 1)
    marked = walk("queries/task", "carol", id=task["id"])
    assert marked["requested_by"] == {"kind": "agent", "agent_id": "carol/temp", "erased": True}
    assert walk("queries/principal", "alice", id="carol/temp")["erased"] is True
    gone = walk("mutations/erase_person", "erin", handle="erin")
    assert (gone["principal"], gone["tokens_revoked"]) == ("erin", 1)
    erin = walk("queries/principal", "carol", id="erin")
    assert (erin["kind"], erin["owner"], erin["erased"]) == ("person", "erin", True)
    assert walk("queries/principal", "carol", id="nobody") is None
    # the same objects by their node ids: a task to whom the reads show it, null to others
    node = walk("queries/node", "carol", id=task["id"])
    assert (node["__typename"], node["id"], node["requested_by"]["erased"]) == (
        "Task",
        task["id"],
        True,
    )
    assert walk("queries/node", "bob", id=task["id"]) is None
    assert walk("queries/node", "alice", id="erin")["erased"] is True
    found = walk("queries/nodes", "carol", ids=[task["id"], "erin", "nobody"])
    assert [n and n["__typename"] for n in found] == ["Task", "PrincipalInfo", None]


def test_webhooks_made_listed_enabled_rotated_and_deleted(walk: Walk) -> None:
    # a literal public address: nothing to resolve; no event of this project ever matches
    hook = {"url": "http://93.184.215.14/hook", "project": "no-such-project", "kinds": ["moved"]}
    made = walk("mutations/create_webhook", "alice", input={**hook, "description": "docs"})
    assert made["secret"].startswith("whsec_")
    webhook = made["webhook"]
    assert webhook["enabled"] and webhook["pending"] == 0 and webhook["kinds"] == ["moved"]
    assert walk("queries/webhooks", "alice") == [webhook]
    assert walk("queries/webhooks", "bob") == []
    assert walk("queries/webhook_deliveries", "alice", webhook_id=webhook["id"]) == []
    refused = walk.refused("queries/webhook_deliveries", "bob", webhook_id=webhook["id"])
    assert refused["extensions"]["code"] == "not_found"
    assert walk("mutations/enable_webhook", "alice", id=webhook["id"]) == webhook
    rotated = walk("mutations/rotate_webhook_secret", "alice", id=webhook["id"])
    assert rotated["secret"].startswith("whsec_") and rotated["secret"] != made["secret"]
    refused = walk.refused("mutations/create_webhook", "alice", input={"url": "http://127.0.0.1/"})
    assert refused["extensions"]["code"] == "invalid_input"
    assert walk("mutations/delete_webhook", "alice", id=webhook["id"]) is True
    assert walk("queries/webhooks", "alice") == []


def test_remote_agents_listed_and_a_private_card_url_refused(walk: Walk) -> None:
    # the whole lifecycle, with a remote agent that answers, is tests/a2a/test_a2a_outbound.py's
    assert walk("queries/remote_agents", "alice") == []
    card = {"name": "helper", "card_url": "http://127.0.0.1:9/.well-known/agent-card.json"}
    refused = walk.refused("mutations/register_remote_agent", "alice", **card)
    assert refused["extensions"]["code"] == "invalid_input"
    assert "PRICKLE_ALLOW_PRIVATE_AGENTS" in refused["message"]
    refused = walk.refused("mutations/remove_remote_agent", "alice", agent="alice/helper")
    assert refused["extensions"]["code"] == "not_found"
    assert walk("queries/remote_agents", "alice") == []


def test_every_query_and_mutation_document_ran(walk: Walk) -> None:
    ran = walk.server.executed
    expected = {n for n in operation_documents() if not n.startswith("subscriptions/")}
    if not expected <= ran:
        pytest.skip(f"run the whole module: not run here {sorted(expected - ran)}")


# the subscription document over WebSockets


def _open(server: Server, protocol: str, token: str | None) -> ClientConnection:
    ws = connect(server.ws_url, subprotocols=[protocol], open_timeout=10)  # type: ignore[list-item]
    payload = {"Authorization": f"Bearer {token}"} if token else {}
    ws.send(json.dumps({"type": "connection_init", "payload": payload}))
    assert _next(ws)["type"] == "connection_ack"
    return ws


def _next(ws: ClientConnection) -> dict[str, Any]:
    while True:
        message = json.loads(ws.recv(timeout=10))
        if message["type"] not in ("ka", "ping", "pong"):
            return message


def _subscribe(ws: ClientConnection, protocol: str, variables: dict[str, Any]) -> None:
    kind = "subscribe" if protocol == "graphql-transport-ws" else "start"
    query = document("subscriptions/task_events")
    ws.send(
        json.dumps({"id": "1", "type": kind, "payload": {"query": query, "variables": variables}})
    )


@pytest.mark.parametrize("protocol", ["graphql-transport-ws", "graphql-ws"])
def test_the_subscription_sends_a_snapshot_then_each_move(walk: Walk, protocol: str) -> None:
    server = walk.server
    task = walk(
        "mutations/handoff",
        "alice/planner",
        input={"project": "live", "assignee": "bob/coder", "packet": PACKET},
    )
    with _open(server, protocol, walk.tokens["bob"]) as ws:
        _subscribe(ws, protocol, {"task_id": task["id"]})
        snapshot = _next(ws)["payload"]["data"]["task_events"]
        assert (snapshot["kind"], snapshot["task"]["state"]) == ("snapshot", task["state"])
        if task["state"] == "waiting":
            walk("mutations/approve_handoff", "bob", task_id=task["id"])
            assert _next(ws)["payload"]["data"]["task_events"]["verb"] == "approve_handoff"
        walk("mutations/accept_task", "bob/coder", task_id=task["id"])
        event = _next(ws)["payload"]["data"]["task_events"]
        assert (event["kind"], event["verb"], event["actor"], event["to_state"]) == (
            "moved",
            "accept_task",
            "bob/coder",
            "accepted",
        )
        assert event["task"]["version"] == event["version"] and int(event["cursor"]) == event["seq"]


def test_the_subscription_replays_from_a_cursor(walk: Walk) -> None:
    task = walk(
        "mutations/handoff",
        "alice/planner",
        input={"project": "replay", "assignee": "bob/coder", "packet": PACKET},
    )
    events = walk("queries/task_events", "alice", task_id=task["id"])["edges"]
    with _open(walk.server, "graphql-transport-ws", walk.tokens["alice"]) as ws:
        _subscribe(
            ws, "graphql-transport-ws", {"task_id": task["id"], "after": events[0]["cursor"]}
        )
        replayed = _next(ws)["payload"]["data"]["task_events"]
        assert replayed["seq"] == events[1]["node"]["seq"]


@pytest.mark.parametrize("token", [None, "prk_wrong"])
def test_an_unauthenticated_connection_is_refused(walk: Walk, token: str | None) -> None:
    ws = connect(walk.server.ws_url, subprotocols=["graphql-transport-ws"], open_timeout=10)  # type: ignore[list-item]
    with ws:
        payload = {"Authorization": f"Bearer {token}"} if token else {}
        ws.send(json.dumps({"type": "connection_init", "payload": payload}))
        with pytest.raises(ConnectionClosed):
            _next(ws)
    assert ws.close_code == 4403
