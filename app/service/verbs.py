"""The task verbs, each declared once: its name, its arguments (its `Args`),
its act (what it does beyond its move; none: only the move, to the table's one target), and
how it is shown: its description, the agents' guide to it, whether it is destructive, and its
form on the board (label, rank, fields).

A declaration is the verb's service entry (`await accept_task(store, actor, task_id)`). The
API builds its GraphQL mutation from it (the API's verbs), in the order declared here, and
serves every declaration (`task_verbs`), which the board's forms and prickle-mcp's tools are
made from; the operation documents in graphql/mutations/ and the Python client's methods are
generated from them. Where the verb goes is the table's (`transitions.json`);
an act chooses only where the table gives several targets (`Step.move`).

`PRICKLE_VERBS=module` adds the verbs that module declares (with `declare`) after these: a
new verb of an existing shape is its moves in the table and its declaration.
"""

from __future__ import annotations

import dataclasses
import importlib
import types
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

from app.domain.table import TableError, table
from app.service import acts, creation, results
from app.service.arguments import (
    AnswerArgs,
    Args,
    CheckpointArgs,
    Decision,
    DecisionArgs,
    HandBackArgs,
    Reason,
    RerouteArgs,
    ResultArgs,
    WaitOnArgs,
)
from app.service.inputs import CheckpointInput, ResultInput, VerdictInput
from app.service.unit import Replay, Verb, VerbAct
from app.settings import SettingError, current

ENV = "PRICKLE_VERBS"
A = TypeVar("A", bound=Args)


@dataclass(frozen=True)
class FormField:
    """A field of a verb's form on the board. `name`: the argument it fills (`a.b`: field `b`
    of the input argument `a`); `kind`: text (one line), textarea, select (of `options`, `none`
    its empty first choice), verdicts (a verdict per acceptance criterion) or notes (one
    evidence note a line)."""

    name: str
    label: str
    kind: str = "textarea"
    required: bool = False
    options: tuple[str, ...] = ()
    placeholder: str | None = None
    none: str | None = None


@dataclass(frozen=True)
class Argument:
    """One argument of a verb as its declaration gives it: its Python type (the API's
    GraphQL type derives from it), whether it is required, its doc, and its form's hints."""

    name: str
    python: Any
    required: bool
    doc: str | None
    label: str | None
    placeholder: str | None


@dataclass(frozen=True)
class Declared(Verb[A]):
    """A declared verb (`declare`): a `Verb` and how it is shown. `guide`: what it is for, as
    an agent reads it (prickle-mcp's tool description); `destructive`: whether it may undo or
    end work (the MCP tool's hint); `label` and `rank`: its form's button on the board and its
    place among the forms (lower first); `form`: its form's fields, by default one per
    argument (`Declared.fields`)."""

    guide: str | None = None
    destructive: bool = False
    label: str = ""
    rank: int = 1000
    form: tuple[FormField, ...] | None = None

    def arguments(self) -> list[Argument]:
        """Its arguments, in their order (besides its task and expected version)."""
        hints = get_type_hints(self.args)
        return [
            Argument(
                f.name,
                hints[f.name],
                f.default is dataclasses.MISSING,
                f.metadata.get("doc"),
                f.metadata.get("label"),
                f.metadata.get("placeholder"),
            )
            for f in dataclasses.fields(self.args)
            if f.init
        ]

    def fields(self) -> tuple[FormField, ...]:
        """Its form's fields: `form`, else those of its arguments (`argument_fields`)."""
        if self.form is not None:
            return self.form
        return tuple(f for a in self.arguments() for f in argument_fields(a))


def reason_for(doing: str) -> FormField:
    """A form's reason box, saying what it is the reason for."""
    return FormField("reason", f"Reason for {doing} (optional)")


# the form of each input type a verb's argument may take
INPUT_FORMS: dict[Any, tuple[FormField, ...]] = {
    CheckpointInput: (FormField("checkpoint.progress", "Progress", required=True),),
    ResultInput: (
        FormField("result.summary", "Summary", required=True),
        FormField("result.evidence", "Evidence notes (one a line)", kind="notes"),
        FormField(
            "result.provenance",
            "Provenance",
            kind="select",
            options=(
                "owner_instruction",
                "owner_approved",
                "agent_generated",
                "from_approved_context",
            ),
        ),
    ),
    list[VerdictInput]: (FormField("verdicts", "Verdicts", kind="verdicts"),),
}


def argument_fields(argument: Argument) -> tuple[FormField, ...]:
    """An argument's fields on a form: a select of a choice's values, a text box of a
    string (one line where it has a placeholder), its input type's (`INPUT_FORMS`); none for
    another input type."""
    python = argument.python
    if get_origin(python) in (Union, types.UnionType):
        (python,) = [a for a in get_args(python) if a is not type(None)]
    label = argument.label or argument.name.replace("_", " ").capitalize()
    if get_origin(python) is Literal:
        options = tuple(str(v) for v in get_args(python))
        return (FormField(argument.name, label, "select", argument.required, options),)
    if python is str:
        kind = "text" if argument.placeholder else "textarea"
        return (FormField(argument.name, label, kind, argument.required, (), argument.placeholder),)
    return INPUT_FORMS.get(python, ())


_declared: list[Declared[Any]] = []


def declare(
    name: str,
    args: type[A],
    act: VerbAct[A] | None = None,
    *,
    result_rules: bool = False,
    replay: Replay[A] | None = None,
    description: str | None = None,
    guide: str | None = None,
    destructive: bool = False,
    label: str | None = None,
    rank: int = 1000,
    form: tuple[FormField, ...] | None = None,
) -> Declared[A]:
    """A task verb, registered (see `Verb` and `Declared`); its label by default its name."""
    shown = label or name.replace("_", " ").capitalize()
    verb = Declared(
        name,
        args,
        act,
        result_rules,
        replay,
        description,
        guide,
        destructive,
        shown,
        rank,
        form,
    )
    _declared.append(verb)
    return verb


approve_handoff = declare(
    "approve_handoff",
    Reason,
    acts.approve,
    description="The assignee's owner lets a held task through.",
    guide="Approve a task your gate held for you (state waiting, waiting_on owner_approval); "
    "the task is routed to its assignee.",
    label="Approve handoff",
    rank=10,
    form=(reason_for("approving"),),
)
deny_task = declare(
    "deny_task",
    Reason,
    acts.deny,
    description="The assignee's owner rejects a held or routed task.",
    guide="Deny a task handed to you (state routed) or held for your approval; it becomes "
    "`rejected` (final).",
    destructive=True,
    label="Deny",
    rank=130,
    form=(reason_for("denying"),),
)
accept_task = declare(
    "accept_task",
    Args,
    guide="Take on a task handed to you (state `routed`); it becomes `accepted`.",
    label="Accept",
    rank=40,
)
start_task = declare(
    "start_task",
    Args,
    guide="Start working on an accepted task; it becomes `working`.",
    label="Start",
    rank=50,
)
save_checkpoint = declare(
    "save_checkpoint",
    CheckpointArgs,
    acts.save_checkpoint,
    description="Not a move: replaces latest_checkpoint, spends one turn.",
    guide="Record where your work stands (replaces the task's latest checkpoint; spends one "
    "turn; the task stays where it is). Save one before a long step.",
    label="Save checkpoint",
    rank=80,
)
wait_on = declare(
    "wait_on",
    WaitOnArgs,
    acts.wait,
    description="Wait on a human or (with `agent`) on an agent.",
    guide="Pause your task until it is answered; it becomes `waiting`. on=human: a person of "
    "the requester's side or your owner answers. on=agent: the agent named in `agent` answers "
    "(the task's `question.answerers`). on=subtasks: wait for the task's own subtasks to end "
    "(only for a task with subtasks). Ask your `question`.",
    label="Wait",
    rank=90,
)
answer = declare(
    "answer",
    AnswerArgs,
    acts.answer,
    description="Resume a task waiting on a human or an agent.",
    guide="Answer the question of a task waiting on you (you are among its "
    "`question.answerers`); it resumes where it waited.",
    rank=30,
)
stop_run = declare(
    "stop_run",
    Reason,
    acts.stop,
    description="The assignee's owner stops the run; the task waits on `stopped`.",
    guide="Stop an agent's run on a task (its owner only); it waits on `stopped`.",
    destructive=True,
    rank=120,
    form=(reason_for("stopping"),),
)
resume_run = declare(
    "resume_run",
    Args,
    acts.resume,
    guide="Resume a stopped run (its owner only).",
    rank=60,
)
hand_back = declare(
    "hand_back",
    HandBackArgs,
    acts.hand_back,
    description="Give the task back to the requester side, optionally with a checkpoint.",
    guide="Give a task back to its requester (declined, or you cannot finish it); it becomes "
    "`returned`, and the requester may reroute it.",
    destructive=True,
    rank=110,
    form=(reason_for("handing back"),),
)
return_result = declare(
    "return_result",
    ResultArgs,
    results.return_result,
    result_rules=True,
    replay=results.repeated_result,
    description="Return a result; the requester's owner's policy judges it at once.",
    guide="Return your result with evidence. Each evidence item names the acceptance criteria "
    "it covers (their indexes). The requester's owner's result policy judges it at once. By "
    "default (no result rule) evidence of the right shape completes the task, even evidence "
    "that covers no criterion; an owner who sets the result rule require_complete_evidence "
    "has a result whose evidence leaves a criterion uncovered or stale sent back to "
    "`working`; require_approval sends it to a person (`approval`). Cover every criterion: "
    "see result.evidence_report.",
    rank=70,
)
decide_result = declare(
    "decide_result",
    DecisionArgs,
    results.decide_result,
    description="The requester's owner decides a result held for approval.",
    guide="Decide a result waiting for your approval (state `approval`): accept (completed), "
    "request_changes (back to working) or reject (final).",
    destructive=True,
    label="Decide",
    rank=20,
    form=(
        FormField(
            "decision",
            "Decision",
            kind="select",
            required=True,
            options=get_args(Decision),
            none="choose a decision",
        ),
        *INPUT_FORMS[list[VerdictInput]],
        reason_for("deciding"),
    ),
)
cancel_task = declare(
    "cancel_task",
    Reason,
    acts.cancel,
    guide="Call off a task you requested; it becomes `cancelled` (final).",
    destructive=True,
    rank=140,
    form=(reason_for("cancelling"),),
)
reroute = declare(
    "reroute",
    RerouteArgs,
    creation.reroute,
    description="Send a returned task again: to `assignee` or by `capability`.",
    guide="Send a returned task again: to `assignee` (owner/name) or by `capability`.",
    rank=100,
    form=(FormField("assignee", "New assignee", "text", True, (), "owner/agent"),),
)


@cache
def registry() -> tuple[Declared[Any], ...]:
    """Every declared verb, those of the module named by PRICKLE_VERBS last; each must be a
    verb of the table (TableError if not), and the module must import (SettingError)."""
    module = current().verbs
    if module:
        try:
            importlib.import_module(module)
        except ImportError as error:
            raise SettingError(f"{ENV}={module!r}: the module does not import ({error})") from None
    unknown = [v.name for v in _declared if v.name not in table().verbs]
    if unknown:
        raise TableError(f"declared verbs the table does not name: {', '.join(unknown)}")
    return tuple(_declared)
