"""Erasure, against a real `prickle serve`: refused while work is open (nothing changed); an
erased agent's token refused at once and its WebSocket closed with 4403; `erased: true` in
the task objects that name it, valid against the schema, while other owners' tasks and the
event log stay as they were; a person erased with its agents; the id never registered,
handed work, named in a rule or given a token again; `principal(id)`; `prickle erase`."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from factory import PACKET, task_validator
from live import Cast, opened
from server import Server, prickle
from websockets.exceptions import ConnectionClosed

ME = "{ me { id } }"
RESULT = {
    "summary": "Done",
    "provenance": "agent_generated",
    "evidence": [{"kind": "test_output", "summary": "the tests pass", "criteria": [0, 1]}],
}
EVENTS = """query($id: ID!) { task(id: $id) { events { seq kind verb actor version
  task { as_protocol } } } }"""


def fresh(server: Server) -> Cast:
    """alice with alice/planner and alice/writer, bob with bob/coder, carol with carol/spy;
    bob's gate allows alice's and carol's requests; alice's results in `review` wait for her."""
    cast = Cast(server).add(
        "alice", "bob", "carol", "alice/planner", "alice/writer", "bob/coder", "carol/spy"
    )
    for requester in ("alice", "carol"):
        rule = {"effect": "allow", "requester_owner": cast.id(requester)}
        server.run_data("mutations/set_gate_rule", {"input": rule}, cast.token("bob"))
    review = {"policy": "require_approval", "project": cast.project("review")}
    server.run_data("mutations/set_result_rule", {"input": review}, cast.token("alice"))
    return cast


def code_of(body: dict[str, Any]) -> str:
    assert body.get("errors") and not any((body.get("data") or {}).values()), body
    return str(body["errors"][0]["extensions"]["code"])


def refused(server: Server, doc: str, token: str, /, **variables: Any) -> dict[str, Any]:
    """The error of a document that must be refused."""
    body = server.run(doc, variables, token)
    code_of(body)
    return dict(body["errors"][0])


def task(server: Server, token: str, task_id: str) -> dict[str, Any]:
    found = server.run_data("queries/task", {"id": task_id}, token)["task"]
    assert found is not None
    return dict(found)


def principal(server: Server, token: str, principal_id: str) -> dict[str, Any] | None:
    return server.run_data("queries/principal", {"id": principal_id}, token)["principal"]


def protocol_of(server: Server, token: str, *task_ids: str) -> list[Any]:
    return [task(server, token, t)["as_protocol"] for t in task_ids]


def events_of(server: Server, token: str, task_id: str) -> list[Any]:
    return list(server.data(EVENTS, {"id": task_id}, token)["task"]["events"])


def valid(task_object: dict[str, Any]) -> None:
    errors = [e.message for e in task_validator().iter_errors(task_object)]
    assert errors == [], errors


def completed(cast: Cast, requester: str, project: str = "review") -> dict[str, Any]:
    """A task from `requester` to bob/coder, its result decided by alice in `review`."""
    made = cast.handoff(requester, "bob/coder", project)
    for verb in ("accept_task", "start_task"):
        cast.move("bob/coder", verb, made["id"])
    cast.move("bob/coder", "return_result", made["id"], result=RESULT)
    if project == "review":
        cast.move("alice", "decide_result", made["id"], decision="accept")
    return dict(task(cast.server, cast.token("bob"), made["id"]))


def unauthenticated(server: Server, token: str) -> bool:
    body = server.post(ME, token=token)
    return bool(body.get("errors")) and code_of(body) == "unauthenticated"


def test_erasing_is_refused_while_work_is_open_and_changes_nothing(api_server: Server) -> None:
    cast = fresh(api_server)
    open_task = cast.handoff("alice/planner", "bob/coder", "open")["id"]
    own = cast.handoff("bob", "bob/coder", "own")["id"]
    before = protocol_of(api_server, cast.token("bob"), open_task, own)
    for name, variables in [
        ("mutations/erase_agent", {"agent_id": cast.id("bob/coder")}),
        ("mutations/erase_person", {"handle": cast.id("bob")}),
    ]:
        error = refused(api_server, name, cast.token("bob"), **variables)
        assert error["extensions"]["code"] == "conflict"
        assert open_task in error["message"] and own in error["message"]
    assert protocol_of(api_server, cast.token("bob"), open_task, own) == before
    assert not unauthenticated(api_server, cast.token("bob/coder"))
    found = principal(api_server, cast.token("carol"), cast.id("bob/coder"))
    assert found is not None and found["erased"] is False
    # a task that has ended no longer holds it back
    cast.move("bob", "cancel_task", own)
    cast.move("alice/planner", "cancel_task", open_task)
    done = api_server.run_data(
        "mutations/erase_agent", {"agent_id": cast.id("bob/coder")}, cast.token("bob")
    )["erase_agent"]
    assert done["principal"] == cast.id("bob/coder") and done["tokens_revoked"] == 1


def test_who_may_erase(api_server: Server) -> None:
    cast = fresh(api_server)
    for who, name, variables, code in [
        ("carol", "mutations/erase_agent", {"agent_id": cast.id("alice/planner")}, "forbidden"),
        (
            "alice/planner",
            "mutations/erase_agent",
            {"agent_id": cast.id("alice/planner")},
            "forbidden",
        ),
        ("carol", "mutations/erase_person", {"handle": cast.id("alice")}, "forbidden"),
        ("alice/planner", "mutations/erase_person", {"handle": cast.id("alice")}, "forbidden"),
        ("alice", "mutations/erase_agent", {"agent_id": cast.id("alice/ghost")}, "not_found"),
        ("alice", "mutations/erase_agent", {"agent_id": "Not An Id"}, "invalid_input"),
        ("alice", "mutations/erase_person", {"handle": "Bad Handle"}, "invalid_input"),
    ]:
        assert refused(api_server, name, cast.token(who), **variables)["extensions"]["code"] == (
            code
        ), (who, name)
    found = principal(api_server, cast.token("carol"), cast.id("alice/planner"))
    assert found is not None and found["erased"] is False


async def test_an_erased_agent_is_refused_at_once_its_socket_closed_and_marked(
    api_server: Server,
) -> None:
    cast = fresh(api_server)
    planned = completed(cast, "alice/planner")
    others = [
        completed(cast, "carol/spy", "elsewhere")["id"],
        cast.handoff("carol", "carol/spy", "x")["id"],
    ]
    before = protocol_of(api_server, cast.token("carol"), *others)
    events_before = events_of(api_server, cast.token("bob"), planned["id"])
    planner = cast.token("alice/planner")
    async with opened(api_server, planner) as live:
        await live.subscribe({"project": cast.project("review")})
        await asyncio.sleep(0.2)
        variables = {"agent_id": cast.id("alice/planner")}
        done = (
            await asyncio.to_thread(
                api_server.run_data, "mutations/erase_agent", variables, cast.token("alice")
            )
        )["erase_agent"]
        assert unauthenticated(api_server, planner)  # the very next request
        started = time.monotonic()
        with pytest.raises(ConnectionClosed):
            while True:
                await live.receive(timeout=2.0)
        assert live.ws.close_code == 4403 and time.monotonic() - started < 2.0
    assert (done["principal"], done["tokens_revoked"], done["tasks_marked"]) == (
        cast.id("alice/planner"),
        1,
        1,
    )
    after = task(api_server, cast.token("bob"), planned["id"])
    expected = {"kind": "agent", "agent_id": cast.id("alice/planner"), "erased": True}
    assert after["as_protocol"]["requested_by"] == expected
    assert after["requested_by"] == expected
    assert after["as_protocol"]["result"]["decided_by"] == {
        "kind": "person",
        "handle": cast.id("alice"),
    }
    assert (after["version"], after["updated_at"]) == (planned["version"], planned["updated_at"])
    valid(after["as_protocol"])
    assert protocol_of(api_server, cast.token("carol"), *others) == before
    assert events_of(api_server, cast.token("bob"), planned["id"]) == events_before
    listed = api_server.run_data(
        "queries/tasks", {"project": cast.project("review")}, cast.token("alice")
    )["tasks"]["edges"]
    assert [e["node"]["as_protocol"]["requested_by"] for e in listed] == [expected]
    found = principal(api_server, cast.token("carol"), cast.id("alice/planner"))
    assert found is not None and (found["erased"], found["capabilities"], found["owner"]) == (
        True,
        [],
        cast.id("alice"),
    )
    # the snapshot a new subscriber gets reads the same
    async with opened(api_server, cast.token("bob")) as live:
        await live.subscribe({"task_id": planned["id"]})
        snapshot = await live.event()
    assert snapshot["task"]["requested_by"] == expected


def test_an_erased_agent_is_never_handed_work_named_in_a_rule_or_registered_again(
    api_server: Server,
) -> None:
    cast = fresh(api_server)
    returned = cast.handoff("bob", "bob/coder", "back")["id"]
    cast.move("bob/coder", "hand_back", returned, reason="not mine")
    waiting = cast.handoff("alice", "alice/writer", "wait")["id"]
    cast.move("alice/writer", "accept_task", waiting)
    api_server.run_data(
        "mutations/erase_agent", {"agent_id": cast.id("alice/planner")}, cast.token("alice")
    )
    gone = cast.id("alice/planner")
    packet = {"project": cast.project("p"), "assignee": gone, "packet": PACKET}
    for who, name, variables, code in [
        ("bob", "mutations/handoff", {"input": packet}, "invalid_input"),
        (
            "bob",
            "mutations/reroute",
            {"task_id": returned, "assignee": gone},
            "invalid_input",
        ),
        (
            "alice/writer",
            "mutations/wait_on",
            {"task_id": waiting, "on": "agent", "agent": gone},
            "invalid_input",
        ),
        (
            "bob",
            "mutations/set_gate_rule",
            {"input": {"effect": "allow", "requester_agent": gone}},
            "invalid_input",
        ),
        (
            "alice",
            "mutations/set_result_rule",
            {"input": {"policy": "auto_accept", "assignee": gone}},
            "invalid_input",
        ),
        ("alice", "mutations/register_agent", {"name": "planner"}, "conflict"),
        ("alice", "mutations/create_token", {"agent": gone}, "conflict"),
        ("alice", "mutations/erase_agent", {"agent_id": gone}, "conflict"),
    ]:
        assert refused(api_server, name, cast.token(who), **variables)["extensions"]["code"] == (
            code
        ), (who, name)
    made = prickle("token", "create", "--agent", gone, "--database-url", api_server.database_url)
    assert made.returncode == 2 and "prickle: conflict:" in made.stderr
    assert task(api_server, cast.token("bob"), returned)["state"] == "returned"
    assert task(api_server, cast.token("alice"), waiting)["state"] == "accepted"


def test_erasing_a_person_erases_its_agents(api_server: Server) -> None:
    cast = fresh(api_server)
    planned = completed(cast, "alice/planner")
    by_alice = completed(cast, "alice", "easy")["id"]
    other = completed(cast, "carol/spy", "elsewhere")["id"]
    before = protocol_of(api_server, cast.token("carol"), other)
    events_before = events_of(api_server, cast.token("bob"), planned["id"])
    done = api_server.run_data(
        "mutations/erase_person", {"handle": cast.id("alice")}, cast.token("alice")
    )["erase_person"]
    assert (done["principal"], done["tokens_revoked"], done["tasks_marked"]) == (
        cast.id("alice"),
        3,
        2,
    )
    for name in ("alice", "alice/planner", "alice/writer"):
        assert unauthenticated(api_server, cast.token(name))
        found = principal(api_server, cast.token("bob"), cast.id(name))
        assert found is not None and found["erased"] is True
    after = task(api_server, cast.token("bob"), planned["id"])
    protocol = after["as_protocol"]
    assert protocol["requested_by"] == {
        "kind": "agent",
        "agent_id": cast.id("alice/planner"),
        "erased": True,
    }
    decided = {"kind": "person", "handle": cast.id("alice"), "erased": True}
    assert protocol["result"]["decided_by"] == decided
    assert protocol["result"]["verified_by"] == {"kind": "system"}
    assert [r["decided_by"] for r in after["results"]] == [decided]
    valid(protocol)
    mine = task(api_server, cast.token("bob"), by_alice)["as_protocol"]
    assert mine["requested_by"] == {"kind": "person", "handle": cast.id("alice"), "erased": True}
    valid(mine)
    assert protocol_of(api_server, cast.token("carol"), other) == before
    assert events_of(api_server, cast.token("bob"), planned["id"]) == events_before
    for args in (("--owner", cast.id("alice")), ("--agent", cast.id("alice/new"))):
        made = prickle("token", "create", *args, "--database-url", api_server.database_url)
        assert made.returncode == 2 and "prickle: conflict:" in made.stderr


def test_principal_shows_kind_owner_capabilities_and_null_when_unknown(api_server: Server) -> None:
    cast = Cast(api_server).add("dave")
    api_server.register(cast.token("dave"), "indexer", [{"kind": "repo", "name": "prickle"}])
    found = principal(api_server, cast.token("dave"), cast.id("dave/indexer"))
    assert found is not None
    assert (found["kind"], found["owner"], found["capabilities"], found["erased"]) == (
        "agent",
        cast.id("dave"),
        [{"kind": "repo", "name": "prickle"}],
        False,
    )
    me = principal(api_server, cast.token("dave"), cast.id("dave"))
    assert me is not None and (me["kind"], me["id"], me["capabilities"]) == (
        "person",
        cast.id("dave"),
        [],
    )
    assert principal(api_server, cast.token("dave"), cast.id("nobody")) is None
    assert code_of(
        api_server.run("queries/principal", {"id": "Not/An Id"}, cast.token("dave"))
    ) == ("invalid_input")
    assert code_of(api_server.run("queries/principal", {"id": cast.id("dave")}, None)) == (
        "unauthenticated"
    )


def test_prickle_erase_from_the_command_line(api_server: Server) -> None:
    cast = fresh(api_server)
    url = api_server.database_url
    busy = cast.handoff("alice", "bob/coder", "busy")["id"]
    refused_now = prickle("erase", "--person", cast.id("bob"), "--database-url", url)
    assert refused_now.returncode == 2 and "prickle: conflict:" in refused_now.stderr
    assert busy in refused_now.stderr
    done = prickle("erase", "--agent", cast.id("carol/spy"), "--database-url", url)
    assert done.returncode == 0, done.stderr
    assert f"erased {cast.id('carol/spy')}" in done.stdout
    started = time.monotonic()
    while not unauthenticated(api_server, cast.token("carol/spy")):
        assert time.monotonic() - started < 2.0, "the erased agent's token is still accepted"
        time.sleep(0.02)
    person = prickle("erase", "--person", cast.id("carol"), "--database-url", url)
    assert person.returncode == 0, person.stderr
    found = principal(api_server, cast.token("bob"), cast.id("carol"))
    assert found is not None and found["erased"] is True
    unknown = prickle("erase", "--person", cast.id("nobody"), "--database-url", url)
    assert unknown.returncode == 2 and "prickle: not_found:" in unknown.stderr
