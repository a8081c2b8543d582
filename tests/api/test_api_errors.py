"""Errors in one place: protocol errors keep their code, faults answer `internal` only."""

from __future__ import annotations

import logging

import pytest
from factory import (
    CODER,
    PLANNER,
    give,
)
from graphql import GraphQLError
from server import in_process

from app.api import errors
from app.domain import errors as domain_errors
from app.domain.errors import InvalidState, NotFound, PrickleError, ProtocolError
from app.events.hub import FellBehind
from app.service import admin, unit, verbs
from app.storage.store import Store

pytestmark = pytest.mark.cast

ACCEPT = "mutation($id: ID!) { accept_task(task_id: $id) { id } }"


async def test_an_unexpected_fault_answers_internal_error_and_is_logged(
    store: Store, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("the disk is on fire at /var/secret")

    monkeypatch.setattr(unit, "run_verb", broken)  # every task verb's transaction
    task = await give(store)
    caplog.set_level(logging.ERROR, logger="app.api")
    token = (await admin.provision_token(store, CODER)).token
    async with in_process(store.url, token) as (_app, http):
        response = await http.post("/graphql", json={"query": ACCEPT, "variables": {"id": task.id}})
        still = await http.post("/graphql", json={"query": "{ me { id } }"})
    body = response.json()
    assert body["errors"] == [
        {
            "message": "internal error",
            "locations": [{"line": 1, "column": 22}],
            "path": ["accept_task"],
            "extensions": {"code": "internal"},
        }
    ]
    assert "secret" not in response.text and "Traceback" not in response.text
    assert "the disk is on fire" in caplog.text and "RuntimeError" in caplog.text
    assert caplog.records[-1].exc_info is not None
    assert still.json() == {"data": {"me": {"id": "bob/coder"}}}


async def test_invalid_state_carries_the_current_state(store: Store) -> None:
    task = await give(store, project="held")  # the factory's gate holds project "held"
    token = (await admin.provision_token(store, CODER)).token
    async with in_process(store.url, token) as (_app, http):
        body = (
            await http.post("/graphql", json={"query": ACCEPT, "variables": {"id": task.id}})
        ).json()
    assert body["errors"][0]["extensions"] == {
        "code": "invalid_state",
        "state": "waiting",
        "waiting_on": "owner_approval",
    }


async def test_a_turn_budget_spent_answers_turn_budget_exhausted(store: Store) -> None:
    task = await give(store, turn_budget=0)
    await verbs.accept_task(store, CODER, task.id)
    save = (
        'mutation($id: ID!) { save_checkpoint(task_id: $id, checkpoint: {progress: "p"}) { id } }'
    )
    token = (await admin.provision_token(store, CODER)).token
    async with in_process(store.url, token) as (_app, http):
        body = (
            await http.post("/graphql", json={"query": save, "variables": {"id": task.id}})
        ).json()
    assert body["errors"][0]["extensions"] == {"code": "turn_budget_exhausted"}


async def test_an_agent_administering_answers_forbidden(store: Store) -> None:
    query = "mutation { set_gate_rule(input: {effect: allow}) { id } }"
    token = (await admin.provision_token(store, PLANNER)).token
    async with in_process(store.url, token) as (_app, http):
        body = (await http.post("/graphql", json={"query": query})).json()
    assert body["errors"][0]["extensions"] == {"code": "forbidden"}


def test_the_tree_has_one_root_and_the_domain_keeps_no_api_codes() -> None:
    assert issubclass(ProtocolError, PrickleError) and issubclass(FellBehind, PrickleError)
    assert issubclass(errors.RateLimited, ProtocolError)
    assert issubclass(errors.QueryTooComplex, ProtocolError)
    assert not hasattr(domain_errors, "RateLimited")
    assert not hasattr(domain_errors, "QueryTooComplex")
    assert not hasattr(ProtocolError("x"), "extensions")


EXTENSIONS: list[tuple[BaseException, dict[str, object]]] = [
    (
        InvalidState("accept_task", "waiting", "owner_approval"),
        {"code": "invalid_state", "state": "waiting", "waiting_on": "owner_approval"},
    ),
    (
        InvalidState("start_task", "requested"),
        {"code": "invalid_state", "state": "requested", "waiting_on": None},
    ),
    (NotFound("no task T"), {"code": "not_found"}),
    (errors.QueryTooComplex("too deep"), {"code": "query_too_complex"}),
    (errors.RateLimited("at most 20"), {"code": "rate_limited"}),
    (errors.RateLimited("later", retry_after=2.5), {"code": "rate_limited", "retry_after": 2.5}),
    (FellBehind(41), {"code": "rate_limited", "after": "41"}),
    (FellBehind(), {"code": "rate_limited"}),
    (RuntimeError("the disk is on fire"), {"code": "internal"}),
]


@pytest.mark.parametrize("error, extensions", EXTENSIONS)
def test_each_error_has_its_extensions(error: BaseException, extensions: dict[str, object]) -> None:
    assert errors.extensions(error) == extensions
    assert errors.as_graphql(error)["extensions"] == extensions


def test_a_fault_is_never_described_to_a_client() -> None:
    fault = RuntimeError("the disk is on fire at /var/secret")
    assert errors.response_body(fault) == {
        "data": None,
        "errors": [{"message": "internal error", "extensions": {"code": "internal"}}],
    }
    assert errors.message(NotFound("no task T")) == "no task T"


def test_graphql_cores_own_refusal_during_execution_is_invalid_input() -> None:
    """An explicit null for a non-null argument with a default fails while the field runs."""
    refusal = GraphQLError("Argument 'first' has invalid value: Expected variable ...")
    located = GraphQLError(refusal.message, path=["tasks"], original_error=refusal)
    errors.shape(located)
    assert located.extensions == {"code": "invalid_input"}
    assert located.message.startswith("Argument 'first' has invalid value")
