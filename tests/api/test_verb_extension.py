"""A whole new verb from three hand edits, with no other change: in a copy of the table, the
verb on its move and its rule (who may make it), and its declaration.

The copy adds `pause_task` to the working -> waiting move, by the assignee; the declaration
(a module of this test's, named by PRICKLE_VERBS) gives it a reason, the act of stop_run (the
task waits on `stopped`, to resume where it was), and how it is shown: its guide for agents,
whether it is destructive, its board label and place. A real server started on both serves
the mutation and the declaration (`task_verbs`, which the board's forms and prickle-mcp's
tools are made from), offers the verb to the assignee, makes the move and records it; the
board shows its form and makes it; the Python client generated from that server's schema
has its typed method. (prickle-mcp's tool of it: clients/python/tests/api/test_verb_extension.py.)
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from chromium import wait_until
from factory import BOB, PACKET, TASK_VERBS, planned_task
from server import ROOT, Server, module_database, routed_task, start

from app.domain.table import TableError, load_json
from app.service.arguments import Args
from app.service.unit import Moves, Step
from app.service.verbs import registry

# the declaration drives the surfaces above storage: the backend does not change them
pytestmark = pytest.mark.once

DECLARATION = """
from app.service import acts
from app.service.arguments import Reason
from app.service.verbs import declare

pause_task = declare(
    "pause_task",
    Reason,
    acts.stop,
    description="Pause the run.",
    guide="Pause your run; it waits on `stopped` until its owner resumes it.",
    destructive=True,
    label="Pause",
    rank=115,
)
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


def environment(directory: Path) -> dict[str, str]:
    """The three edits, made in `directory`, and the environment that serves them."""
    raw = load_json("transitions.json")
    (move,) = [m for m in raw["moves"] if (m["from"], m["to"]) == ("working", "waiting")]
    move["verbs"].append("pause_task")
    move["rules"].append({"verb": "pause_task", "actor": "assignee"})
    (directory / "transitions.json").write_text(json.dumps(raw, indent=1))
    (directory / "pause_verbs.py").write_text(DECLARATION)
    path = os.pathsep.join(p for p in (str(directory), os.environ.get("PYTHONPATH")) if p)
    return {
        "PRICKLE_TRANSITIONS": str(directory / "transitions.json"),
        "PRICKLE_VERBS": "pause_verbs",
        "PYTHONPATH": path,
    }


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return environment(tmp_path)


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


SERVED = """{ task_verbs { name description guide destructive ends_task label rank
  arguments { name type required description options }
  form { name label kind required options placeholder none } document } }"""


def served_verb(server: Server, name: str) -> dict[str, Any]:
    """The verb as the server declares it, read as the board and prickle-mcp read it: with
    no token (the declarations describe the API, as the schema does)."""
    answer = httpx.post(server.graphql_url, json={"query": SERVED}, timeout=30).json()
    (verb,) = [v for v in answer["data"]["task_verbs"] if v["name"] == name]
    return dict(verb)


def test_the_server_serves_the_new_verbs_declaration_and_its_document_moves(
    server: Server,
) -> None:
    pause = served_verb(server, "pause_task")
    assert (pause["label"], pause["rank"], pause["destructive"]) == ("Pause", 115, True)
    assert pause["guide"] == "Pause your run; it waits on `stopped` until its owner resumes it."
    assert (pause["description"], pause["ends_task"]) == ("Pause the run.", False)
    reason = "Why, in a sentence (recorded on the task's event)."  # Reason's, shared
    assert pause["arguments"] == [
        {"name": "reason", "type": "String", "required": False, "description": reason,
         "options": None}
    ]  # fmt: skip
    assert pause["form"] == [
        {"name": "reason", "label": "Reason", "kind": "textarea", "required": False,
         "options": [], "placeholder": None, "none": None}
    ]  # fmt: skip
    task_id, tokens = working_task(server)
    moved = server.data(pause["document"], {"task_id": task_id}, tokens["bob/coder"])
    assert moved["pause_task"]["state"] == "waiting"


CLIENT = ROOT / "clients" / "python"
CALL = """
import inspect, sys
from prickle_client import AsyncClient, Client
url, token, task_id = sys.argv[1:]
print(inspect.signature(AsyncClient.pause_task))
print(inspect.signature(Client.pause_task))
print(inspect.getdoc(Client.pause_task))
with Client(url, token) as bob:
    task = bob.pause_task(task_id, "lunch")
print(task.state.value, task.waiting_on.value)
"""


def test_the_python_client_generated_from_the_servers_schema_has_the_verbs_typed_method(
    server: Server, env: dict[str, str], tmp_path: Path
) -> None:
    schema, documents = tmp_path / "schema.graphql", tmp_path / "graphql"
    (documents / "mutations").mkdir(parents=True)
    written = prickle(
        env, "schema", "--output", str(schema), "--documents", str(documents / "mutations")
    )
    assert written.returncode == 0, written.stderr
    shutil.copy(ROOT / "graphql" / "fragments.graphql", documents)
    package = tmp_path / "client" / "prickle_client"
    shutil.copytree(
        CLIENT / "src" / "prickle_client", package, ignore=shutil.ignore_patterns("__pycache__")
    )
    sys.path.insert(0, str(CLIENT))
    try:
        generate = importlib.import_module("generate")
    finally:
        sys.path.remove(str(CLIENT))
    generate.generate_verbs(package, schema.read_text(), documents)

    task_id, tokens = working_task(server)
    command = [sys.executable, "-c", CALL, server.graphql_url, tokens["bob/coder"], task_id]
    path = {"PYTHONPATH": str(package.parent)}
    done = subprocess.run(command, env={**os.environ, **path}, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    signature = "(self, task_id: 'str', reason: 'str | None' = None, *, expected_version: "
    signature += "'int | None' = None) -> 'Task'"
    assert done.stdout.splitlines() == [signature, signature, "Pause the run.", "waiting stopped"]


# the browser's event loop runs from here to the module's end: no asynchronous fixture after it


@pytest.fixture(scope="module")
def board_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server of the new verb for the browser (whose event loop rules out `start_server`'s
    asynchronous database fixture)."""
    directory = tmp_path_factory.mktemp("board_verb")
    with module_database(directory) as url:
        served = start(url, directory / "logs", env=environment(directory))
        try:
            yield served
        finally:
            served.stop()


@pytest.mark.once
def test_the_board_shows_the_new_verbs_form_in_its_place_and_makes_the_move(
    board_server: Server,
    page: Any,
) -> None:
    server = board_server
    task_id, tokens = working_task(server)
    page.goto(f"{server.base_url}/board?project=work&task={task_id}")
    page.fill("#token", tokens["bob"])
    page.click("#token-form button[type=submit]")
    detail = page.locator(f"#detail [data-task='{task_id}']")
    detail.wait_for()
    shown = page.evaluate(
        "[...document.querySelectorAll('#detail form.verb')].map(f => f.dataset.verb)"
    )
    assert shown.index("hand_back") < shown.index("pause_task") < shown.index("stop_run")
    form = detail.locator("form[data-verb=pause_task]")
    form.get_by_label("Reason").fill("lunch")
    form.get_by_role("button", name="Pause").click()
    page.locator(f"#detail [data-task='{task_id}'][data-state=waiting]").wait_for()
    wait_until(page, "document.querySelector('#act-status').textContent.includes('done')")
    edges = server.data(EVENTS, {"id": task_id}, tokens["bob"])["task_events"]["edges"]
    last = edges[-1]["node"]
    assert (last["verb"], last["actor"], last["note"]) == ("pause_task", "bob", "lunch")
