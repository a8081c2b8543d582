"""A whole new verb from a copy of the table and one declaration, with no other server change.

The copy adds `pause_task` to the working -> waiting move, by the assignee; the declaration
(a module of this test's, named by PRICKLE_VERBS) gives it a reason and the act of
stop_run: the task waits on `stopped`, to resume where it was. A real server started on
both serves the mutation, offers the verb to the assignee, makes the move and records it.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from factory import BOB, PACKET, TASK_VERBS, planned_task
from server import ROOT, Server, routed_task

from app.domain.table import TableError, load_json
from app.service.arguments import Args
from app.service.unit import Moves, Step
from app.service.verbs import registry

DECLARATION = """
from app.service import run
from app.service.arguments import Reason
from app.service.verbs import declare

pause_task = declare("pause_task", Reason, run.stop, description="Pause the run.")
"""

ACCEPT = "mutation($id: ID!) { accept_task(task_id: $id) { state } }"
START = "mutation($id: ID!) { start_task(task_id: $id) { state } }"
PAUSE = """mutation($id: ID!, $v: Int) {
  pause_task(task_id: $id, reason: "lunch", expected_version: $v) { state waiting_on version }
}"""
VERBS = "query($id: ID!) { task(id: $id) { version allowed_verbs } }"
EVENTS = """query($id: ID!) {
  task_events(task_id: $id) { edges { node { kind from_state to_state verb actor note } } }
}"""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    raw = load_json("transitions.json")
    (move,) = [m for m in raw["moves"] if (m["from"], m["to"]) == ("working", "waiting")]
    move["verbs"].append("pause_task")
    move["rules"].append({"verb": "pause_task", "actor": "assignee"})
    (tmp_path / "transitions.json").write_text(json.dumps(raw, indent=1))
    (tmp_path / "pause_verbs.py").write_text(DECLARATION)
    path = os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH")) if p)
    return {
        "PRICKLE_TRANSITIONS": str(tmp_path / "transitions.json"),
        "PRICKLE_VERBS": "pause_verbs",
        "PYTHONPATH": path,
    }


def test_a_declared_verb_the_table_does_not_name_stops_the_server(env: dict[str, str]) -> None:
    del env["PRICKLE_TRANSITIONS"]  # the packaged table: no pause_task
    done = prickle(env, "serve", "--port", "1")
    assert done.returncode == 2
    expected = "prickle: the transition table: declared verbs the table does not name: pause_task"
    assert expected in done.stderr


def test_a_declaration_module_that_does_not_import_stops_the_server(
    env: dict[str, str],
) -> None:
    env["PRICKLE_VERBS"] = "no_such_verbs"
    done = prickle(env, "serve", "--port", "1")
    assert done.returncode == 2
    expected = "prickle: PRICKLE_VERBS='no_such_verbs': the module does not import"
    assert expected in done.stderr
    assert "Traceback" not in done.stderr


@pytest.fixture
def server(start_server: Any, env: dict[str, str]) -> Server:
    served: Server = start_server(env=env)
    return served


def working_task(server: Server) -> tuple[str, dict[str, str]]:
    """alice/planner's task, started by bob/coder; the cast's tokens."""
    task, tokens = routed_task(server, PACKET)
    task_id = task["id"]
    for verb in (ACCEPT, START):
        server.data(verb, {"id": task_id}, tokens["bob/coder"])
    return task_id, tokens


def test_every_task_verb_of_the_table_is_declared() -> None:
    assert sorted(verb.name for verb in registry()) == sorted(TASK_VERBS)


def test_a_verb_with_several_targets_from_here_moves_only_where_its_act_chooses() -> None:
    task = planned_task("waiting", "stopped")
    step = Step(None, task, Moves(BOB), BOB, "resume_run", Args())  # no transaction: only the move
    with pytest.raises(
        TableError, match=r"resume_run from waiting goes to \['accepted', 'working'\]"
    ):
        step.move()
    assert step.move("working").to_state == "working"


def prickle(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    command = [str(ROOT / ".venv" / "bin" / "prickle"), *args]
    environment = {**os.environ, **env}
    return subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True)


def test_the_schema_has_the_declared_mutation(env: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "schema.graphql"
    assert prickle(env, "schema", "--output", str(out)).returncode == 0
    assert '  """Pause the run."""\n  pause_task(\n    task_id: ID!\n' in out.read_text()
    assert "    reason: String = null\n" in out.read_text().split("pause_task(", 1)[1]


def test_the_new_verb_is_offered_made_and_recorded(server: Server) -> None:
    task_id, tokens = working_task(server)
    offered = {
        who: server.data(VERBS, {"id": task_id}, token)["task"]["allowed_verbs"]
        for who, token in tokens.items()
    }
    assert "pause_task" in offered["bob/coder"] and "pause_task" in offered["bob"]
    assert "pause_task" not in offered["alice/planner"] + offered["alice"]
    error = server.error(PAUSE, {"id": task_id}, tokens["alice/planner"])
    assert error["extensions"]["code"] == "forbidden", error
    version = server.data(VERBS, {"id": task_id}, tokens["bob/coder"])["task"]["version"]
    paused = server.data(PAUSE, {"id": task_id, "v": version}, tokens["bob/coder"])["pause_task"]
    assert paused == {"state": "waiting", "waiting_on": "stopped", "version": version + 1}
    edges = server.data(EVENTS, {"id": task_id}, tokens["bob/coder"])["task_events"]["edges"]
    last = edges[-1]["node"]
    assert (last["from_state"], last["to_state"], last["note"]) == ("working", "waiting", "lunch")
    assert (last["kind"], last["verb"], last["actor"]) == ("moved", "pause_task", "bob/coder")
    resumed = server.data(
        "mutation($id: ID!) { resume_run(task_id: $id) { state } }", {"id": task_id}, tokens["bob"]
    )
    assert resumed["resume_run"]["state"] == "working"  # back where it paused
    again = server.error(PAUSE, {"id": task_id, "v": version}, tokens["bob/coder"])
    assert again["extensions"]["code"] == "conflict", again
