"""`total_count` counts up to `PRICKLE_COUNT_CAP`: past it, the cap, and `total_count_capped`
says so; below it, exact. The same on every connection (tasks, the inbox, task_events) and
on the compiled page (PostgreSQL's fast path, which a selection of `total_count` alone
takes)."""

from __future__ import annotations

from server import ROUTE_HANDOFF, routed_task

PACKET = {"task": "Count me", "deliverable_type": "code", "acceptance_criteria": ["counted"]}
COUNTS = "total_count total_count_capped total_count_cap"


def test_total_count_stops_at_the_cap_and_says_so(start_server) -> None:  # type: ignore[no-untyped-def]
    server = start_server(env={"PRICKLE_COUNT_CAP": "2"})
    task, tokens = routed_task(server, PACKET)
    handoff = {"project": "work", "assignee": "bob/coder", "packet": PACKET}
    for _ in range(2):
        server.data(ROUTE_HANDOFF, {"input": handoff}, tokens["alice/planner"])
    alice = tokens["alice"]

    def counts(field: str) -> dict[str, object]:
        found: dict[str, object] = server.data(f"{{ {field} {{ {COUNTS} }} }}", token=alice)
        return next(iter(found.values()))  # type: ignore[return-value]

    capped = {"total_count": 2, "total_count_capped": True, "total_count_cap": 2}
    assert counts("tasks(first: 1)") == capped
    assert counts("task_events(first: 1)") == capped
    assert counts("inbox") == {**capped, "total_count": 0, "total_count_capped": False}
    exact = {**capped, "total_count": 2, "total_count_capped": False}
    assert counts(f'task_events(task_id: "{task["id"]}")') == exact  # created, routed
    alone = "{ tasks(first: 1) { total_count edges { node { id } } } }"
    assert server.data(alone, token=alice)["tasks"]["total_count"] == 2
    one = f'{{ tasks(parent_task_id: "{task["id"]}") {{ {COUNTS} }} }}'
    assert server.data(one, token=alice)["tasks"] == {**exact, "total_count": 0}
