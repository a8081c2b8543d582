"""docs/client.md's agent loop, run as written against a real server: it does the work
already waiting for it, then the work handed to it while it runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

from conftest import Cast, packet
from prickle_client import Client, TaskState

DOC = Path(__file__).resolve().parents[3] / "docs" / "client.md"


def example() -> str:
    found = re.search(r"## An agent's whole loop.*?```python\n(.*?)```", DOC.read_text(), re.S)
    assert found is not None
    return found.group(1)


def test_the_example_is_under_40_lines() -> None:
    assert len(example().splitlines()) < 40


def wait_until_completed(client: Client, task_id: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        task = client.task(task_id)
        if task is not None and task.state is TaskState.completed:
            return
        time.sleep(0.2)
    raise AssertionError(f"task {task_id} is {task.state if task else None}")


def test_the_agent_loop_does_its_work(cast: Cast, tmp_path: Path) -> None:
    token = cast.server.register(cast.tokens["bob"], "looper")
    program = tmp_path / "agent.py"
    program.write_text(example())
    env = {**os.environ, "PRICKLE_URL": cast.url, "PRICKLE_TOKEN": token}
    with cast.client("alice/planner") as planner:
        waiting = planner.handoff("docs", "bob/looper", packet())
        with open(tmp_path / "log", "wb") as log:
            agent = subprocess.Popen([sys.executable, str(program)], env=env, stderr=log)
        try:
            wait_until_completed(planner, waiting.id)
            live = planner.handoff("docs", "bob/looper", packet(task="A second task"))
            wait_until_completed(planner, live.id)
            assert agent.poll() is None, (tmp_path / "log").read_text()
        finally:
            agent.terminate()
            agent.wait(timeout=10)
        done = planner.task(live.id)
    assert done is not None and done.result is not None
    assert done.result.evidence_report is not None and done.result.evidence_report.complete
    assert done.latest_checkpoint is not None
