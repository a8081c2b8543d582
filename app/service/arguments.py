"""The arguments of each task verb (besides its task and expected version): one dataclass
per shape, shared by the service and the API, whose fields are the verb's GraphQL arguments
in their order, their defaults the arguments' defaults.

`check()` refuses a bad argument before anything is read or written; what it works out on
the way (a result's checked submission) it keeps for the verb's act. A field whose GraphQL
type differs from its Python one names a type of app.service.inputs, or one of the choices
below; the API maps each to its GraphQL type (the API's verbs).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from app.domain import shapes
from app.domain.errors import InvalidInput
from app.domain.principals import check_agent_id
from app.domain.types import JSON
from app.service.inputs import (
    CapabilityInput,
    CheckpointInput,
    Input,
    ResultInput,
    Submission,
    VerdictInput,
    check_capability,
    check_verdicts,
    checkpoint_body,
)

WaitFor = Literal["human", "agent"]  # what wait_on waits for
Decision = Literal["accept", "request_changes", "reject"]  # the requester's owner's decision
REASON = "Why, in a sentence (recorded on the task's event)."
CHECKPOINT = (
    "Where the work stands: `progress` (required), `decisions`, `files_touched`, "
    "`next_steps`, `open_questions`, `needs_answer`."
)


def doc(text: str, *, label: str | None = None, placeholder: str | None = None) -> dict[str, Any]:
    """An argument's metadata: what it is (its GraphQL description, the MCP tool's), and for
    a form (the board's): its `label` (default: its name) and `placeholder`, which makes it a
    one-line text box (a textarea otherwise)."""
    return {"doc": text, "label": label, "placeholder": placeholder}


@dataclass
class Args(Input):
    """No arguments: the verb takes only its task."""

    def check(self) -> None:
        return None

    @property
    def note(self) -> str | None:
        """What the move's event notes, when the verb's act is only its move."""
        return None


@dataclass
class Reason(Args):
    reason: str | None = field(default=None, metadata=doc(REASON))

    def check(self) -> None:
        shapes.check("reason", self.reason)

    @property
    def note(self) -> str | None:
        return self.reason


@dataclass
class WaitOnArgs(Args):
    on: WaitFor = field(
        metadata=doc(
            "human: a person of the requester's side or the assignee's owner answers; agent: "
            "the agent named in `agent` answers (naming none: the task's own subtasks' ends).",
            label="Wait on",
        )
    )
    question: str | None = field(default=None, metadata=doc("What you need answered."))
    agent: str | None = field(
        default=None,
        metadata=doc(
            "With on=agent (and only then): the agent to wait on, owner/name.",
            label="Agent (when waiting on an agent)",
            placeholder="owner/agent",
        ),
    )

    def check(self) -> None:
        if self.on not in get_args(WaitFor):
            raise InvalidInput(f"on: {self.on!r} is not one of {', '.join(get_args(WaitFor))}")
        if self.agent is not None:
            if self.on != "agent":
                raise InvalidInput("agent: only wait_on(on: agent) names an agent")
            check_agent_id(self.agent, "agent")
        if self.question is not None:
            shapes.check("text", self.question, "question")


@dataclass
class AnswerArgs(Args):
    answer: str = field(metadata=doc("The answer to the task's question."))

    def check(self) -> None:
        shapes.check("text", self.answer, "answer")


@dataclass
class CheckpointArgs(Args):
    checkpoint: CheckpointInput = field(metadata=doc(CHECKPOINT))
    body: JSON = field(init=False, repr=False)

    def check(self) -> None:
        self.body = checkpoint_body(self.checkpoint)


@dataclass
class HandBackArgs(Reason):
    checkpoint: CheckpointInput | None = field(default=None, metadata=doc(CHECKPOINT))
    body: JSON | None = field(init=False, repr=False, default=None)

    def check(self) -> None:
        super().check()
        self.body = checkpoint_body(self.checkpoint) if self.checkpoint is not None else None


@dataclass
class ResultArgs(Args):
    result: ResultInput = field(
        metadata=doc(
            "The result: `summary`, `provenance` (usually agent_generated) and `evidence`, a "
            "list of items {kind, summary, criteria: [indexes of the acceptance criteria it "
            "shows are met], url or content}. Give a `submission_id` of your own to make a "
            "retry safe."
        )
    )
    submission: Submission = field(init=False, repr=False)

    def check(self) -> None:
        self.submission = self.result.checked()


@dataclass
class DecisionArgs(Args):
    decision: Decision = field(
        metadata=doc("accept (completed), request_changes (back to working) or reject (final).")
    )
    verdicts: list[VerdictInput] | None = field(
        default=None,
        metadata=doc(
            "A verdict per acceptance criterion: {criterion (its index), accepted, note}."
        ),
    )
    reason: str | None = field(default=None, metadata=doc(REASON))
    checked: list[JSON] = field(init=False, repr=False)

    def check(self) -> None:
        if self.decision not in get_args(Decision):
            choices = ", ".join(get_args(Decision))
            raise InvalidInput(f"decision: {self.decision!r} is not one of {choices}")
        self.checked = check_verdicts(self.verdicts)
        shapes.check("reason", self.reason)


@dataclass
class RerouteArgs(Args):
    assignee: str | None = field(
        default=None,
        metadata=doc(
            "The agent to send it to: owner/name.", label="New assignee", placeholder="owner/agent"
        ),
    )
    capability: CapabilityInput | None = field(
        default=None, metadata=doc("The capability wanted: {kind, name}.")
    )
    wanted: JSON | None = field(init=False, repr=False, default=None)

    def check(self) -> None:
        if (self.assignee is None) == (self.capability is None):
            raise InvalidInput("reroute takes exactly one of assignee or capability")
        if self.assignee is not None:
            check_agent_id(self.assignee, "assignee")
        else:
            self.wanted = check_capability(self.capability)
