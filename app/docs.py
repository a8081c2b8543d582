"""docs/task-states.md, generated from the transition table (`prickle docs`)."""

from __future__ import annotations

from app.domain.table import Action, Move, Rule, Table, table


def task_states_markdown(t: Table | None = None) -> str:
    t = t or table()
    lines = [
        "# Task states",
        "",
        "Generated from `app/domain/protocol/transitions.json` by `prickle docs`; do not edit.",
        "",
        f"{len(t.states)} states, {len(t.moves)} allowed moves, {len(t.terminal)} end a task.",
        "Each move says who may make it, by verb (and, out of `waiting`, by `waiting_on`).",
        "",
    ]
    for state in t.states.values():
        lines += _state_section(t, state.name)
    lines += ["## Actions that are no move", ""]
    lines += [_action_line(a) for a in t.actions] or ["None."]
    lines += ["", "## waiting_on", "", "While a task is `waiting`, `waiting_on` says on whom:", ""]
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
        lines += [_move_line(m) for m in outgoing]
    else:
        lines += ["No move leaves it."]
    incoming = t.moves_to(name)
    if incoming:
        lines += ["", "Reached from: " + ", ".join(f"`{m.from_state}`" for m in incoming) + "."]
    return [*lines, ""]


def _move_line(move: Move) -> str:
    rules = "; ".join(_rule(r) for r in move.rules)
    return f"- `{move.to_state}`: {rules}. {move.note}"


def _action_line(action: Action) -> str:
    rule = action.rule
    text = f"- `{rule.verb}` by `{rule.actor}` in {_one_of(action.states)}"
    if rule.waiting_on is not None:
        text += f" (in `waiting`, only when waiting_on is {_one_of(rule.waiting_on)})"
    return f"{text}. {action.note}"


def _rule(rule: Rule) -> str:
    text = f"`{rule.verb}` by `{rule.actor}`"
    if rule.waiting_on is not None:
        text += f" when waiting_on is {_one_of(rule.waiting_on)}"
    return text


def _one_of(names: tuple[str, ...]) -> str:
    quoted = [f"`{n}`" for n in names]
    return " or ".join([", ".join(quoted[:-1]), quoted[-1]] if len(quoted) > 1 else quoted)


def write_task_states(path: str = "docs/task-states.md") -> None:
    with open(path, "w") as out:
        out.write(task_states_markdown())
