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


def program_after(heading: str) -> str:
    found = re.search(rf"## {heading}.*?```python\n(.*?)```", DOC.read_text(), re.S)
    assert found is not None
    return found.group(1)


def test_the_token_program_gives_an_agent_tokens_that_work(cast: Cast, tmp_path: Path) -> None:
    program = tmp_path / "tokens.py"
    program.write_text(program_after("Tokens: who gets one"))
    env = {**os.environ, "PRICKLE_URL": cast.url, "PRICKLE_OWNER_TOKEN": cast.tokens["carol"]}
    done = subprocess.run(
        [sys.executable, str(program)], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    (agent, first), (_, spare) = (line.split() for line in done.stdout.splitlines())
    assert agent == "carol/coder"
    for token in (first, spare):
        with Client(cast.url, token) as coder:
            assert coder.me().id == "carol/coder"


def test_the_docs_say_what_the_default_result_policy_checks() -> None:
    api = " ".join((DOC.parent / "api.md").read_text().split())
    guide = " ".join(DOC.read_text().split())
    for text in (api, guide):
        assert "even when it covers no criterion" in text
        assert "require_complete_evidence" in text
    assert "checks that evidence and completes the task or sends it back" not in api
    assert "set_result_rule(input: {policy: require_complete_evidence" in api
    tokens = guide[guide.index("## Tokens") : guide.index("## An agent's whole loop")]
    for how in ("prickle serve", "prickle token create --owner", "register_agent", "create_token"):
        assert how in tokens, how
