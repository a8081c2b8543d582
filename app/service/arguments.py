"""The arguments of each task verb (besides its task and expected version): one dataclass
per shape, shared by the service and the API, whose fields are the verb's GraphQL arguments
in their order, their defaults the arguments' defaults.

`check()` refuses a bad argument before anything is read or written; what it works out on
the way (a result's checked submission) it keeps for the verb's act. A field whose GraphQL
type differs from its Python one names a type of app.service.inputs, or one of the choices
below; the API maps each to its GraphQL type (app/api/verbs.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args

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
    reason: str | None = None

    def check(self) -> None:
        shapes.check("reason", self.reason)

    @property
    def note(self) -> str | None:
        return self.reason


@dataclass
class WaitOnArgs(Args):
    on: WaitFor
    question: str | None = None
    agent: str | None = None

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
    answer: str

    def check(self) -> None:
        shapes.check("text", self.answer, "answer")


@dataclass
class CheckpointArgs(Args):
    checkpoint: CheckpointInput
    body: JSON = field(init=False, repr=False)

    def check(self) -> None:
        self.body = checkpoint_body(self.checkpoint)


@dataclass
class HandBackArgs(Reason):
    checkpoint: CheckpointInput | None = None
    body: JSON | None = field(init=False, repr=False, default=None)

    def check(self) -> None:
        super().check()
        self.body = checkpoint_body(self.checkpoint) if self.checkpoint is not None else None


@dataclass
class ResultArgs(Args):
    result: ResultInput
    submission: Submission = field(init=False, repr=False)

    def check(self) -> None:
        self.submission = self.result.checked()


@dataclass
class DecisionArgs(Args):
    decision: Decision
    verdicts: list[VerdictInput] | None = None
    reason: str | None = None
    checked: list[JSON] = field(init=False, repr=False)

    def check(self) -> None:
        if self.decision not in get_args(Decision):
            choices = ", ".join(get_args(Decision))
            raise InvalidInput(f"decision: {self.decision!r} is not one of {choices}")
        self.checked = check_verdicts(self.verdicts)
        shapes.check("reason", self.reason)


@dataclass
class RerouteArgs(Args):
    assignee: str | None = None
    capability: CapabilityInput | None = None
    wanted: JSON | None = field(init=False, repr=False, default=None)

    def check(self) -> None:
        if (self.assignee is None) == (self.capability is None):
            raise InvalidInput("reroute takes exactly one of assignee or capability")
        if self.assignee is not None:
            check_agent_id(self.assignee, "assignee")
        else:
            self.wanted = check_capability(self.capability)
