"""Remote A2A agents as assignees, through a real Prickle server and a real `a2a-sdk` server
(`RemoteAgent`): a task routed to one is sent to it, followed, and moved on its behalf;
a kill -9 of Prickle mid-task finishes the task once; a card URL on a private address is
refused; two processes on one PostgreSQL database dispatch each task once."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from a2a_remote import RemoteAgent
from factory import packet
from server import Server, module_database, postgres_only, start

LEASE = "2"
ENV = {
    "PRICKLE_ALLOW_PRIVATE_AGENTS": "1",
    "PRICKLE_A2A_LEASE_SECONDS": LEASE,
    "PRICKLE_A2A_POLL": "0.1,0.2,0.5",
}
PRIVATE_BY_FLAG = {k: v for k, v in ENV.items() if k != "PRICKLE_ALLOW_PRIVATE_AGENTS"}
REGISTER = (
    "mutation($n: String!, $u: String!, $c: String) "
    "{ register_remote_agent(name: $n, card_url: $u, credential: $c) "
    "{ agent_id card_url has_credential } }"
)
HANDOFF = "mutation($input: HandoffInput!) { handoff(input: $input) { id state } }"
TASK = """query($id: ID!) { task(id: $id) {
  state waiting_on question { question } latest_checkpoint { progress }
  result { summary status evidence { kind summary content criteria } }
  events { kind verb from_state to_state actor note }
} }"""
ANSWER = "mutation($id: ID!, $a: String!) { answer(task_id: $id, answer: $a) { state } }"
CANCEL = 'mutation($id: ID!) { cancel_task(task_id: $id, reason: "not needed") { state } }'


def hand_off(server: Server, text: str, agent: str = "remote") -> str:
    wanted = {"project": "work", "assignee": f"admin/{agent}", "packet": packet(task=text)}
    made = server.data(HANDOFF, {"input": wanted})["handoff"]
    assert made["state"] == "routed"
    return str(made["id"])


def task(server: Server, task_id: str) -> dict[str, Any]:
    found = server.data(TASK, {"id": task_id})["task"]
    events = found.pop("events")
    found["moves"] = [
        (e["verb"], e["to_state"])
        for e in events
        if e["verb"] not in ("handoff", "save_checkpoint")
    ]
    found["checkpoints"] = sum(e["kind"] == "checkpointed" for e in events)
    # who moved it, besides the requester handing it off and the server judging its result
    found["movers"] = {e["actor"] for e in events if e["verb"] != "handoff" and e["actor"]}
    return found


def until(
    server: Server,
    task_id: str,
    state: str,
    waiting_on: str | None = None,
    checkpoint: bool = False,
) -> dict[str, Any]:
    """The task once it stands at `state` (and `waiting_on`, and has a checkpoint, when
    asked): a wait, not a timed assertion."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = task(server, task_id)
        if (
            found["state"] == state
            and (waiting_on is None or found["waiting_on"] == waiting_on)
            and (not checkpoint or found["latest_checkpoint"] is not None)
        ):
            return found
        time.sleep(0.1)
    raise AssertionError(f"{task_id} never reached {state}: {task(server, task_id)}")


def register(
    server: Server, remote: RemoteAgent, credential: str | None = None, name: str = "remote"
) -> None:
    made = server.data(REGISTER, {"n": name, "u": remote.card_url, "c": credential})
    assert made["register_remote_agent"] == {
        "agent_id": f"admin/{name}",
        "card_url": remote.card_url,
        "has_credential": credential is not None,
    }


def sent_for(remote: RemoteAgent, task_id: str) -> list[str]:
    """The ids of the messages the remote received for the task, in order."""
    return [m["message_id"] for m in remote.messages() if f"-{task_id}-" in m["message_id"]]


@dataclass
class Served:
    server: Server
    streamed: RemoteAgent  # admin/remote: its card offers streaming, it wants a credential
    polled: RemoteAgent  # admin/polled: no streaming, so Prickle polls GetTask


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One Prickle server and two remote agents for the lifecycle tests."""
    directory = tmp_path_factory.mktemp("a2a")
    (directory / "streamed").mkdir()
    (directory / "polled").mkdir()
    streamed = RemoteAgent(directory / "streamed", credential="s3cret")
    polled = RemoteAgent(directory / "polled", streaming=False)
    with streamed, polled, module_database(directory) as url:
        server = start(url, directory / "logs", "--allow-private-agents", env=PRIVATE_BY_FLAG)
        try:
            register(server, streamed, "s3cret")
            register(server, polled, name="polled")
            yield Served(server, streamed, polled)
        finally:
            server.stop()


def test_a_task_handed_to_a_remote_agent_completes_with_its_artifact_as_evidence(
    served: Served,
) -> None:
    server, remote = served.server, served.streamed
    task_id = hand_off(server, "complete the report")
    done = until(server, task_id, "completed")
    assert done["moves"] == [
        ("accept_task", "accepted"),
        ("start_task", "working"),
        ("return_result", "verifying"),
        ("return_result", "completed"),
    ]
    assert done["result"]["summary"] == "done"
    assert done["result"]["evidence"] == [
        {
            "kind": "note",
            "summary": "report",
            "content": "the report, all tests pass",
            "criteria": [0],
        }
    ]
    sent = [m for m in remote.messages() if f"-{task_id}-" in m["message_id"]]
    assert len(sent) == 1 and sent[0]["message_id"].startswith(f"prickle-{task_id}-")
    assert sent[0]["context_id"] == sent[0]["message_id"]


def test_a_remote_question_waits_on_the_requester_and_the_answer_goes_back(
    served: Served,
) -> None:
    server, remote = served.server, served.polled
    task_id = hand_off(server, "ask which colour", "polled")
    asking = until(server, task_id, "waiting", "human")
    assert asking["question"] == {"question": "Which colour?"}
    server.data(ANSWER, {"id": task_id, "a": "green"})
    done = until(server, task_id, "completed")
    assert done["result"]["summary"] == "painted it green"
    assert done["result"]["evidence"][0]["content"] == "colour: green"
    sent = sent_for(remote, task_id)
    assert len(sent) == 2 and sent[1].startswith(f"prickle-{task_id}-answer-")
    assert [v for v, _ in done["moves"]].count("wait_on") == 1


def test_a_remote_failure_hands_the_task_back_and_a_cancel_reaches_the_remote(
    served: Served,
) -> None:
    server, remote = served.server, served.streamed
    failed = until(server, hand_off(server, "fail at it"), "returned")
    assert failed["moves"][-1] == ("hand_back", "returned")
    slow = hand_off(server, "slow work")
    until(server, slow, "working")
    server.data(CANCEL, {"id": slow})
    remote.let_go()
    until(server, slow, "cancelled")
    # a remote that forgets a task (restarted: its tasks were in memory): handed back
    forgotten = hand_off(server, "slow work", "polled")
    until(server, forgotten, "working")
    served.polled.restart()
    handed_back = until(server, forgotten, "returned")
    assert handed_back["moves"][-1] == ("hand_back", "returned")
    refused_inputs(server, remote)


def refused_inputs(server: Server, remote: RemoteAgent) -> None:
    """Bad input to the remote agents' verbs: each its error, nothing changed."""
    before = server.data("{ remote_agents { agent_id card_url } }")["remote_agents"]
    code = lambda query, variables, token=server.owner_token: server.error(  # noqa: E731
        query, variables, token
    )["extensions"]["code"]
    not_a_card = f"{server.base_url}/healthz"
    assert code(REGISTER, {"n": "other", "u": not_a_card}) == "invalid_input"
    assert code(REGISTER, {"n": "other", "u": remote.card_url, "c": "a\nb"}) == "invalid_input"
    assert code(REGISTER, {"n": "Not A Name", "u": remote.card_url}) == "invalid_input"
    assert code(REGISTER, {"n": "other", "u": "x" * 3000}) == "invalid_input"
    bob = server.token(owner="bob")
    remove = "mutation($a: String!) { remove_remote_agent(agent: $a) }"
    assert code(remove, {"a": "admin/remote"}, bob) == "not_found"
    assert code(remove, {"a": "not an id"}) == "invalid_input"
    worker = server.register(bob, "worker")
    assert code(REGISTER, {"n": "other", "u": remote.card_url}, worker) == "forbidden"
    assert server.data("{ remote_agents { agent_id card_url } }")["remote_agents"] == before
    assert "Traceback" not in server.output()


@pytest.mark.once
def test_a_card_url_on_a_private_address_is_refused_and_nothing_is_registered(
    start_server: Any,
) -> None:
    server = start_server()  # private addresses not allowed
    for url in (
        "http://127.0.0.1:9/.well-known/agent-card.json",
        "http://10.0.0.7/",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]:8080/",
        "ftp://example.com/card.json",
        "http://user:pw@93.184.215.14/",
    ):
        error = server.error(REGISTER, {"n": "remote", "u": url})
        assert error["extensions"]["code"] == "invalid_input", (url, error)
    error = server.error(REGISTER, {"n": "remote", "u": "https://93.184.215.14/", "c": "a b"})
    assert error["extensions"]["code"] == "invalid_input"
    assert server.data("{ remote_agents { agent_id } }")["remote_agents"] == []
    assert "Traceback" not in server.output()


@pytest.mark.once
def test_every_address_contacted_is_checked_not_only_the_registered_one(
    start_server: Any, tmp_path: Path
) -> None:
    with RemoteAgent(tmp_path) as remote:
        allowing = start_server(env=ENV)
        register(allowing, remote)  # on loopback: allowed by this server only
        allowing.stop()
        server = start_server(env={**ENV, "PRICKLE_ALLOW_PRIVATE_AGENTS": "0"})
        server.owner_token = allowing.owner_token
        task_id = hand_off(server, "complete it")
        _wait_for(lambda: "PRICKLE_ALLOW_PRIVATE_AGENTS=1" in server.output())
        assert remote.messages() == []  # its card was not even read: nothing was sent
        assert task(server, task_id)["state"] == "routed"


def _kill(server: Server) -> None:
    os.kill(server.process.pid, signal.SIGKILL)
    server.process.wait(10)


def test_a_kill_9_mid_send_and_mid_task_finishes_each_task_once_after_restart(
    start_server: Any, tmp_path: Path
) -> None:
    with RemoteAgent(tmp_path) as remote:
        server = start_server(env=ENV)
        register(server, remote)
        working_id = hand_off(server, "slow work")
        working = until(server, working_id, "working", checkpoint=True)
        assert working["latest_checkpoint"] == {"progress": "on it"}  # its WORKING update
        sending_id = hand_off(server, "hold the answer")
        _wait_for(lambda: sent_for(remote, sending_id) != [])  # the remote has the message
        _kill(server)  # the remote has not answered it: Prickle never learned its task
        remote.let_go()  # the remote finishes both while Prickle is down
        again = start_server(env=ENV)
        again.owner_token = server.owner_token
        for task_id in (working_id, sending_id):
            done = until(again, task_id, "completed")
            assert done["moves"] == [
                ("accept_task", "accepted"),
                ("start_task", "working"),
                ("return_result", "verifying"),
                ("return_result", "completed"),
            ]
            # sent once: the restart found the remote task (the second by its context,
            # ListTasks), and sent neither again
            assert len(sent_for(remote, task_id)) == 1
        assert task(again, working_id)["checkpoints"] == 1
        # erasing the agent forgets its card and credential
        again.data('mutation { erase_agent(agent_id: "admin/remote") { principal } }')
        assert again.data("{ remote_agents { agent_id } }")["remote_agents"] == []


def _wait_for(condition: Any) -> None:
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, "never happened"
        time.sleep(0.05)


@postgres_only
def test_two_processes_dispatch_each_task_once(pg_database_url: str, tmp_path: Path) -> None:
    with RemoteAgent(tmp_path) as remote:
        first = start(pg_database_url, tmp_path / "first", env=ENV)
        second = start(pg_database_url, tmp_path / "second", env=ENV)
        second.owner_token = first.owner_token
        try:
            register(first, remote)
            ids = [hand_off(s, "complete it") for s in (first, second, first, second)]
            for task_id in ids:
                done = until(second, task_id, "completed")
                assert [v for v, _ in done["moves"]] == [
                    "accept_task",
                    "start_task",
                    "return_result",
                    "return_result",
                ]
                assert done["movers"] == {"admin/remote"}
            sent = [m["message_id"] for m in remote.messages()]
            assert len(sent) == len(set(sent)) == len(ids)
        finally:
            first.stop()
            second.stop()
