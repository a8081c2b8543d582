"""The task verbs, each declared once: its name, its arguments (app/service/arguments.py) and
its act (what it does beyond its move; none: only the move, to the table's one target).

A declaration is the verb's service entry (`await accept_task(store, actor, task_id)`), and
the API builds its GraphQL mutation from it (app/api/verbs.py), in the order declared here.
Where the verb goes is the table's (app/domain/protocol/transitions.json); an act chooses
only where the table gives several targets (`Step.move`).

`PRICKLE_VERBS=module` adds the verbs that module declares (with `declare`) after these: a
new verb of an existing shape is its moves in the table and its declaration.
"""

from __future__ import annotations

import importlib
import os
from functools import cache
from typing import Any, TypeVar

from app.domain.table import TableError, table
from app.service import creation, results, run
from app.service.arguments import (
    AnswerArgs,
    Args,
    CheckpointArgs,
    DecisionArgs,
    HandBackArgs,
    Reason,
    RerouteArgs,
    ResultArgs,
    WaitOnArgs,
)
from app.service.unit import Replay, Verb, VerbAct
from app.tuning import SettingError

ENV = "PRICKLE_VERBS"
A = TypeVar("A", bound=Args)

_declared: list[Verb[Any]] = []


def declare(
    name: str,
    args: type[A],
    act: VerbAct[A] | None = None,
    *,
    result_rules: bool = False,
    replay: Replay[A] | None = None,
    description: str | None = None,
) -> Verb[A]:
    """A task verb, registered (see `Verb`)."""
    verb = Verb(name, args, act, result_rules, replay, description)
    _declared.append(verb)
    return verb


approve_handoff = declare("approve_handoff", Reason, run.approve)
deny_task = declare("deny_task", Reason, run.deny)
accept_task = declare("accept_task", Args)
start_task = declare("start_task", Args)
save_checkpoint = declare(
    "save_checkpoint",
    CheckpointArgs,
    run.save_checkpoint,
    description="Not a move: replaces latest_checkpoint, spends one turn.",
)
wait_on = declare(
    "wait_on",
    WaitOnArgs,
    run.wait,
    description="Wait on a human or (with `agent`) on an agent.",
)
answer = declare("answer", AnswerArgs, run.answer)
stop_run = declare("stop_run", Reason, run.stop)
resume_run = declare("resume_run", Args, run.resume)
hand_back = declare("hand_back", HandBackArgs, run.hand_back)
return_result = declare(
    "return_result",
    ResultArgs,
    results.return_result,
    result_rules=True,
    replay=results.repeated_result,
    description="Return a result; the requester's owner's policy judges it at once.",
)
decide_result = declare("decide_result", DecisionArgs, results.decide_result)
cancel_task = declare("cancel_task", Reason, run.cancel)
reroute = declare(
    "reroute",
    RerouteArgs,
    creation.reroute,
    description="Send a returned task again: to `assignee` or by `capability`.",
)


@cache
def registry() -> tuple[Verb[Any], ...]:
    """Every declared verb, those of the module named by PRICKLE_VERBS last; each must be a
    verb of the table (TableError if not), and the module must import (SettingError)."""
    module = os.environ.get(ENV)
    if module:
        try:
            importlib.import_module(module)
        except ImportError as error:
            raise SettingError(f"{ENV}={module!r}: the module does not import ({error})") from None
    unknown = [v.name for v in _declared if v.name not in table().verbs]
    if unknown:
        raise TableError(f"declared verbs the table does not name: {', '.join(unknown)}")
    return tuple(_declared)
