"""One more move in a copy of the table, and the server follows it with no code change.

The copy lets the assignee take a returned task back on (`accept_task` from `returned` to
`accepted`); a real server started with PRICKLE_TRANSITIONS on it lists the move, offers the
verb to the assignee alone, makes the move for the assignee and refuses everyone else, and
`prickle docs` describes it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from factory import PACKET
from server import Server, routed_task

from app.docs import task_states_markdown
from app.domain.table import load, load_json, table

# the table drives the server's moves above storage: the backend does not change it
pytestmark = pytest.mark.once

NOTE = "The assignee takes a task it handed back on again."
EXTRA = {
    "from": "returned",
    "to": "accepted",
    "verbs": ["accept_task"],
    "actor": "assignee",
    "note": NOTE,
    "rules": [{"verb": "accept_task", "actor": "assignee"}],
}

HAND_BACK = "mutation($id: ID!) { hand_back(task_id: $id) { state } }"
ACCEPT = "mutation($id: ID!) { accept_task(task_id: $id) { state version } }"
VERBS = "query($id: ID!) { task(id: $id) { state allowed_verbs } }"
MOVES = "{ allowed_moves { from to verbs actor note } }"
EVENTS = """query($id: ID!) {
  task_events(task_id: $id) { edges { node { kind from_state to_state verb actor } } }
}"""


@pytest.fixture
def extended(tmp_path: Path) -> Path:
    raw = load_json("transitions.json")
    raw["moves"].append(EXTRA)
    raw["counts"]["moves"] += 1
    path = tmp_path / "transitions.json"
    path.write_text(json.dumps(raw, indent=1))
    return path


@pytest.fixture
def server(start_server: Any, extended: Path) -> Server:
    served: Server = start_server(env={"PRICKLE_TRANSITIONS": str(extended)})
    return served


def returned_task(server: Server) -> tuple[str, dict[str, str]]:
    """A task alice/planner handed to bob/coder, which bob/coder handed back; the cast's tokens."""
    task, tokens = routed_task(server, PACKET)
    assert task["state"] == "routed"
    back = server.data(HAND_BACK, {"id": task["id"]}, tokens["bob/coder"])["hand_back"]
    assert back["state"] == "returned"
    return task["id"], tokens


def test_the_packaged_table_has_no_such_move() -> None:
    assert table().find("returned", "accepted", "accept_task") is None
    assert "accept_task" not in table().callers("returned", None)


def test_allowed_moves_lists_the_added_move(server: Server) -> None:
    moves = server.data(MOVES)["allowed_moves"]
    assert len(moves) == 36
    listed = {"from": "returned", "to": "accepted", "verbs": ["accept_task"]}
    assert {**listed, "actor": "assignee", "note": NOTE} in moves


def test_the_added_move_is_offered_to_the_assignee_and_made_by_it_alone(server: Server) -> None:
    task_id, tokens = returned_task(server)
    offered = {
        who: server.data(VERBS, {"id": task_id}, token)["task"]["allowed_verbs"]
        for who, token in tokens.items()
    }
    assert offered == {
        "alice": ["cancel_task", "reroute"],
        "alice/planner": ["cancel_task", "reroute"],
        "bob": ["accept_task"],  # the owner acts for its agent
        "bob/coder": ["accept_task"],
    }
    for who in ("alice/planner", "alice"):
        error = server.error(ACCEPT, {"id": task_id}, tokens[who])
        assert error["extensions"]["code"] == "forbidden", error
    accepted = server.data(ACCEPT, {"id": task_id}, tokens["bob/coder"])["accept_task"]
    assert accepted["state"] == "accepted"
    edges = server.data(EVENTS, {"id": task_id}, tokens["bob/coder"])["task_events"]["edges"]
    last = edges[-1]["node"]
    assert (last["from_state"], last["to_state"]) == ("returned", "accepted")
    assert (last["kind"], last["verb"], last["actor"]) == ("moved", "accept_task", "bob/coder")


def test_prickle_docs_describes_the_added_move(extended: Path) -> None:
    text = task_states_markdown(load(extended))
    assert "11 states, 36 allowed moves, 3 end a task." in text
    returned = text.split("## `returned`", 1)[1].split("\n## ", 1)[0]
    assert f"- `accepted`: `accept_task` by `assignee`. {NOTE}\n" in returned
    accepted = text.split("## `accepted`", 1)[1].split("\n## ", 1)[0]
    assert "Reached from: `routed`, `waiting`, `returned`." in accepted
