"""The blocking `Client` where agent code runs: in a plain script and inside a running event
loop (Jupyter, an async framework); typed as itself in `with`; a lost connection a
`PrickleError` carrying its cause; and a stream closed, or abandoned, without a word."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import httpx
import pytest
from conftest import Cast, packet
from harness import free_port
from prickle_client import Client, ClientClosed, PrickleError, TransportFailed


def test_the_client_works_outside_an_event_loop(cast: Cast) -> None:
    with cast.client("alice/planner") as planner:
        assert planner.me().id == "alice/planner"


async def test_the_client_works_inside_a_running_event_loop(cast: Cast) -> None:
    with cast.client("alice/planner") as planner:  # this test's own loop is running
        task = planner.handoff("blocking", "bob/coder", packet())
        assert planner.me().id == "alice/planner"
        found = planner.task(task.id)
        assert found is not None and found.id == task.id
        assert [t.id for t in planner.tasks(project="blocking")] == [task.id]


def test_a_closed_client_says_so_and_closes_again_quietly(cast: Cast) -> None:
    planner = cast.client("alice/planner")
    planner.close()
    planner.close()
    with pytest.raises(ClientClosed):
        planner.me()


def test_a_server_that_never_answers_is_a_prickle_error_carrying_its_cause() -> None:
    with Client(f"http://127.0.0.1:{free_port()}/graphql", "prk_none") as lost:
        with pytest.raises(TransportFailed, match="no answer after 4 attempts") as failed:
            lost.me()  # a query: retried three times first
        with pytest.raises(TransportFailed, match="not retried") as not_retried:
            lost.accept_task("01H0ANY")
    assert isinstance(failed.value, PrickleError) and failed.value.code == "transport"
    assert isinstance(failed.value.cause, httpx.ConnectError)
    assert failed.value.__cause__ is failed.value.cause and failed.value.attempts == 4
    assert not_retried.value.attempts == 1


PROGRAM = """
import sys
from prickle_client import Client

client = Client(sys.argv[1], sys.argv[2])
stream = client.events(project=sys.argv[3], after="0")
print(next(stream).kind.value, flush=True)
if sys.argv[4] == "close":
    stream.close()
    stream.close()
    client.close()
    client.close()
# "abandon": neither is closed; the interpreter exits with them open
"""


@pytest.mark.parametrize("ending", ["close", "abandon"])
def test_a_stream_closed_or_abandoned_ends_without_a_word(
    cast: Cast, tmp_path: Path, ending: str
) -> None:
    with cast.client("alice/planner") as planner:
        planner.handoff("quiet", "bob/coder", packet())
    program = tmp_path / "follow.py"
    program.write_text(PROGRAM)
    args = [sys.executable, str(program), cast.url, cast.tokens["alice/planner"], "quiet", ending]
    done = subprocess.run(args, capture_output=True, text=True, timeout=60, env=os.environ)
    assert (done.returncode, done.stdout, done.stderr) == (0, "created\n", "")


DOC = Path(__file__).resolve().parents[3] / "docs" / "client.md"

WITH_CLIENT = """
from prickle_client import Client, Task


def accept(url: str, token: str, task_id: str) -> Task:
    with Client(url, token) as prickle:
        task = prickle.accept_task(task_id)
        for event in prickle.events(task_id=task.id, after="0"):
            print(event.kind, event.cursor)
            break
        return prickle.start_task(task.id, expected_version=task.version)
"""


def python_blocks(text: str) -> list[str]:
    import re

    return re.findall(r"```python\n(.*?)```", text, re.S)


def test_the_documented_programs_pass_mypy_strict(tmp_path: Path) -> None:
    programs = [*python_blocks(DOC.read_text()), textwrap.dedent(WITH_CLIENT)]
    assert len(programs) >= 2
    for index, program in enumerate(programs):
        (tmp_path / f"program_{index}.py").write_text(program)
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
