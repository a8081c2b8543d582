"""The transition table: loaded from the project's own copy and validated on load."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from shared_protocol import KEPT, beside, shared_file

from app import settings
from app.domain.errors import PrickleError
from app.domain.table import TableError, load, load_json, parse, table

pytestmark = pytest.mark.once  # the same on either backend: not run on PostgreSQL

SHARED = "transitions.json"  # the shared protocol's (tests/support/shared_protocol.py finds it)


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


def without_rules(raw: dict) -> dict:
    """The protocol's own table: the project's copy without the rules it adds."""
    moves = [{k: v for k, v in m.items() if k != "rules"} for m in raw["moves"]]
    return {**{k: v for k, v in raw.items() if k != "actions"}, "moves": moves}


def test_the_project_copy_of_the_table_is_the_shared_protocol_with_rules_added() -> None:
    shared = json.loads(shared_file(SHARED).read_text())
    assert without_rules(load_json("transitions.json")) == shared


def test_the_committed_table_parses() -> None:
    assert parse(raw()).moves == table().moves


def test_parse_refuses_a_final_state_with_an_exit() -> None:
    broken = raw()
    broken["moves"].append(
        {
            "from": "completed",
            "to": "working",
            "verbs": ["reopen"],
            "actor": "requester_side",
            "rules": [{"verb": "reopen", "actor": "requester_side"}],
        }
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


# the rules: who may use each verb where a task stands


def move(raw: dict, from_state: str, to_state: str) -> dict:
    return next(m for m in raw["moves"] if (m["from"], m["to"]) == (from_state, to_state))


def test_a_table_error_is_a_prickle_error() -> None:
    assert issubclass(TableError, PrickleError)


def test_the_committed_rules_allow_callers_what_each_position_allows() -> None:
    # what each position allows, written out apart from the table on purpose: restating it
    # is this test's point (a rule edited by mistake fails here), so a new verb is added here
    run = {"wait_on", "stop_run", "return_result", "hand_back", "cancel_task", "save_checkpoint"}
    expected = {
        ("requested", None): {"cancel_task"},
        ("routed", None): {"accept_task", "hand_back", "deny_task", "cancel_task"},
        ("accepted", None): {"start_task", *run},
        ("working", None): run,
        ("waiting", "owner_approval"): {"approve_handoff", "deny_task", "cancel_task"},
        ("waiting", "human"): {"answer", "hand_back", "cancel_task", "save_checkpoint"},
        ("waiting", "agent"): {"answer", "hand_back", "cancel_task", "save_checkpoint"},
        ("waiting", "stopped"): {"resume_run", "hand_back", "cancel_task", "save_checkpoint"},
        ("verifying", None): {"cancel_task"},
        ("approval", None): {"decide_result", "cancel_task"},
        ("returned", None): {"reroute", "cancel_task"},
        ("completed", None): set(),
        ("rejected", None): set(),
        ("cancelled", None): set(),
    }
    t = table()
    assert {p: set(t.callers(*p)) for p in t.positions} == expected


def test_a_stopped_run_is_handed_back_by_the_assignees_owner_otherwise_by_the_assignee() -> None:
    t = table()
    assert t.actor("waiting", "stopped", "hand_back") == "assignee_owner"
    assert t.actor("waiting", "human", "hand_back") == "assignee"
    assert t.actor("working", None, "hand_back") == "assignee"
    assert t.actor("verifying", None, "return_result") == "system"
    assert t.actor("routed", None, "start_task") is None


def test_the_creating_verbs_are_the_servers_moves_out_of_requested() -> None:
    assert table().creating == {"handoff", "request_capability"}


def test_the_kept_copy_is_the_shared_protocol() -> None:
    found = beside(SHARED)
    if found is None:
        pytest.skip("the shared protocol is not beside the project: the kept copy stands in")
    assert (KEPT / SHARED).read_bytes() == found.read_bytes()


def test_the_shared_protocol_alone_has_no_rules_and_is_refused() -> None:
    shared = shared_file(SHARED)
    with pytest.raises(TableError, match="move requested->routed: handoff has no rule"):
        load(shared)


def test_parse_refuses_a_verb_of_a_move_without_a_rule() -> None:
    broken = raw()
    move(broken, "accepted", "waiting")["rules"].pop()
    with pytest.raises(TableError, match="move accepted->waiting: stop_run has no rule"):
        parse(broken)


def test_parse_refuses_a_rule_for_a_verb_the_move_does_not_have() -> None:
    broken = raw()
    move(broken, "routed", "accepted")["rules"].append({"verb": "start_task", "actor": "assignee"})
    with pytest.raises(TableError, match="routed->accepted: the rule for start_task names no verb"):
        parse(broken)


def test_parse_refuses_a_rule_whose_actor_is_not_in_actors() -> None:
    broken = raw()
    move(broken, "routed", "accepted")["rules"][0]["actor"] = "janitor"
    with pytest.raises(TableError, match="accept_task names unknown actor janitor"):
        parse(broken)


def test_parse_refuses_a_waiting_on_that_is_not_a_reason_to_wait() -> None:
    broken = raw()
    move(broken, "waiting", "routed")["rules"][0]["waiting_on"] = ["weather"]
    with pytest.raises(TableError, match="handoff names unknown waiting_on \\['weather'\\]"):
        parse(broken)


def test_parse_refuses_an_empty_waiting_on() -> None:
    broken = raw()
    move(broken, "waiting", "routed")["rules"][0]["waiting_on"] = []
    with pytest.raises(TableError, match="approve_handoff names unknown waiting_on \\[\\]"):
        parse(broken)


def test_parse_refuses_waiting_on_on_a_move_that_does_not_leave_waiting() -> None:
    broken = raw()
    move(broken, "working", "returned")["rules"][0]["waiting_on"] = ["human"]
    with pytest.raises(TableError, match="hand_back is narrowed by waiting_on outside waiting"):
        parse(broken)


def test_parse_refuses_a_display_actor_that_differs_from_the_rules() -> None:
    broken = raw()
    move(broken, "waiting", "returned")["actor"] = "assignee"
    with pytest.raises(
        TableError, match="waiting->returned: actor assignee differs from its rules' assignee"
    ):
        parse(broken)


def test_parse_refuses_two_actors_for_one_verb_where_a_task_stands() -> None:
    broken = raw()
    del move(broken, "waiting", "returned")["rules"][1]["waiting_on"]  # the assignee: always
    with pytest.raises(
        TableError,
        match="hand_back in waiting \\(waiting_on stopped\\) has two actors: assignee_owner, assi",
    ):
        parse(broken)


def test_parse_refuses_an_action_in_an_unknown_state() -> None:
    broken = raw()
    broken["actions"][0]["states"].append("limbo")
    with pytest.raises(TableError, match="save_checkpoint acts in unknown states \\['limbo'\\]"):
        parse(broken)


def test_parse_refuses_an_action_with_an_unknown_actor() -> None:
    broken = raw()
    broken["actions"][0]["actor"] = "janitor"
    with pytest.raises(TableError, match="action save_checkpoint: save_checkpoint names unknown"):
        parse(broken)


def test_parse_refuses_an_action_narrowed_by_waiting_on_that_never_acts_in_waiting() -> None:
    broken = raw()
    broken["actions"][0]["states"] = ["accepted", "working"]
    with pytest.raises(TableError, match="narrowed by waiting_on outside waiting"):
        parse(broken)


def test_parse_refuses_an_action_that_contradicts_a_move_of_the_same_verb() -> None:
    broken = raw()
    broken["actions"].append({"verb": "cancel_task", "actor": "assignee", "states": ["working"]})
    with pytest.raises(TableError, match="cancel_task in working has two actors"):
        parse(broken)


def test_parse_refuses_a_malformed_table_with_a_table_error() -> None:
    missing = raw()
    del missing["actions"][0]["states"]
    with pytest.raises(TableError, match="malformed table: KeyError: 'states'"):
        parse(missing)
    one_verb = raw()
    one_verb["moves"][0]["verbs"] = "handoff"
    with pytest.raises(TableError, match="the verbs of move requested->routed are not a list"):
        parse(one_verb)


def test_load_refuses_a_file_that_is_absent_or_not_json(tmp_path: Path) -> None:
    with pytest.raises(TableError, match=r"cannot read the table .*absent\.json"):
        load(tmp_path / "absent.json")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(TableError, match=r"cannot read the table .*broken\.json"):
        load(broken)


def test_the_environment_names_another_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    extended = raw()
    extended["moves"].append(
        {
            "from": "returned",
            "to": "accepted",
            "verbs": ["accept_task"],
            "actor": "assignee",
            "note": "The assignee takes it back on.",
            "rules": [{"verb": "accept_task", "actor": "assignee"}],
        }
    )
    extended["counts"]["moves"] = 36
    path = tmp_path / "transitions.json"
    path.write_text(json.dumps(extended))
    monkeypatch.setenv("PRICKLE_TRANSITIONS", str(path))
    settings.forget()  # read the settings again, with the variable
    settings.current()
    try:
        assert len(table().moves) == 36
        assert table().callers("returned", None)["accept_task"] == "assignee"
    finally:
        monkeypatch.delenv("PRICKLE_TRANSITIONS")
        settings.forget()
    assert len(table().moves) == 35
