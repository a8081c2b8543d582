"""`python -m tests.bench.a2a_outbound [--tasks 100] [--runs 5]`

Tasks handed to a remote A2A agent (tests/support/a2a_remote.py, a real `a2a-sdk` server on
127.0.0.1 that completes each task at once with one artifact) beside the same lifecycle
made by a local agent through GraphQL, on one `prickle serve` with a scratch database on the
backend PRICKLE_TEST_BACKEND names (SQLite by default; on PostgreSQL the server's CPU is the
process's only). Each run, side by side:

1. server CPU per task: `--tasks` tasks handed off together to the remote agent and
   completed by the dispatcher (send, follow, accept, start, return_result), ÷ the same
   tasks handed to a local agent that makes accept_task, start_task and return_result
   itself through the API (the floor: the moves alone);
2. latency, one task at a time (20 of them), from the handoff's event to the completion's
   (the events' own `at`), streaming and polling cards: p50 and max.

Medians over `--runs` runs.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from app.domain.clock import parse_rfc3339
from tests.bench.bench_server import cpu_seconds
from tests.support.a2a_remote import RemoteAgent
from tests.support.server import BACKEND, Server, module_database, start

ENV = {"PRICKLE_ALLOW_PRIVATE_AGENTS": "1", "PRICKLE_RATE_LIMIT": "0", "PRICKLE_A2A_POLL": "0.2"}
REGISTER = (
    "mutation($n: String!, $u: String!) "
    "{ register_remote_agent(name: $n, card_url: $u) { agent_id } }"
)
HANDOFF = "mutation($input: HandoffInput!) { handoff(input: $input) { id } }"
TASK = "query($id: ID!) { task(id: $id) { state events { to_state at } } }"
RESULT = {
    "summary": "done",
    "provenance": "agent_generated",
    "evidence": [{"kind": "note", "summary": "the report", "criteria": [0]}],
}


def hand_off(server: Server, agent: str) -> str:
    packet = {"task": "complete it", "deliverable_type": "doc", "acceptance_criteria": ["done"]}
    wanted = {"project": "bench", "assignee": agent, "packet": packet}
    return str(server.data(HANDOFF, {"input": wanted})["handoff"]["id"])


def completed(server: Server, task_id: str) -> dict[str, Any] | None:
    found = server.data(TASK, {"id": task_id})["task"]
    return found if found["state"] == "completed" else None


def wait_all(server: Server, ids: list[str]) -> None:
    pending = list(ids)
    while pending:
        pending = [t for t in pending if completed(server, t) is None]
        if pending:
            time.sleep(0.2)


def local_lifecycle(server: Server, token: str, task_id: str) -> None:
    for verb in ("accept_task", "start_task"):
        server.data(f'mutation {{ {verb}(task_id: "{task_id}") {{ state }} }}', token=token)
    query = (
        "mutation($id: ID!, $r: ResultInput!) { return_result(task_id: $id, result: $r) { state } }"
    )
    server.data(query, {"id": task_id, "r": RESULT}, token)


def cpu_per_task(server: Server, work: Any, tasks: int) -> float:
    before = cpu_seconds(server.process.pid)
    work()
    return (cpu_seconds(server.process.pid) - before) * 1000 / tasks


def latency(server: Server, agent: str, count: int = 20) -> list[float]:
    seconds = []
    for _ in range(count):
        task_id = hand_off(server, agent)
        while (found := completed(server, task_id)) is None:
            time.sleep(0.01)
        at = [parse_rfc3339(e["at"]) for e in found["events"]]
        seconds.append((at[-1] - at[0]).total_seconds() * 1000)
    return seconds


def one_run(server: Server, local_token: str, tasks: int) -> dict[str, float]:
    def remote() -> None:
        wait_all(server, [hand_off(server, "admin/remote") for _ in range(tasks)])

    def local() -> None:
        for task_id in [hand_off(server, "admin/local") for _ in range(tasks)]:
            local_lifecycle(server, local_token, task_id)

    remote_cpu = cpu_per_task(server, remote, tasks)
    local_cpu = cpu_per_task(server, local, tasks)
    streamed, polled = latency(server, "admin/remote"), latency(server, "admin/polled")
    return {
        "remote_cpu_ms": remote_cpu,
        "local_cpu_ms": local_cpu,
        "ratio": remote_cpu / local_cpu,
        "streamed_p50_ms": statistics.median(streamed),
        "streamed_max_ms": max(streamed),
        "polled_p50_ms": statistics.median(polled),
        "polled_max_ms": max(polled),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        for name in ("streamed", "polled"):
            (directory / name).mkdir()
        streamed = RemoteAgent(directory / "streamed")
        polled = RemoteAgent(directory / "polled", streaming=False)
        with streamed, polled, module_database(directory) as url:
            server = start(url, directory / "logs", env=ENV)
            try:
                server.data(REGISTER, {"n": "remote", "u": streamed.card_url})
                server.data(REGISTER, {"n": "polled", "u": polled.card_url})
                local_token = server.register(server.owner_token or "", "local")
                runs = [one_run(server, local_token, args.tasks) for _ in range(args.runs)]
            finally:
                server.stop()
    print(f"backend: {BACKEND}; {args.tasks} tasks a run, {args.runs} runs; medians:")
    for key in runs[0]:
        each = ", ".join(f"{r[key]:.3g}" for r in runs)
        print(f"  {key}: {statistics.median(r[key] for r in runs):.3g}  ({each})")


if __name__ == "__main__":
    main()
