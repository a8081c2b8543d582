"""The transition table: loaded from the project's own copy and validated on load."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from app.domain.table import TableError, load_json, parse, table

SHARED = Path("/work/shared/protocol/transitions.json")


def raw() -> dict:
    return copy.deepcopy(load_json("transitions.json"))


def test_table_has_eleven_states_thirty_five_moves_and_three_final_states() -> None:
    t = table()
    assert len(t.states) == 11
    assert len(t.moves) == 35
    assert t.terminal == {"completed", "rejected", "cancelled"}


def test_final_states_have_no_way_out() -> None:
    t = table()
    for name in t.terminal:
        assert t.moves_from(name) == []


def test_every_state_is_reachable_from_requested() -> None:
    t = table()
    seen, frontier = {"requested"}, ["requested"]
    while frontier:
        for move in t.moves_from(frontier.pop()):
            if move.to_state not in seen:
                seen.add(move.to_state)
                frontier.append(move.to_state)
    assert seen == set(t.states)


def test_a_final_state_is_reachable_from_every_state() -> None:
    t = table()
    for start in t.states:
        seen, frontier = {start}, [start]
        while frontier:
            for move in t.moves_from(frontier.pop()):
                if move.to_state not in seen:
                    seen.add(move.to_state)
                    frontier.append(move.to_state)
        assert seen & t.terminal, f"no end reachable from {start}"


def test_every_move_names_known_states_and_one_actor_per_verb_family() -> None:
    t = table()
    for move in t.moves:
        assert move.from_state in t.states and move.to_state in t.states
        assert move.verbs and move.actor


def test_waiting_on_lists_the_four_reasons_to_wait() -> None:
    assert set(table().waiting_on) == {"owner_approval", "human", "agent", "stopped"}


@pytest.mark.skipif(not SHARED.exists(), reason="the shared protocol folder is not present")
def test_the_project_copy_of_the_table_matches_the_shared_protocol() -> None:
    assert load_json("transitions.json") == json.loads(SHARED.read_text())


def test_the_committed_table_parses() -> None:
    assert parse(raw()).moves == table().moves


def test_parse_refuses_a_final_state_with_an_exit() -> None:
    broken = raw()
    broken["moves"].append(
        {"from": "completed", "to": "working", "verbs": ["reopen"], "actor": "requester_side"}
    )
    broken["counts"]["moves"] = 36
    with pytest.raises(TableError, match="final state completed has a way out"):
        parse(broken)


def test_parse_refuses_an_unreachable_state() -> None:
    broken = raw()
    broken["moves"] = [m for m in broken["moves"] if m["to"] != "approval"]
    del broken["counts"]
    with pytest.raises(TableError, match="unreachable from requested: \\['approval'\\]"):
        parse(broken)


def test_parse_refuses_a_dead_end_state() -> None:
    broken = raw()
    broken["moves"] = [m for m in broken["moves"] if m["from"] != "returned"]
    del broken["counts"]
    with pytest.raises(TableError, match="no final state is reachable from returned"):
        parse(broken)


def test_parse_refuses_a_table_whose_counts_differ_from_the_declared_ones() -> None:
    broken = raw()
    broken["counts"]["moves"] = 34
    with pytest.raises(TableError, match="differ from the declared"):
        parse(broken)


def test_parse_refuses_a_missing_move_against_the_declared_counts() -> None:
    broken = raw()
    broken["moves"].pop()
    with pytest.raises(TableError, match="counts"):
        parse(broken)


def test_parse_refuses_a_move_to_an_unknown_state() -> None:
    broken = raw()
    broken["moves"][0]["to"] = "limbo"
    with pytest.raises(TableError, match="unknown limbo"):
        parse(broken)


def test_parse_refuses_a_move_listed_twice() -> None:
    broken = raw()
    broken["moves"].append(dict(broken["moves"][0]))
    del broken["counts"]
    with pytest.raises(TableError, match="listed twice"):
        parse(broken)
