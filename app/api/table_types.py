"""The transition table as GraphQL types: its states and the moves it allows."""

from __future__ import annotations

import strawberry

from app.api.enums import TaskState
from app.domain.table import Move, table


@strawberry.type(description="A state of the transition table.")
class TaskStateInfo:
    name: TaskState
    description: str
    terminal: bool
    moves_to: list[TaskState]
    reached_from: list[TaskState]

    @classmethod
    def from_domain(cls, name: str) -> TaskStateInfo:
        t = table()
        state = t.states[name]
        return cls(
            name=name,
            description=state.description,
            terminal=state.terminal,
            moves_to=list(dict.fromkeys(m.to_state for m in t.moves_from(name))),
            reached_from=list(dict.fromkeys(m.from_state for m in t.moves_to(name))),
        )


@strawberry.type(description="A move the transition table allows.")
class AllowedMove:
    from_: TaskState = strawberry.field(name="from")
    to: TaskState
    verbs: list[str]
    actor: str
    note: str

    @classmethod
    def from_domain(cls, move: Move) -> AllowedMove:
        return cls(
            from_=move.from_state,
            to=move.to_state,
            verbs=list(move.verbs),
            actor=move.actor,
            note=move.note,
        )
