"""The mutation rate limit per principal, against `prickle serve --rate-limit 5` (a burst of
10): past it a mutation answers `rate_limited` with `retry_after` and changes nothing;
other principals, and queries, go on as before.

alice's agents hand tasks to bob/coder (bob's gate has no rule: each task is held for bob);
each test uses agents and a project of its own, so their buckets do not meet.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from factory import PACKET
from server import Server, module_database, persons, prickle, start

# the limit is counted in the process, above storage: the backend does not change it
pytestmark = pytest.mark.once

RATE = 5
BURST = 2 * RATE
HANDOFF = """mutation($input: HandoffInput!) { handoff(input: $input) { id } }"""
COUNTS = """query($project: String!, $requester: String!) {
  tasks(project: $project, requester: $requester) { total_count }
  task_events(project: $project) { total_count }
}"""


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("limited")
    with module_database(directory) as url:
        server = start(url, directory / "logs", "--rate-limit", str(RATE))
        try:
            yield server
        finally:
            server.stop()


@pytest.fixture(scope="module")
def tokens(limited: Server) -> dict[str, str]:
    found = persons(limited, "alice", "bob")
    limited.register(found["bob"], "coder")
    for name in ("flood", "calm", "aliased"):
        found[name] = limited.register(found["alice"], name)
    return found


def handoffs(count: int) -> str:
    """A document of `count` aliased handoffs, h0 to h<count - 1>, taking $i0, $i1, ..."""
    declared = ", ".join(f"$i{n}: HandoffInput!" for n in range(count))
    fields = " ".join(f"h{n}: handoff(input: $i{n}) {{ id }}" for n in range(count))
    return f"mutation({declared}) {{ {fields} }}"


def handoff_input(project: str) -> dict[str, Any]:
    return {
        "project": project,
        "assignee": "bob/coder",
        "packet": PACKET,
        "idempotency_key": uuid.uuid4().hex,
    }


def counts(server: Server, token: str, project: str, requester: str) -> tuple[int, int]:
    """(tasks, events) of `project` handed off by `requester`, as alice sees them."""
    found = server.data(COUNTS, {"project": project, "requester": requester}, token)
    return found["tasks"]["total_count"], found["task_events"]["total_count"]


async def post(http: httpx.AsyncClient, token: str, query: str, variables: dict) -> dict:
    body = {"query": query, "variables": variables}
    response = await http.post("/graphql", json=body, headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.text
    return response.json()


def rate_limited(body: dict) -> list[dict]:
    """The rate_limited errors of a response; any other error fails the test."""
    errors = body.get("errors") or []
    assert all(e["extensions"]["code"] == "rate_limited" for e in errors), errors
    return errors


async def flood(server: Server, tokens: dict[str, str]) -> dict[str, list[dict]]:
    """40 handoffs by alice/flood at once; meanwhile 8 by alice/calm and 40 queries by
    alice/flood. Each one's responses."""
    async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as http:

        def many(token: str, query: str, variables: Any, n: int) -> asyncio.Future[list[dict]]:
            return asyncio.gather(*(post(http, token, query, variables()) for _ in range(n)))

        flooded, calm, queried = await asyncio.gather(
            many(tokens["flood"], HANDOFF, lambda: {"input": handoff_input("flood")}, 40),
            many(tokens["calm"], HANDOFF, lambda: {"input": handoff_input("calm")}, 8),
            many(tokens["flood"], "{ me { id } }", dict, 40),
        )
    return {"flood": flooded, "calm": calm, "queries": queried}


def test_past_the_limit_a_mutation_is_refused_and_changes_nothing(
    limited: Server, tokens: dict[str, str]
) -> None:
    alice = tokens["alice"]
    before = counts(limited, alice, "flood", "alice/flood")
    started = time.monotonic()
    answered = asyncio.run(flood(limited, tokens))
    elapsed = time.monotonic() - started

    refused = [e for body in answered["flood"] for e in rate_limited(body)]
    accepted = [body for body in answered["flood"] if not body.get("errors")]
    assert refused, "40 handoffs at once, and none refused"
    assert len(refused) + len(accepted) == 40
    assert BURST <= len(accepted) <= BURST + RATE * elapsed + 1
    for error in refused:
        assert error["extensions"]["code"] == "rate_limited"
        assert 0 < error["extensions"]["retry_after"] <= 1 / RATE
        assert "mutations a second" in error["message"]
    assert all(body["data"] is None for body in answered["flood"] if body.get("errors"))

    assert all(not body.get("errors") for body in answered["calm"])
    calm_tasks, calm_events = counts(limited, alice, "calm", "alice/calm")
    assert calm_tasks == 8
    per_task = calm_events // 8  # the events of a held handoff

    tasks, events = counts(limited, alice, "flood", "alice/flood")
    assert tasks == before[0] + len(accepted)  # exactly the accepted ones took effect
    assert events == before[1] + per_task * len(accepted)
    assert all(body == {"data": {"me": {"id": "alice/flood"}}} for body in answered["queries"])


def test_after_retry_after_the_principal_may_mutate_again(
    limited: Server, tokens: dict[str, str]
) -> None:
    token = tokens["flood"]
    refusal = None
    for _ in range(BURST + 20):
        body = limited.post(HANDOFF, {"input": handoff_input("again")}, token)
        if body.get("errors"):
            refusal = rate_limited(body)[0]
            break
    assert refusal is not None, "never refused"
    assert limited.data("{ me { id } }", token=token) == {"me": {"id": "alice/flood"}}
    time.sleep(refusal["extensions"]["retry_after"])
    assert limited.data(HANDOFF, {"input": handoff_input("again")}, token)["handoff"]["id"]


def test_each_mutation_of_a_document_spends_a_token(
    limited: Server, tokens: dict[str, str]
) -> None:
    """Six documents of three aliased handoffs: eighteen mutations, six requests."""
    started = time.monotonic()
    bodies = [
        limited.post(
            handoffs(3), {f"i{n}": handoff_input("aliased") for n in range(3)}, tokens["aliased"]
        )
        for _ in range(6)
    ]
    elapsed = time.monotonic() - started
    refused = [body for body in bodies if rate_limited(body)]
    assert refused, "eighteen mutations in six documents, and none refused"
    whole = [body for body in bodies if not body.get("errors")]
    assert all(len(body["data"]) == 3 for body in whole)
    made = counts(limited, tokens["alice"], "aliased", "alice/aliased")[0]
    assert BURST <= made <= BURST + RATE * elapsed + 1
    assert made < 18


def three_at_once(server: Server, owner: str, name: str) -> dict[str, Any]:
    """Three aliased handoffs, in one document, by a new agent of the owner's to its coder."""
    agent = server.register(owner, name)
    variables = {f"i{n}": {**handoff_input("three"), "assignee": "admin/coder"} for n in range(3)}
    return server.post(handoffs(3), variables, agent)


def test_the_environment_sets_the_limit_and_the_flag_overrides_it(start_server: Any) -> None:
    strict = start_server(env={"PRICKLE_RATE_LIMIT": "1"})  # a burst of 2
    owner = strict.owner_token
    strict.register(owner, "coder")
    assert rate_limited(three_at_once(strict, owner, "strict"))[0]["path"] == ["h2"]
    strict.stop()
    off = start_server("--rate-limit", "0", env={"PRICKLE_RATE_LIMIT": "1"})
    made = off.data('{ tasks(project: "three") { total_count } }', token=owner)
    assert made == {"tasks": {"total_count": 2}}  # the refused third changed nothing
    assert len(three_at_once(off, owner, "free")["data"]) == 3


def test_a_negative_rate_limit_is_refused(tmp_path: Path) -> None:
    done = prickle(
        "serve", "--rate-limit", "-1", "--database-url", f"sqlite+aiosqlite:///{tmp_path}/p.db"
    )
    assert done.returncode == 2
    assert "must be at least 0" in done.stderr
