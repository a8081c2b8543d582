"""The transition table as data: loaded once from the project's copy, validated on load.

The project's copy of the protocol's table (`transitions.json`, beside the domain) adds the
rules the server enforces to the protocol's moves:

- each move's `rules`: who may make it by which verb, e.g.
  `{"verb": "hand_back", "actor": "assignee", "waiting_on": ["human", "agent"]}`; on a move
  out of `waiting`, `waiting_on` narrows the rule to those reasons to wait (absent: any);
  a move the server makes by itself (the gate, the result policy) has the actor `system`;
- the top-level `actions`: verbs that are no move (the task stays where it is), with the
  states they act in, e.g. `save_checkpoint` by the assignee in accepted, working or waiting.

`PRICKLE_TRANSITIONS=/path/to/transitions.json` makes `table()` read that file instead of the
packaged copy (validated the same way): a table with one more move needs no code change.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources
from pathlib import Path
from typing import Any

from app.domain.errors import PrickleError

START = "requested"  # every task starts here, made by one of the creating verbs
WAITING = "waiting"  # the state that `waiting_on` qualifies
SYSTEM = "system"  # the server itself: no caller makes its moves
_served: str | None = None

Position = tuple[str, str | None]  # (state, waiting_on)


class TableError(PrickleError):
    """The transition table breaks one of its invariants."""


@dataclass(frozen=True)
class State:
    name: str
    terminal: bool
    description: str


@dataclass(frozen=True)
class Rule:
    """`actor` may use `verb`; in `waiting`, only while waiting on one of `waiting_on` (if set)."""

    verb: str
    actor: str
    waiting_on: tuple[str, ...] | None = None

    def applies(self, state: str, waiting_on: str | None) -> bool:
        return self.waiting_on is None or state != WAITING or waiting_on in self.waiting_on


@dataclass(frozen=True)
class Move:
    from_state: str
    to_state: str
    verbs: tuple[str, ...]
    actor: str
    note: str
    rules: tuple[Rule, ...]


@dataclass(frozen=True)
class Action:
    """A verb that is no move: its rule acts in `states` and leaves the task where it is."""

    rule: Rule
    states: tuple[str, ...]
    note: str


@dataclass(frozen=True)
class Table:
    states: dict[str, State]
    moves: tuple[Move, ...]
    waiting_on: dict[str, str]
    actors: dict[str, str]
    actions: tuple[Action, ...] = ()

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

    @cached_property
    def verbs(self) -> list[str]:
        """Every verb of the moves, then of the actions, in the order the table lists them."""
        seen: dict[str, None] = {}
        for move in self.moves:
            seen.update(dict.fromkeys(move.verbs))
        seen.update(dict.fromkeys(a.rule.verb for a in self.actions))
        return list(seen)

    @cached_property
    def creating(self) -> frozenset[str]:
        """The verbs that make a task: the server's moves out of the start state."""
        made = (r for m in self.moves_from(START) for r in m.rules)
        return frozenset(r.verb for r in made if r.actor == SYSTEM)

    @cached_property
    def positions(self) -> list[Position]:
        """Every place a task can stand: each state, and `waiting` once per waiting_on."""
        return [
            (name, w)
            for name in self.states
            for w in (self.waiting_on if name == WAITING else [None])
        ]

    def actor(self, state: str, waiting_on: str | None, verb: str) -> str | None:
        """Who may use `verb` on a task standing there (`system`: only the server); None: nobody."""
        return self._actors.get((state, waiting_on), {}).get(verb)

    def callers(self, state: str, waiting_on: str | None) -> dict[str, str]:
        """The verbs a caller (not the server) may use there, each with its actor."""
        return self._callers.get((state, waiting_on), {})

    @cached_property
    def _callers(self) -> dict[Position, dict[str, str]]:
        return {
            p: {verb: actor for verb, actor in here.items() if actor != SYSTEM}
            for p, here in self._actors.items()
        }

    @cached_property
    def _actors(self) -> dict[Position, dict[str, str]]:
        order = {verb: i for i, verb in enumerate(self.verbs)}
        found: dict[Position, dict[str, str]] = {}
        for (state, waiting_on), rule in self.rules_by_position():
            found.setdefault((state, waiting_on), {})[rule.verb] = rule.actor
        return {
            p: dict(sorted(here.items(), key=lambda item: order[item[0]]))
            for p, here in found.items()
        }

    def rules_by_position(self) -> Iterator[tuple[Position, Rule]]:
        """Each rule of a move or an action, at each position where it applies."""
        for state, waiting_on in self.positions:
            for move in self.moves_from(state):
                for rule in move.rules:
                    if rule.applies(state, waiting_on):
                        yield (state, waiting_on), rule
            for action in self.actions:
                if state in action.states and action.rule.applies(state, waiting_on):
                    yield (state, waiting_on), action.rule


def parse(raw: dict[str, Any]) -> Table:
    """The table in `raw`, validated; TableError if it is malformed or breaks an invariant."""
    try:
        return _parse(raw)
    except (KeyError, TypeError, AttributeError) as error:
        raise TableError(f"malformed table: {type(error).__name__}: {error}") from error


def _parse(raw: dict[str, Any]) -> Table:
    states = {
        s["name"]: State(s["name"], bool(s["terminal"]), s["description"]) for s in raw["states"]
    }
    moves = tuple(_move(m) for m in raw["moves"])
    actions = tuple(
        Action(_rule(a), tuple(a["states"]), a.get("note", "")) for a in raw.get("actions", [])
    )
    table = Table(
        states=states,
        moves=moves,
        waiting_on={w["name"]: w["description"] for w in raw["waiting_on"]},
        actors=dict(raw["actors"]),
        actions=actions,
    )
    validate(table, raw.get("counts", {}))
    return table


def _move(raw: dict[str, Any]) -> Move:
    rules = tuple(_rule(r) for r in raw.get("rules", []))
    if not isinstance(raw["verbs"], list):
        raise TypeError(f"the verbs of move {raw['from']}->{raw['to']} are not a list")
    verbs = tuple(raw["verbs"])
    return Move(raw["from"], raw["to"], verbs, raw["actor"], raw.get("note", ""), rules)


def _rule(raw: dict[str, Any]) -> Rule:
    waiting_on = raw.get("waiting_on")
    return Rule(raw["verb"], raw["actor"], None if waiting_on is None else tuple(waiting_on))


def validate(table: Table, counts: dict[str, int]) -> None:
    """Check the invariants the whole server relies on; raise TableError on the first break."""
    _validate_shape(table, counts)
    _validate_rules(table)


def _validate_shape(table: Table, counts: dict[str, int]) -> None:
    terminal = table.terminal
    if counts:
        found = {"states": len(table.states), "moves": len(table.moves), "terminal": len(terminal)}
        if found != {k: counts[k] for k in found}:
            raise TableError(f"counts {found} differ from the declared {counts}")
    for name in (START, WAITING):
        if name not in table.states:
            raise TableError(f"the table has no state {name}")
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
    unreachable = set(table.states) - _reachable(table, START)
    if unreachable:
        raise TableError(f"unreachable from {START}: {sorted(unreachable)}")
    for name in table.states:
        if not (_reachable(table, name) & terminal):
            raise TableError(f"no final state is reachable from {name}")


def _validate_rules(table: Table) -> None:
    for move in table.moves:
        where = f"move {move.from_state}->{move.to_state}"
        _check_rules(table, where, move.rules, move.from_state == WAITING)
        ruled = [r.verb for r in move.rules]
        for verb in move.verbs:
            if verb not in ruled:
                raise TableError(f"{where}: {verb} has no rule")
        for verb in ruled:
            if verb not in move.verbs:
                raise TableError(f"{where}: the rule for {verb} names no verb of the move")
        actors = {r.actor for r in move.rules}
        if set(move.actor.split("|")) != actors:
            raise TableError(
                f"{where}: actor {move.actor} differs from its rules' {'|'.join(sorted(actors))}"
            )
    for action in table.actions:
        where = f"action {action.rule.verb}"
        _check_rules(table, where, [action.rule], WAITING in action.states)
        unknown = [s for s in action.states if s not in table.states]
        if unknown or not action.states:
            raise TableError(f"{where} acts in unknown states {unknown}")
    _check_one_actor_per_position(table)


def _check_rules(table: Table, where: str, rules: Iterable[Rule], from_waiting: bool) -> None:
    for rule in rules:
        if rule.actor not in table.actors:
            raise TableError(f"{where}: {rule.verb} names unknown actor {rule.actor}")
        if rule.waiting_on is None:
            continue
        if not from_waiting:
            raise TableError(f"{where}: {rule.verb} is narrowed by waiting_on outside {WAITING}")
        unknown = [w for w in rule.waiting_on if w not in table.waiting_on]
        if unknown or not rule.waiting_on:
            raise TableError(f"{where}: {rule.verb} names unknown waiting_on {unknown}")


def _check_one_actor_per_position(table: Table) -> None:
    """A verb must name one actor wherever a task stands: the check comes before the target."""
    seen: dict[tuple[Position, str], str] = {}
    for position, rule in table.rules_by_position():
        actor = seen.setdefault((position, rule.verb), rule.actor)
        if actor != rule.actor:
            state, waiting_on = position
            where = f"{state} (waiting_on {waiting_on})" if waiting_on else state
            raise TableError(f"{rule.verb} in {where} has two actors: {actor}, {rule.actor}")


def _reachable(table: Table, start: str) -> set[str]:
    seen = {start}
    queue = deque([start])
    while queue:
        for move in table.moves_from(queue.popleft()):
            if move.to_state not in seen:
                seen.add(move.to_state)
                queue.append(move.to_state)
    return seen


def load_json(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(
        resources.files("app.domain").joinpath("protocol", name).read_text()
    )
    return loaded


def load(path: str | Path) -> Table:
    """The table in a file of the same shape as the packaged copy, validated."""
    try:
        raw = json.loads(Path(path).read_text())
    except (OSError, ValueError) as error:
        raise TableError(f"cannot read the table {path}: {error}") from error
    return parse(raw)


@cache
def table() -> Table:
    """The server's table: the file `serve_from` named (PRICKLE_TRANSITIONS), else the
    packaged copy."""
    return load(_served) if _served else parse(load_json("transitions.json"))


def serve_from(path: str | None) -> None:
    """Serve the table in `path` (None: the packaged copy); the settings say which."""
    global _served
    if path != _served:
        _served = path
        table.cache_clear()


@cache
def task_schema() -> dict[str, Any]:
    return load_json("task.schema.json")
