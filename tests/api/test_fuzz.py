"""Operations generated from the schema never fault the server.

hypothesis-graphql builds queries and mutations from `app.api.schema.sdl()`: valid ones,
and ones with a single violation of the schema. Each goes to a real server with the
owner's token; whatever comes back must be a 2xx or 4xx answer without a fault (`internal`)
or a traceback in it. Ids and names are drawn partly from the server's real tasks, agents
and projects, so that mutations reach the service and not only "not found".

Repeatable and bounded: a fixed number of examples, derandomized; examples stop being
sent after TIME_BUDGET seconds; no shrinking (a failure is reported as generated).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from factory import PACKET
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis_graphql import Mode, from_schema, nodes
from server import Server

from app.api.schema import sdl

EXAMPLES = 300
TIME_BUDGET = 45.0
HANDOFF = "mutation($input: HandoffInput!) { handoff(input: $input) { id } }"
NAMES = ["p", "held", "admin", "admin/a", "admin/b", "other/x"]
# text PostgreSQL cannot hold, text at and over the limits, text that looks like a path or number
ODD = ["", "\x00", "a\x00b", "admin/a\x00", "x" * 501, "x" * 4001, "../..", "-1", "1e999", "\u202e"]
# times at the ends of what a date-time holds (a schedule's starts_at and ends_at)
ODD += ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-12:00", "2027-01-01T00:00:00"]


@dataclass(frozen=True)
class Cast:
    task_ids: list[str]
    client: httpx.Client


@pytest.fixture(scope="module")
def targets(api_server: Server) -> Iterator[Cast]:
    """Two agents and a few tasks, some held for approval, for the operations to act on."""
    owner = api_server.owner_token or ""
    for name in ("a", "b"):
        api_server.register(owner, name)
    api_server.data('mutation { set_gate_rule(input: {project: "held", effect: hold}) { id } }')
    ids = []
    for project, assignee in (("p", "admin/a"), ("p", "admin/b"), ("held", "admin/a")):
        variables = {"input": {"project": project, "assignee": assignee, "packet": PACKET}}
        ids.append(api_server.data(HANDOFF, variables)["handoff"]["id"])
    with httpx.Client(base_url=api_server.base_url, headers=api_server.headers()) as client:
        yield Cast(ids, client)


def operations(task_ids: list[str]) -> st.SearchStrategy[str]:
    """Three valid operations to one with a violation; ids and names mostly real ones."""
    ids, names, odd = st.sampled_from(task_ids), st.sampled_from(NAMES), st.sampled_from(ODD)
    text = st.text(st.characters(codec="utf-8"), max_size=40)
    small, any_int = st.integers(-1, 20), st.integers(-(2**31), 2**31 - 1)
    scalars = {
        "ID": st.one_of(ids, ids, odd, text).map(nodes.String),
        "String": st.one_of(names, names, ids, odd, text).map(nodes.String),
        "Int": st.one_of(small, small, any_int).map(nodes.Int),
    }
    valid = from_schema(sdl(), custom_scalars=scalars)
    invalid = from_schema(sdl(), custom_scalars=scalars, mode=Mode.NEGATIVE)
    return st.one_of(valid, valid, valid, invalid)


def test_generated_operations_never_fault_the_server(api_server: Server, targets: Cast) -> None:
    deadline = time.monotonic() + TIME_BUDGET
    sent: list[int] = []

    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(query=operations(targets.task_ids))
    def answers_without_fault(query: str) -> None:
        if time.monotonic() > deadline:
            return
        response = targets.client.post("/graphql", json={"query": query})
        sent.append(response.status_code)
        assert response.status_code < 500, (query, response.text[:500])
        assert "Traceback" not in response.text, query
        if response.headers.get("content-type") == "application/json":
            codes = {e["extensions"]["code"] for e in response.json().get("errors") or []}
            assert "internal" not in codes, (query, response.text[:500])

    answers_without_fault()
    assert len(sent) >= 50, f"only {len(sent)} operations were sent in {TIME_BUDGET}s"
    assert api_server.data("{ __typename }") == {"__typename": "Query"}
