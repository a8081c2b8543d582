"""docs/task-states.md, generated from the transition table (`prickle docs`)."""

from __future__ import annotations

from app.domain.table import Table, table


def task_states_markdown(t: Table | None = None) -> str:
    t = t or table()
    lines = [
        "# Task states",
        "",
        "Generated from `app/domain/protocol/transitions.json` by `prickle docs`; do not edit.",
        "",
        f"{len(t.states)} states, {len(t.moves)} allowed moves, {len(t.terminal)} end a task.",
        "",
    ]
    for state in t.states.values():
        lines += _state_section(t, state.name)
    lines += ["## waiting_on", "", "While a task is `waiting`, `waiting_on` says on whom:", ""]
    lines += [f"- `{name}`: {text}" for name, text in t.waiting_on.items()]
    lines += ["", "## Actors", ""]
    lines += [f"- `{name}`: {text}" for name, text in t.actors.items()]
    return "\n".join(lines) + "\n"


def _state_section(t: Table, name: str) -> list[str]:
    state = t.states[name]
    title = f"## `{name}`" + (" (final)" if state.terminal else "")
    lines = [title, "", state.description, ""]
    outgoing = t.moves_from(name)
    if outgoing:
        lines += ["Moves to:", ""]
        lines += [
            f"- `{m.to_state}` by {_verbs(m.verbs)} ({m.actor}): {m.note}" for m in outgoing
        ]
    else:
        lines += ["No move leaves it."]
    incoming = t.moves_to(name)
    if incoming:
        lines += ["", "Reached from: " + ", ".join(f"`{m.from_state}`" for m in incoming) + "."]
    return lines + [""]


def _verbs(verbs: tuple[str, ...]) -> str:
    return ", ".join(f"`{v}`" for v in verbs)


def write_task_states(path: str = "docs/task-states.md") -> None:
    with open(path, "w") as out:
        out.write(task_states_markdown())
