"""Each agent an A2A server, driven by the `a2a-sdk` Python client and by raw JSON-RPC
against a real `prickle serve`: the card (public when its owner says), a whole lifecycle
(send, a question, the answer, the result as an artifact, push notifications signed and
verified), streams whose SSE ids are Prickle cursors and resume without gap or duplicate,
cancel, pages, Prickle's visibility, and bad input."""

from __future__ import annotations

import base64
import json
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
import pytest
from a2a.client import Client, ClientCallContext, ClientConfig, create_client
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a_inbound import (
    NOW,
    RESULT,
    VERSION,
    ask,
    base,
    give_result,
    headers,
    message,
    rest_sse_ids,
    rpc,
    sse_events,
    work,
)
from google.protobuf.timestamp_pb2 import Timestamp
from live import Cast
from receiver import Receiver
from server import BACKEND, module_database, start


@pytest.fixture(scope="module")
def cast(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cast]:
    """alice, bob and alice/coder on a server of the module's own, which may send push
    notifications to a receiver on 127.0.0.1."""
    directory = tmp_path_factory.mktemp("a2a")
    with module_database(directory) as url:
        server = start(url, directory / "logs", "--allow-private-webhooks")
        try:
            yield Cast(server).add("alice", "bob", "alice/coder")
        finally:
            server.stop()


SECRET = "whsec_" + base64.b64encode(b"the python client's own!").decode()


def _id() -> str:
    return uuid.uuid4().hex


@asynccontextmanager
async def _client(
    cast: Cast, who: str, agent: str, streaming: bool = False
) -> AsyncIterator[Client]:
    """The SDK's client of the agent, from its card, as `who`."""
    async with httpx.AsyncClient(headers=headers(cast, who), timeout=30) as http:
        config = ClientConfig(streaming=streaming, httpx_client=http)
        client = await create_client(base(cast, agent), config)
        try:
            yield client
        finally:
            await client.close()


def _send(text: str, wait: bool = False, **fields: object) -> SendMessageRequest:
    """A message; answered at once unless `wait` (then: once its task settles)."""
    said = Message(message_id=_id(), role=Role.ROLE_USER, parts=[Part(text=text)], **fields)  # type: ignore[arg-type]
    now = SendMessageConfiguration(return_immediately=not wait)
    return SendMessageRequest(message=said, configuration=now)


def test_the_card_names_the_agent_its_interfaces_and_skills(cast: Cast) -> None:
    url = f"{base(cast, 'alice/coder')}/.well-known/agent-card.json"
    card = httpx.get(url, headers=headers(cast, "bob")).json()
    assert card["name"] == cast.id("alice/coder")
    bindings = {i["protocolBinding"]: i["url"] for i in card["supportedInterfaces"]}
    assert bindings == {
        "JSONRPC": base(cast, "alice/coder"),
        "HTTP+JSON": base(cast, "alice/coder"),
    }
    assert card["capabilities"]["streaming"] is True
    assert "bearer" in str(card["securitySchemes"]).lower()
    assert httpx.get(url).status_code == 401


def test_the_owner_makes_the_card_public(cast: Cast) -> None:
    url = f"{base(cast, 'alice/coder')}/.well-known/agent-card.json"
    marked = {"agent_id": cast.id("alice/coder"), "public": True}
    refused = cast.server.run("mutations/set_agent_card_public", marked, cast.token("bob"))
    assert refused["errors"][0]["extensions"]["code"] == "forbidden"
    assert httpx.get(url).status_code == 401
    done = cast.server.run_data("mutations/set_agent_card_public", marked, cast.token("alice"))
    assert done == {"set_agent_card_public": True}
    assert httpx.get(url).json()["name"] == cast.id("alice/coder")
    private = {**marked, "public": False}
    cast.server.run_data("mutations/set_agent_card_public", private, cast.token("alice"))
    assert httpx.get(url).status_code == 401
    unknown = f"{cast.server.base_url}/a2a/{cast.id('alice')}/nobody/.well-known/agent-card.json"
    assert httpx.get(unknown, headers=headers(cast, "bob")).status_code == 404


async def test_a_whole_lifecycle_through_the_python_client(cast: Cast) -> None:
    with Receiver() as receiver:
        async with _client(cast, "alice", "alice/coder") as client:
            secret = await _lifecycle(cast, client, receiver.url)
        notified = [r.verified(secret)["task"] for r in receiver.wait_for(6)]
    states = [n["metadata"]["prickle"]["state"] for n in notified]
    assert states == ["accepted", "working", "waiting", "working", "verifying", "completed"]
    assert notified[-1]["artifacts"][0]["parts"][0]["text"] == "the answer is 42"


async def _lifecycle(cast: Cast, client: Client, hook: str) -> str:
    """Send, the worker asks, answer, the result: through the client; the push secret."""
    [sent] = [r async for r in client.send_message(_send("what is six times seven?"))]
    task = sent.task
    wanted = TaskPushNotificationConfig(task_id=task.id, url=hook, token="from-the-client")
    signed = ClientCallContext(service_parameters={"Prickle-Webhook-Secret": SECRET})
    config = await client.create_task_push_notification_config(wanted, context=signed)
    assert not config.HasField("authentication")
    assert task.status.state == TaskState.TASK_STATE_SUBMITTED
    assert task.metadata["prickle"]["state"] == "routed"
    assert task.context_id == cast.id("alice")  # no contextId: the caller's owner's project
    work(cast, "alice/coder", task.id, "accept_task", "start_task")
    ask(cast, "alice/coder", task.id, "in which base?")
    asked = await client.get_task(GetTaskRequest(id=task.id, history_length=10))
    assert asked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert asked.status.message.parts[0].text == "in which base?"
    assert [m.parts[0].text for m in asked.history][1:] == ["in which base?"]
    assert "answer" in list(asked.metadata["prickle"]["allowed_verbs"])
    [answered] = [r async for r in client.send_message(_send("base ten", task_id=task.id))]
    assert answered.task.metadata["prickle"]["state"] == "working"
    give_result(cast, "alice/coder", task.id)
    done = await client.get_task(GetTaskRequest(id=task.id))  # no historyLength: all of it
    assert [m.parts[0].text for m in done.history][1:] == ["in which base?", "base ten"]
    assert not (await client.get_task(GetTaskRequest(id=task.id, history_length=0))).history
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    [artifact] = done.artifacts
    assert artifact.parts[0].text == "the answer is 42"
    assert "evidence" in artifact.parts[1].data.struct_value.fields
    return SECRET


def test_a_stream_numbers_its_events_with_cursors_and_resumes_after_a_drop(cast: Cast) -> None:
    sent = message("stream me", _id())
    first = sse_events(cast, "alice", "alice/coder", "SendStreamingMessage", {"message": sent}, 1)
    [(cursor, snapshot)] = first
    task_id = snapshot["result"]["task"]["id"]
    assert cursor == snapshot["result"]["task"]["metadata"]["prickle"]["cursor"]
    work(cast, "alice/coder", task_id, "accept_task", "start_task")
    give_result(cast, "alice/coder", task_id)
    resumed = sse_events(
        cast,
        "alice",
        "alice/coder",
        "SubscribeToTask",
        {"id": task_id},
        5,
        **{"Last-Event-ID": str(cursor)},
    )
    ids = [int(i or 0) for i, _ in resumed]
    assert ids == sorted(ids) and ids[0] > int(cursor or 0)
    kinds = [next(iter(r["result"])) for _, r in resumed]
    assert kinds == ["statusUpdate"] * 3 + ["artifactUpdate", "statusUpdate"]  # then it ends
    assert ids[3] == ids[4]  # the result judged: its artifact, then the state it led to
    artifact = resumed[3][1]["result"]["artifactUpdate"]["artifact"]
    assert artifact["parts"][0]["text"] == "the answer is 42"
    done = resumed[4][1]["result"]["statusUpdate"]["status"]["state"]
    assert done == "TASK_STATE_COMPLETED"
    again = sse_events(
        cast,
        "alice",
        "alice/coder",
        "SubscribeToTask",
        {"id": task_id},
        5,
        **{"Last-Event-ID": resumed[1][0] or ""},
    )
    assert again == resumed[2:]  # from the cursor on: no gap, no duplicate
    resent = sse_events(
        cast,
        "alice",
        "alice/coder",
        "SendStreamingMessage",
        {"message": sent},  # the same messageId: the same task, followed from the cursor
        5,
        **{"Last-Event-ID": str(cursor)},
    )
    assert resent == resumed
    over_rest = rest_sse_ids(cast, "alice", "alice/coder", task_id, str(cursor))
    assert over_rest == [i for i, _ in resumed]  # HTTP+JSON's stream: the same ids


async def test_cancel_and_the_list_of_the_agents_tasks(cast: Cast) -> None:
    async with _client(cast, "alice", "alice/coder") as client:
        await _pages(cast, client)


async def _pages(cast: Cast, client: Client) -> None:
    project = cast.project("listed")
    made = []
    for n in range(3):
        [r] = [x async for x in client.send_message(_send(f"task {n}", context_id=project))]
        made.append(r.task.id)
    since = Timestamp()
    since.FromDatetime(datetime.now(UTC))
    cancelled = await client.cancel_task(CancelTaskRequest(id=made[0]))
    assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
    page = await client.list_tasks(ListTasksRequest(context_id=project, page_size=2))
    assert [t.id for t in page.tasks] == made[:2] and page.total_size == 3
    rest = await client.list_tasks(
        ListTasksRequest(context_id=project, page_size=2, page_token=page.next_page_token)
    )
    assert [t.id for t in rest.tasks] == made[2:] and not rest.next_page_token
    submitted = await client.list_tasks(
        ListTasksRequest(context_id=project, status=TaskState.TASK_STATE_SUBMITTED)
    )
    assert [t.id for t in submitted.tasks] == made[1:] and submitted.total_size == 2
    first = await client.list_tasks(
        ListTasksRequest(context_id=project, status=TaskState.TASK_STATE_SUBMITTED, page_size=1)
    )
    assert [t.id for t in first.tasks] == made[1:2] and first.total_size == 2
    second = await client.list_tasks(
        ListTasksRequest(
            context_id=project,
            status=TaskState.TASK_STATE_SUBMITTED,
            page_size=1,
            page_token=first.next_page_token,
        )
    )
    assert [t.id for t in second.tasks] == made[2:] and not second.next_page_token
    recent = await client.list_tasks(
        ListTasksRequest(context_id=project, status_timestamp_after=since)
    )
    assert [t.id for t in recent.tasks] == made[:1] and recent.total_size == 1
    none = await client.list_tasks(
        ListTasksRequest(context_id=project, status=TaskState.TASK_STATE_WORKING)
    )
    assert (list(none.tasks), none.total_size, none.next_page_token) == ([], 0, "")


def test_another_owners_caller_waits_on_the_gate_and_sees_only_its_own(cast: Cast) -> None:
    sent = rpc(cast, "bob", "alice/coder", "SendMessage", {"message": message("hi", _id())})
    task = sent.json()["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_AUTH_REQUIRED"
    assert task["metadata"]["prickle"]["waiting_on"] == "owner_approval"
    mine = rpc(
        cast,
        "alice",
        "alice/coder",
        "SendMessage",
        {"message": message("mine", _id()), "configuration": NOW},
    )
    hidden = rpc(cast, "bob", "alice/coder", "GetTask", {"id": mine.json()["result"]["task"]["id"]})
    assert hidden.json()["error"]["code"] == -32001  # TaskNotFound, as if absent


def test_text_the_database_cannot_hold_is_invalid_params_not_a_fault(cast: Cast) -> None:
    for listed in [{"contextId": "a\u0000b"}, {"pageToken": "a\u0000b"}]:
        answer = rpc(cast, "alice", "alice/coder", "ListTasks", listed).json()
        if BACKEND == "postgres":  # PostgreSQL's text holds no U+0000
            assert answer["error"]["code"] == -32602, answer
            assert "U+0000" in answer["error"]["message"]
        else:
            assert answer["result"]["tasks"] == [], answer


@pytest.mark.once
def test_bad_input_gets_its_error_and_changes_nothing(cast: Cast) -> None:
    url = base(cast, "alice/coder")
    alice = headers(cast, "alice")
    broken = httpx.post(url, content=b"{not json", headers=alice)
    assert broken.json()["error"]["code"] == -32700
    unknown = rpc(cast, "alice", "alice/coder", "NoSuchMethod", {})
    assert unknown.json()["error"]["code"] == -32601
    wrong = rpc(cast, "alice", "alice/coder", "GetTask", {"id": 5, "historyLength": "x"})
    assert wrong.json()["error"]["code"] == -32602
    for listed in [{"status": 12345}, {"pageSize": 101}, {"statusTimestampAfter": "noon"}]:
        refused = rpc(cast, "alice", "alice/coder", "ListTasks", listed).json()
        assert refused["error"]["code"] == -32602, listed
    key = _id()
    first = rpc(
        cast,
        "alice",
        "alice/coder",
        "SendMessage",
        {"message": message("one", key), "configuration": NOW},
    )
    again = rpc(
        cast,
        "alice",
        "alice/coder",
        "SendMessage",
        {"message": message("one", key), "configuration": NOW},
    )
    assert again.json()["result"]["task"]["id"] == first.json()["result"]["task"]["id"]
    other = rpc(
        cast,
        "alice",
        "alice/coder",
        "SendMessage",
        {"message": message("two", key), "configuration": NOW},
    )
    assert other.json()["error"]["code"] == -32602
    huge = rpc(
        cast, "alice", "alice/coder", "SendMessage", {"message": message("x" * 1_100_000, _id())}
    )
    assert huge.status_code == 413
    packet = {"message": {**message("ok", _id()), "parts": [{"data": {"nonsense": 1}}]}}
    assert (
        rpc(cast, "alice", "alice/coder", "SendMessage", packet).json()["error"]["code"] == -32602
    )
    assert rpc(cast, None, "alice/coder", "GetTask", {"id": "x"}).status_code == 401
    expired = httpx.post(url, json={}, headers={**alice, "Authorization": "Bearer nope"})
    assert expired.status_code == 401
    for method, params in [("GetTask", {"id": "x"}), ("ListTasks", {})]:
        nobody = rpc(cast, "alice", "alice/nobody", method, params)
        assert nobody.json()["error"]["code"] == -32001  # TaskNotFound: no agent here
    unsent = rpc(
        cast,
        "alice",
        "alice/nobody",
        "SendMessage",
        {"message": message("x", _id()), "configuration": NOW},
    )
    assert unsent.json()["error"]["message"] == f"no agent {cast.id('alice')}/nobody"
    mine = rpc(
        cast,
        "alice",
        "alice/coder",
        "SendMessage",
        {"message": message("m", _id()), "configuration": NOW},
    )
    task_id = mine.json()["result"]["task"]["id"]
    not_http = {"taskId": task_id, "url": "ftp://example.com/hook"}
    push = rpc(cast, "alice", "alice/coder", "CreateTaskPushNotificationConfig", not_http)
    assert push.json()["error"]["code"] == -32602
    file_part = {"message": {**message("ok", _id()), "parts": [{"url": "https://x/y.png"}]}}
    refused = rpc(cast, "alice", "alice/coder", "SendMessage", file_part)
    assert refused.json()["error"]["code"] == -32005  # ContentTypeNotSupported
    rest = httpx.get(f"{url}/tasks/nonesuch", headers=alice)  # HTTP+JSON: its HTTP status
    assert rest.status_code == 404
    assert rest.headers["content-type"] == "application/json"  # A2A v1.0 section 11.1
    assert httpx.get(f"{cast.server.base_url}/healthz").status_code == 200


def test_a_handed_back_task_says_why(cast: Cast) -> None:
    sent = rpc(
        cast,
        "alice",
        "alice/coder",
        "SendMessage",
        {"message": message("why", _id()), "configuration": NOW},
    )
    task_id = sent.json()["result"]["task"]["id"]
    work(cast, "alice/coder", task_id, "accept_task")
    cast.move("alice/coder", "hand_back", task_id, reason="not my field")
    got = rpc(cast, "alice", "alice/coder", "GetTask", {"id": task_id}).json()["result"]
    assert got["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert got["status"]["message"]["parts"][0]["text"] == "handed back: not my field"


@pytest.mark.once
def test_the_app_does_not_import_the_a2a_sdk_until_asked() -> None:
    probe = (
        "import sys, app.main; print(sorted(m for m in sys.modules if m.split('.')[0] == 'a2a'))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_a_push_notification_arrives_signed_and_with_its_token(cast: Cast) -> None:
    sent = rpc(
        cast,
        "alice",
        "alice/coder",
        "SendMessage",
        {"message": message("push", _id()), "configuration": NOW},
    )
    task_id = sent.json()["result"]["task"]["id"]
    with Receiver() as receiver:
        asked = {"taskId": task_id, "url": receiver.url, "token": "client-token"}
        made = rpc(cast, "alice", "alice/coder", "CreateTaskPushNotificationConfig", asked)
        config = made.json()["result"]
        secret = made.headers["prickle-webhook-secret"]  # made now, shown once
        assert "authentication" not in config  # no credentials: the signature only
        work(cast, "alice/coder", task_id, "accept_task")
        [got] = receiver.wait_for(1)
    assert got.headers["x-a2a-notification-token"] == "client-token"
    assert "authorization" not in got.headers
    notified = got.verified(secret)  # the standardwebhooks package checks the signature
    assert notified["task"]["id"] == task_id
    assert notified["task"]["metadata"]["prickle"]["state"] == "accepted"
    where = {"taskId": task_id, "id": config["id"]}
    got_back = rpc(cast, "alice", "alice/coder", "GetTaskPushNotificationConfig", where)
    assert got_back.json()["result"]["url"] == config["url"]
    assert "authentication" not in got_back.json()["result"]
    assert "prickle-webhook-secret" not in got_back.headers  # the secret is shown once
    listed = rpc(
        cast, "alice", "alice/coder", "ListTaskPushNotificationConfigs", {"taskId": task_id}
    )
    assert [c["id"] for c in listed.json()["result"]["configs"]] == [config["id"]]
    hidden = rpc(cast, "bob", "alice/coder", "GetTaskPushNotificationConfig", where)
    assert hidden.json()["error"]["code"] == -32001
    rpc(cast, "alice", "alice/coder", "DeleteTaskPushNotificationConfig", where)
    gone = rpc(cast, "alice", "alice/coder", "ListTaskPushNotificationConfigs", {"taskId": task_id})
    assert gone.json()["result"].get("configs", []) == []


def test_a_stream_ends_when_its_token_is_revoked(cast: Cast) -> None:
    made = cast.server.run_data("mutations/create_token", {}, cast.token("alice"))["create_token"]
    sent = rpc(
        cast,
        "alice",
        "alice/coder",
        "SendMessage",
        {"message": message("rev", _id()), "configuration": NOW},
    )
    task_id = sent.json()["result"]["task"]["id"]
    body = {"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task_id}}
    opened = {**VERSION, "Authorization": f"Bearer {made['token']}"}
    with httpx.stream("POST", base(cast, "alice/coder"), json=body, headers=opened) as stream:
        lines = stream.iter_lines()
        assert next(line for line in lines if line.startswith("data:"))  # the task
        revoked = {"id": made["token_info"]["id"]}
        cast.server.run_data("mutations/revoke_token", revoked, cast.token("alice"))
        rest = list(lines)  # until the server closes the stream
    assert not [line for line in rest if line.startswith("data:")]
    again = httpx.post(base(cast, "alice/coder"), json=body, headers=opened)
    assert again.status_code == 401


def test_an_a2a_0_3_client_is_served_too(cast: Cast) -> None:
    said = {
        "kind": "message",
        "messageId": _id(),
        "role": "user",
        "parts": [{"kind": "text", "text": "old"}],
    }
    params = {"message": said, "configuration": {"blocking": False}}  # 0.3's returnImmediately
    body = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": params}
    alice = {"Authorization": f"Bearer {cast.token('alice')}"}  # no A2A-Version: 0.3
    sent = httpx.post(base(cast, "alice/coder"), json=body, headers=alice).json()["result"]
    assert (sent["kind"], sent["status"]["state"]) == ("task", "submitted")
    asked = {"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": sent["id"]}}
    got = httpx.post(base(cast, "alice/coder"), json=asked, headers=alice).json()["result"]
    assert got["history"][0]["parts"][0] == {"kind": "text", "text": "old"}


@pytest.mark.once
def test_a_stream_past_the_limit_is_refused_before_it_sends(start_server) -> None:  # type: ignore[no-untyped-def]
    server = start_server(env={"PRICKLE_STREAMS_PER_PRINCIPAL": "1"})
    cast = Cast(server).add("alice", "alice/coder")
    first = {"message": message("one", _id())}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": first}
    alice = headers(cast, "alice")
    with httpx.stream("POST", base(cast, "alice/coder"), json=body, headers=alice) as stream:
        lines = stream.iter_lines()  # held: the stream stays open meanwhile
        assert next(line for line in lines if line.startswith("data:"))
        second = {"message": message("two", _id())}
        refused = rpc(cast, "alice", "alice/coder", "SendStreamingMessage", second)
        [info] = refused.json()["error"]["data"]  # A2A's ErrorInfo, our code in its metadata
        assert info["metadata"]["prickle_code"] == "rate_limited"
    listed = rpc(cast, "alice", "alice/coder", "ListTasks", {}).json()["result"]
    assert len(listed["tasks"]) == 1  # the refused stream sent nothing


SENDS = 12  # far past the burst of 2


@pytest.mark.once
def test_messages_spend_the_callers_mutation_budget(start_server) -> None:  # type: ignore[no-untyped-def]
    server = start_server("--rate-limit", "1")  # a burst of 2, then one a second
    cast = Cast(server).add("alice", "alice/coder")

    def send(_: int) -> httpx.Response:
        params = {"message": message("m", _id()), "configuration": NOW}
        return rpc(cast, "alice", "alice/coder", "SendMessage", params)

    # all at once: sent one after another, a loaded machine's pace refilled the budget
    # between them
    with ThreadPoolExecutor(SENDS) as pool:
        sent = list(pool.map(send, range(SENDS)))
    refused = [r.json()["error"] for r in sent if "error" in r.json()]
    assert refused and refused[0]["data"][0]["metadata"]["prickle_code"] == "rate_limited"
    listed = rpc(cast, "alice", "alice/coder", "ListTasks", {}).json()["result"]
    assert len(listed["tasks"]) == len(sent) - len(refused)  # a refused message made nothing


def test_a_push_config_given_with_the_message_is_set_once_with_the_clients_secret(
    cast: Cast,
) -> None:
    secret = "whsec_" + base64.b64encode(b"s" * 24).decode()
    with Receiver() as receiver:
        config = {
            "url": receiver.url,
            "token": "inline",
            "authentication": {"scheme": "standard-webhooks", "credentials": secret},
        }
        said = message("inline push", _id())
        params = {
            "message": said,
            "configuration": {**NOW, "taskPushNotificationConfig": config},
        }
        first = rpc(cast, "alice", "alice/coder", "SendMessage", params).json()["result"]
        again = rpc(cast, "alice", "alice/coder", "SendMessage", params).json()["result"]
        task_id = first["task"]["id"]
        assert again["task"]["id"] == task_id  # the same messageId: the same task
        work(cast, "alice/coder", task_id, "accept_task")
        [got] = receiver.wait_for(1)
    assert got.verified(secret)["task"]["metadata"]["prickle"]["state"] == "accepted"
    listed = rpc(
        cast, "alice", "alice/coder", "ListTaskPushNotificationConfigs", {"taskId": task_id}
    )
    assert len(listed.json()["result"]["configs"]) == 1  # not set again by the resend
    weak = {**config, "authentication": {"scheme": "x", "credentials": "whsec_c2hvcnQ="}}
    bad = {"message": message("x", _id()), "configuration": {"taskPushNotificationConfig": weak}}
    before = _count(cast)
    refused = rpc(cast, "alice", "alice/coder", "SendMessage", bad).json()
    assert refused["error"]["code"] == -32602
    assert _count(cast) == before  # refused before the handoff: no task was made


def _count(cast: Cast) -> int:
    listed = rpc(cast, "alice", "alice/coder", "ListTasks", {}).json()["result"]
    return int(listed.get("totalSize", 0))


async def test_the_python_client_streams_drops_and_resumes_from_the_cursor(cast: Cast) -> None:
    async with _client(cast, "alice", "alice/coder", streaming=True) as client:
        stream = client.send_message(_send("stream me"))
        first = await anext(stream)
        await stream.aclose()  # the drop
        task_id, cursor = first.task.id, first.task.metadata["prickle"]["cursor"]
        work(cast, "alice/coder", task_id, "accept_task", "start_task")
        give_result(cast, "alice/coder", task_id)
        resume = ClientCallContext(service_parameters={"Last-Event-ID": cursor})
        asked = SubscribeToTaskRequest(id=task_id)
        resumed = [r async for r in client.subscribe(asked, context=resume)]
    kinds = [r.WhichOneof("payload") for r in resumed]
    assert kinds == ["status_update"] * 3 + ["artifact_update", "status_update"]
    cursors = [
        r.status_update.metadata["prickle"]["cursor"]
        for r in resumed
        if r.HasField("status_update")
    ]
    assert [int(c) for c in cursors] == sorted({int(c) for c in cursors})  # each once, in order
    assert int(cursors[0]) > int(cursor)  # nothing before the cursor again
    assert resumed[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED


def _sent_now(cast: Cast, who: str, text: str, **more: object) -> dict[str, Any]:
    """A new task sent by `who` to alice/coder, answered at once (returnImmediately)."""
    params = {"message": message(text, _id(), **more), "configuration": {"returnImmediately": True}}
    return rpc(cast, who, "alice/coder", "SendMessage", params).json()["result"]["task"]


def test_history_length_gives_the_last_n_messages_at_every_length(cast: Cast) -> None:
    task_id = _sent_now(cast, "alice", "count with me")["id"]
    work(cast, "alice/coder", task_id, "accept_task", "start_task")
    for n in range(3):  # the request, three questions and three answers: seven messages
        ask(cast, "alice/coder", task_id, f"question {n}?")
        answer = {
            "message": message(f"answer {n}", _id(), taskId=task_id),
            "configuration": {"returnImmediately": True},
        }
        assert "result" in rpc(cast, "alice", "alice/coder", "SendMessage", answer).json()
    whole = rpc(cast, "alice", "alice/coder", "GetTask", {"id": task_id}).json()["result"]
    ids = [m["messageId"] for m in whole["history"]]
    assert len(ids) == 7
    for length in range(0, 3 * len(ids) + 1):
        asked = {"id": task_id, "historyLength": length}
        got = rpc(cast, "alice", "alice/coder", "GetTask", asked).json()["result"]
        shown = [m["messageId"] for m in got.get("history", [])]
        assert shown == ids[max(0, len(ids) - length) :], length
    biggest = {"id": task_id, "historyLength": 2**31 - 1}
    assert (
        len(rpc(cast, "alice", "alice/coder", "GetTask", biggest).json()["result"]["history"]) == 7
    )
    for bad in (-1, -(2**31), 2**31, 10**30):
        refused = rpc(
            cast, "alice", "alice/coder", "GetTask", {"id": task_id, "historyLength": bad}
        )
        error = refused.json()["error"]
        assert error["code"] == -32602, (bad, error)
    negative = rpc(cast, "alice", "alice/coder", "GetTask", {"id": task_id, "historyLength": -1})
    assert "must not be negative" in negative.json()["error"]["message"]
    meta = whole["metadata"]["prickle"]
    assert meta["waitingOn"] is None and "answer" not in meta["allowedVerbs"]
    assert meta["allowed_verbs"] == meta["allowedVerbs"]  # the deprecated names, one release


def test_the_card_is_cached_and_revalidated_by_its_etag(cast: Cast) -> None:
    url = f"{base(cast, 'alice/coder')}/.well-known/agent-card.json"
    first = httpx.get(url, headers=headers(cast, "bob"))
    tag = first.headers["etag"]
    assert tag.startswith('"') and tag.endswith('"')  # strong: no W/
    assert "max-age=" in first.headers["cache-control"]
    assert "private" in first.headers["cache-control"]  # it needs a token
    assert parsedate_to_datetime(first.headers["last-modified"]).tzinfo is not None
    again = httpx.get(url, headers={**headers(cast, "bob"), "If-None-Match": tag})
    assert (again.status_code, again.content, again.headers["etag"]) == (304, b"", tag)
    listed = httpx.get(url, headers={**headers(cast, "bob"), "If-None-Match": f'"x", {tag}'})
    assert listed.status_code == 304
    changed = httpx.get(url, headers={**headers(cast, "bob"), "If-None-Match": '"other"'})
    assert changed.status_code == 200 and changed.json() == first.json()
    refused = httpx.get(url, headers={"If-None-Match": tag})  # no token: nothing to revalidate
    assert refused.status_code == 401


def test_json_rpc_is_answered_at_the_base_with_a_slash_too(cast: Cast) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {"pageSize": 1}}
    for url in (base(cast, "alice/coder"), base(cast, "alice/coder") + "/"):
        answered = httpx.post(url, json=body, headers=headers(cast, "alice"))
        assert answered.status_code == 200, url
        assert "tasks" in answered.json()["result"]


def test_evidence_with_a_url_is_a_url_part_of_the_artifact(cast: Cast) -> None:
    task_id = _sent_now(cast, "alice", "link me")["id"]
    work(cast, "alice/coder", task_id, "accept_task", "start_task")
    linked = {
        "kind": "link",
        "summary": "the report",
        "url": "https://example.com/report.html",
        "criteria": [0],
    }
    result = {**RESULT, "evidence": [RESULT["evidence"][0], linked]}
    cast.move("alice/coder", "return_result", task_id, result=result)
    got = rpc(cast, "alice", "alice/coder", "GetTask", {"id": task_id}).json()["result"]
    parts = got["artifacts"][0]["parts"]
    [url_part] = [p for p in parts if "url" in p]
    assert url_part["url"] == "https://example.com/report.html"
    assert url_part["filename"] == "the report"
    assert url_part["mediaType"] == "text/html"
    assert url_part["metadata"]["prickle"]["evidence"] == 1
    assert parts[0]["text"] == "the answer is 42"


@pytest.mark.parametrize("scheme", ["Bearer", "basic"])
def test_a_push_config_s_authentication_is_sent_as_authorization(cast: Cast, scheme: str) -> None:
    credentials = "dXNlcjpwYXNz" if scheme == "basic" else "receiver-token.v1"
    task_id = _sent_now(cast, "alice", f"push with {scheme}")["id"]
    with Receiver() as receiver:
        asked = {
            "taskId": task_id,
            "url": receiver.url,
            "authentication": {"scheme": scheme, "credentials": credentials},
        }
        made = rpc(cast, "alice", "alice/coder", "CreateTaskPushNotificationConfig", asked)
        config = made.json()["result"]
        secret = made.headers["prickle-webhook-secret"]
        assert config["authentication"] == {"scheme": scheme.capitalize()}  # no credentials
        work(cast, "alice/coder", task_id, "accept_task", "start_task")
        got = receiver.wait_for(2)
    assert [r.headers["authorization"] for r in got] == [f"{scheme.capitalize()} {credentials}"] * 2
    assert [r.verified(secret)["task"]["id"] for r in got] == [task_id] * 2  # still signed
    where = {"taskId": task_id, "id": config["id"]}
    read = rpc(cast, "alice", "alice/coder", "GetTaskPushNotificationConfig", where).json()
    listed = rpc(
        cast, "alice", "alice/coder", "ListTaskPushNotificationConfigs", {"taskId": task_id}
    )
    assert read["result"]["authentication"] == {"scheme": scheme.capitalize()}
    assert credentials not in json.dumps(read) + listed.text
    hooks = cast.server.run_data("queries/webhooks", {}, cast.token("alice"))
    assert credentials not in json.dumps(hooks)
    assert credentials not in cast.server.output()


def test_a_push_config_s_bad_authentication_is_invalid_params_and_makes_nothing(cast: Cast) -> None:
    task_id = _sent_now(cast, "alice", "bad push")["id"]
    url = "http://127.0.0.1:9/hook"
    wrong = [
        ({"scheme": "Digest", "credentials": "x"}, "Bearer or Basic, not 'Digest'"),
        ({"scheme": "", "credentials": "x"}, "Bearer or Basic, not empty"),
        ({"credentials": "x"}, "Bearer or Basic, not empty"),
        ({"scheme": "Bearer"}, "credentials: required with Bearer"),
        ({"scheme": "Bearer", "credentials": 5}, "credentials"),
        ({"scheme": "Bearer", "credentials": ["a"]}, "credentials"),
        ({"scheme": "Bearer", "credentials": "a b"}, "token68"),
        ({"scheme": "Bearer", "credentials": "a\r\nX-Evil: 1"}, "token68"),
        ({"scheme": "Basic", "credentials": "x" * 2001}, "token68"),
    ]
    for authentication, reason in wrong:
        asked = {"taskId": task_id, "url": url, "authentication": authentication}
        refused = rpc(cast, "alice", "alice/coder", "CreateTaskPushNotificationConfig", asked)
        error = refused.json()["error"]
        assert error["code"] == -32602 and reason in json.dumps(error), (authentication, error)
        assert "prickle-webhook-secret" not in refused.headers
        inline = {
            "message": message("x", _id()),
            "configuration": {
                "returnImmediately": True,
                "taskPushNotificationConfig": {"url": url, "authentication": authentication},
            },
        }
        before = _count(cast)
        sent = rpc(cast, "alice", "alice/coder", "SendMessage", inline).json()
        assert sent["error"]["code"] == -32602, (authentication, sent)
        assert _count(cast) == before  # refused before the handoff
    weak = rpc(
        cast,
        "alice",
        "alice/coder",
        "CreateTaskPushNotificationConfig",
        {"taskId": task_id, "url": url},
        **{"Prickle-Webhook-Secret": "whsec_c2hvcnQ="},
    ).json()
    assert weak["error"]["code"] == -32602 and "prickle-webhook-secret" in weak["error"]["message"]
    listed = rpc(
        cast, "alice", "alice/coder", "ListTaskPushNotificationConfigs", {"taskId": task_id}
    )
    assert listed.json()["result"].get("configs", []) == []


def _listed(cast: Cast, project: str) -> list[dict[str, Any]]:
    found = rpc(cast, "alice", "alice/coder", "ListTasks", {"contextId": project}).json()
    return list(found["result"].get("tasks", []))


def test_a_send_waits_until_its_task_needs_input_and_answers_it_so(cast: Cast) -> None:
    project = cast.project("blocking")
    params = {"message": message("six times seven?", _id(), contextId=project)}
    with ThreadPoolExecutor(1) as pool:
        sending = pool.submit(rpc, cast, "alice", "alice/coder", "SendMessage", params)
        deadline = time.monotonic() + 30
        while not (listed := _listed(cast, project)):  # the task made by the waiting send
            assert time.monotonic() < deadline and not sending.done(), "no task was made"
        [task] = listed
        assert not sending.done()  # SUBMITTED (routed): not settled, the send waits
        work(cast, "alice/coder", task["id"], "accept_task", "start_task")
        ask(cast, "alice/coder", task["id"], "in which base?")
        answered = sending.result(timeout=30).json()["result"]["task"]
    assert answered["id"] == task["id"]
    assert answered["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert answered["status"]["message"]["parts"][0]["text"] == "in which base?"
    assert [m["parts"][0]["text"] for m in answered["history"]][1:] == ["in which base?"]
    reply = {
        "message": message("ten", _id(), taskId=task["id"]),
        "configuration": {"historyLength": 1},
    }
    with ThreadPoolExecutor(1) as pool:
        replying = pool.submit(rpc, cast, "alice", "alice/coder", "SendMessage", reply)
        deadline = time.monotonic() + 30
        while _get(cast, task["id"])["metadata"]["prickle"]["state"] != "working":
            assert time.monotonic() < deadline and not replying.done(), "the answer never came"
        assert not replying.done()  # WORKING: the answer's send waits too
        give_result(cast, "alice/coder", task["id"])
        done = replying.result(timeout=30).json()["result"]["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert [m["parts"][0]["text"] for m in done["history"]] == ["ten"]  # historyLength 1
    assert done["artifacts"][0]["parts"][0]["text"] == "the answer is 42"


def _get(cast: Cast, task_id: str) -> dict[str, Any]:
    return dict(rpc(cast, "alice", "alice/coder", "GetTask", {"id": task_id}).json()["result"])


def test_return_immediately_must_be_a_boolean(cast: Cast) -> None:
    before = _count(cast)
    for bad in ("yes", 1, {"a": 1}, [True]):
        params = {"message": message("x", _id()), "configuration": {"returnImmediately": bad}}
        refused = rpc(cast, "alice", "alice/coder", "SendMessage", params).json()
        assert refused["error"]["code"] == -32602, (bad, refused)
        assert (
            "return_immediately"
            in json.dumps(refused["error"]).replace("Immediately", "_immediately").lower()
        )
    assert _count(cast) == before  # nothing was sent


@pytest.mark.once
def test_a_send_answers_the_task_as_it_stands_after_its_bound(start_server) -> None:  # type: ignore[no-untyped-def]
    server = start_server("--a2a-send-wait", "0.5")
    cast = Cast(server).add("alice", "alice/coder")
    url = f"{base(cast, 'alice/coder')}/message:send"  # HTTP+JSON's SendMessage blocks too
    body = {"message": message("nobody works on this", _id())}
    started = time.monotonic()
    sent = httpx.post(url, json=body, headers=headers(cast, "alice"), timeout=30)
    assert time.monotonic() - started >= 0.5  # it waited its bound
    assert sent.status_code == 200, sent.text
    assert sent.json()["task"]["status"]["state"] == "TASK_STATE_SUBMITTED"
    now = {**body, "message": message("at once", _id()), "configuration": NOW}
    assert httpx.post(url, json=now, headers=headers(cast, "alice")).status_code == 200


@pytest.mark.once
def test_a_waiting_send_ends_when_its_client_goes_away(start_server) -> None:  # type: ignore[no-untyped-def]
    """A client that gives up (its own timeout) ends the wait: the server, told to stop,
    has no request left in flight (else it would wait out its graceful timeout, 60 s)."""
    server = start_server("--a2a-send-wait", "3600", "--graceful-timeout", "60")
    cast = Cast(server).add("alice", "alice/coder")
    project = cast.project("gone")
    params = {"message": message("wait for me", _id(), contextId=project)}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params})
    path = f"/a2a/{cast.id('alice/coder')}"
    host, port = server.base_url.removeprefix("http://").split(":")
    request = (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {cast.token('alice')}\r\nA2A-Version: 1.0\r\n"
        f"Content-Length: {len(body.encode())}\r\n\r\n{body}"
    )
    with socket.create_connection((host, int(port))) as client:
        client.sendall(request.encode())
        deadline = time.monotonic() + 30
        while not _listed(cast, project):  # its task made: the send waits now
            assert time.monotonic() < deadline, "no task was made"
    started = time.monotonic()
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(timeout=45) == 0
    assert time.monotonic() - started < 30  # not the graceful timeout's 60 s
