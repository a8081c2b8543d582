"""The transition table as data: loaded once from the project's copy, validated on load."""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass
from functools import cache
from importlib import resources


class TableError(ValueError):
    """The transition table breaks one of its invariants."""


@dataclass(frozen=True)
class State:
    name: str
    terminal: bool
    description: str


@dataclass(frozen=True)
class Move:
    from_state: str
    to_state: str
    verbs: tuple[str, ...]
    actor: str
    note: str


@dataclass(frozen=True)
class Table:
    states: dict[str, State]
    moves: tuple[Move, ...]
    waiting_on: dict[str, str]
    actors: dict[str, str]

    @property
    def terminal(self) -> frozenset[str]:
        return frozenset(s.name for s in self.states.values() if s.terminal)

    def moves_from(self, state: str) -> list[Move]:
        return [m for m in self.moves if m.from_state == state]

    def moves_to(self, state: str) -> list[Move]:
        return [m for m in self.moves if m.to_state == state]

    def find(self, from_state: str, to_state: str, verb: str) -> Move | None:
        for move in self.moves:
            if (move.from_state, move.to_state) == (from_state, to_state) and verb in move.verbs:
                return move
        return None

    def targets(self, from_state: str, verb: str) -> list[str]:
        return [m.to_state for m in self.moves_from(from_state) if verb in m.verbs]

    @property
    def verbs(self) -> list[str]:
        seen: dict[str, None] = {}
        for move in self.moves:
            seen.update(dict.fromkeys(move.verbs))
        return list(seen)


def parse(raw: dict) -> Table:
    states = {
        s["name"]: State(s["name"], bool(s["terminal"]), s["description"]) for s in raw["states"]
    }
    moves = tuple(
        Move(m["from"], m["to"], tuple(m["verbs"]), m["actor"], m.get("note", ""))
        for m in raw["moves"]
    )
    table = Table(
        states=states,
        moves=moves,
        waiting_on={w["name"]: w["description"] for w in raw["waiting_on"]},
        actors=dict(raw["actors"]),
    )
    validate(table, raw.get("counts", {}))
    return table


def validate(table: Table, counts: dict[str, int]) -> None:
    """Check the invariants the whole server relies on; raise TableError on the first break."""
    terminal = table.terminal
    if counts:
        found = {"states": len(table.states), "moves": len(table.moves), "terminal": len(terminal)}
        if found != {k: counts[k] for k in found}:
            raise TableError(f"counts {found} differ from the declared {counts}")
    for move in table.moves:
        for end in (move.from_state, move.to_state):
            if end not in table.states:
                raise TableError(f"move {move.from_state}->{move.to_state} names unknown {end}")
    pairs = [(m.from_state, m.to_state) for m in table.moves]
    if len(set(pairs)) != len(pairs):
        raise TableError("a move is listed twice")
    for name in terminal:
        if table.moves_from(name):
            raise TableError(f"final state {name} has a way out")
    unreachable = set(table.states) - _reachable(table, "requested", forward=True)
    if unreachable:
        raise TableError(f"unreachable from requested: {sorted(unreachable)}")
    for name in table.states:
        if not (_reachable(table, name, forward=True) & terminal):
            raise TableError(f"no final state is reachable from {name}")


def _reachable(table: Table, start: str, forward: bool) -> set[str]:
    seen = {start}
    queue = deque([start])
    while queue:
        here = queue.popleft()
        nexts = table.moves_from(here) if forward else table.moves_to(here)
        for move in nexts:
            there = move.to_state if forward else move.from_state
            if there not in seen:
                seen.add(there)
                queue.append(there)
    return seen


def load_json(name: str) -> dict:
    return json.loads(resources.files("app.domain").joinpath("protocol", name).read_text())


@cache
def table() -> Table:
    return parse(load_json("transitions.json"))


@cache
def task_schema() -> dict:
    return load_json("task.schema.json")
