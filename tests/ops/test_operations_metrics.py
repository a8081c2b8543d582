"""`GET /metrics` of a running `prickle serve`, read with prometheus_client's parser: after a
known set of operations every counter equals what was done, on one process and (PostgreSQL)
across two workers; an address outside `--metrics-from` is refused."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from live import BRIEF, Cast, opened
from metrics import scrape, value
from server import Server, postgres_only

TWO_HANDOFFS = """mutation($a: HandoffInput!, $b: HandoffInput!) {
  first: handoff(input: $a) { id } second: handoff(input: $b) { id } }"""
CAST = ("alice", "alice/coder", "alice/writer")
ME = 20


def requests(figures: dict[Any, float], kind: str, operation: str, code: str) -> float:
    return value(
        figures, "prickle_requests_total", operation_type=kind, operation=operation, code=code
    )


def mutations(figures: dict[Any, float], mutation: str, code: str) -> float:
    return value(figures, "prickle_mutations_total", mutation=mutation, code=code)


def handoff_input(cast: Cast) -> dict[str, Any]:
    from factory import PACKET

    return {"project": cast.project("m"), "assignee": cast.id("alice/writer"), "packet": PACKET}


def known_operations(server: Server) -> Cast:
    """The operations the counters are checked against (two register_agent come first)."""
    cast = Cast(server).add(*CAST)
    task = cast.handoff("alice/coder", "alice/writer", "m")
    cast.handoff("alice/coder", "alice/writer", "m")
    both = {"a": handoff_input(cast), "b": handoff_input(cast)}
    server.data(TWO_HANDOFFS, both, cast.token("alice/coder"))
    cast.move("alice/writer", "accept_task", task["id"])
    refused = server.run(
        "mutations/accept_task", {"task_id": task["id"]}, cast.token("alice/writer")
    )
    assert refused["errors"][0]["extensions"]["code"] == "invalid_state"
    for _ in range(ME):  # each on a connection of its own: with workers, they spread
        with httpx.Client(timeout=30) as client:
            body = {"query": "{ me { id } }"}
            headers = server.headers(cast.token("alice"))
            assert client.post(server.graphql_url, json=body, headers=headers).status_code == 200
    assert server.post("{ no_such_field }", token=cast.token("alice"))["errors"]
    assert server.post("{ me { id } }", token="prk_nobody")["errors"]
    return cast


def check_counters(figures: dict[Any, float], server: Server, cast: Cast) -> None:
    assert requests(figures, "mutation", "register_agent", "ok") == 2
    assert requests(figures, "mutation", "handoff", "ok") == 3  # the two-field one counts once
    assert mutations(figures, "handoff", "ok") == 4  # but it made two handoffs
    assert requests(figures, "mutation", "accept_task", "ok") == 1
    assert requests(figures, "mutation", "accept_task", "invalid_state") == 1
    assert mutations(figures, "accept_task", "invalid_state") == 1
    assert requests(figures, "query", "me", "ok") == ME
    assert requests(figures, "query", "me", "unauthenticated") == 1
    assert requests(figures, "query", "unknown", "invalid_input") == 1
    total = sum(v for (name, _), v in figures.items() if name == "prickle_requests_total")
    assert total == 2 + 3 + 2 + ME + 1 + 1
    durations = value(
        figures,
        "prickle_request_duration_seconds_count",
        operation_type="mutation",
        operation="handoff",
    )
    assert durations == 3
    query = "query($p: String) { task_events(project: $p, first: 500) { edges { node { seq } } } }"
    page = server.data(query, {"p": cast.project("m")}, cast.token("alice"))["task_events"]
    seqs = [edge["node"]["seq"] for edge in page["edges"]]
    assert value(figures, "prickle_events_written_total") == max(seqs) == len(seqs)


async def check_live_gauges(server: Server, cast: Cast) -> None:
    async with (
        opened(server, cast.token("alice")) as one,
        opened(server, cast.token("alice")) as two,
    ):
        for live in (one, two):
            for n in range(3):
                await live.subscribe({"project": cast.project("m")}, id=str(n), query=BRIEF)
        figures = await settled_figures(server, 2, 6)
        assert value(figures, "prickle_websocket_connections") == 2
        assert value(figures, "prickle_subscriptions") == 6
        assert value(figures, "prickle_hub_lag_events") == 0
    figures = await settled_figures(server, 0, 0)
    assert value(figures, "prickle_websocket_connections") == 0
    assert value(figures, "prickle_subscriptions") == 0


async def settled_figures(server: Server, connections: int, subscriptions: int) -> dict[Any, float]:
    def reached(figures: dict[Any, float]) -> bool:
        # another worker's hub lag reaches the scrape through its file, rewritten each second
        return (
            value(figures, "prickle_websocket_connections") == connections
            and value(figures, "prickle_subscriptions") == subscriptions
            and value(figures, "prickle_hub_lag_events") == 0
        )

    import asyncio
    import time

    deadline = time.monotonic() + 15
    while True:
        figures = await asyncio.to_thread(scrape, server)
        if reached(figures) or time.monotonic() > deadline:
            return figures
        await asyncio.sleep(0.1)


async def test_counters_equal_what_was_done(start_server: Any) -> None:
    server = start_server()
    cast = known_operations(server)
    check_counters(scrape(server), server, cast)
    await check_live_gauges(server, cast)


@postgres_only
async def test_one_scrape_sees_both_workers(start_server: Any, pg_database_url: str) -> None:
    server = start_server("--workers", "2", url=pg_database_url)
    cast = known_operations(server)
    check_counters(scrape(server), server, cast)
    await check_live_gauges(server, cast)


def test_an_address_outside_metrics_from_is_refused(start_server: Any) -> None:
    server = start_server("--metrics-from", "10.0.0.0/8, 192.168.0.0/16")
    response = server.client.get(f"{server.base_url}/metrics")
    assert response.status_code == 403
    assert "prickle_" not in response.text


@pytest.mark.once
def test_a_malformed_metrics_from_is_refused_at_start(tmp_path: Any) -> None:
    from server import prickle

    done = prickle(
        "serve",
        "--metrics-from",
        "not-a-range",
        "--database-url",
        f"sqlite+aiosqlite:///{tmp_path}/p.db",
    )
    assert done.returncode == 2
    assert "not-a-range" in done.stderr
