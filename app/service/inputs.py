"""The input of each verb that takes structured input: one type, shared by the API and the
service. The API exposes each as its GraphQL input type (a subclass that only narrows the
fields whose GraphQL type differs: enums, nested inputs), so the two cannot drift.

Limits (lengths, counts, formats) are checked against task.schema.json by each input's
`check...()`, which the service calls before anything is written. Enum members become the
protocol's plain strings as an input is built; nested inputs may also be given as JSON.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from app.domain import shapes
from app.domain.clock import sha256_of
from app.domain.errors import InvalidInput
from app.domain.policy import POLICIES
from app.domain.principals import check_agent_id, check_handle, check_project
from app.domain.types import JSON

CAPABILITY_KINDS = shapes.choices("capability_kind")
GATE_EFFECTS = ("allow", "deny", "hold")


class Input:
    """What every input shares: enum members become the protocol's plain strings."""

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if isinstance(value, Enum):
                setattr(self, name, value.value)


def as_json(value: Any) -> Any:
    """An input (or JSON holding inputs) as plain JSON; unset (None) fields left out."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {k: as_json(v) for k, v in vars(value).items() if v is not None}
    if isinstance(value, list | tuple):
        return [as_json(v) for v in value]
    if isinstance(value, dict):
        return {k: as_json(v) for k, v in value.items()}
    if isinstance(value, Enum):
        return value.value
    return value


def _object(value: Any) -> JSON:
    """An item as JSON without its null fields; InvalidInput unless it is an object."""
    item = as_json(value)
    if not isinstance(item, dict):
        raise InvalidInput("each item must be an object")
    return {k: v for k, v in item.items() if v is not None}


# handoff and request_capability


@dataclass
class PacketInput(Input):
    task: str
    deliverable_type: str
    acceptance_criteria: list[str]
    context: str | None = None
    files: list[str] | None = None
    depends_on: list[str] | None = None


@dataclass
class CapabilityInput(Input):
    kind: str
    name: str


def check_capability(capability: CapabilityInput | JSON | None) -> JSON:
    """The capability as JSON, if it fits task.schema.json."""
    checked: JSON = shapes.check("capability", as_json(capability))
    return checked


@dataclass
class HandoffInput(Input):
    """Hand a task to a named agent."""

    project: str
    assignee: str
    packet: PacketInput | JSON
    parent_task_id: str | None = None
    display_title: str | None = None
    turn_budget: int | None = None
    origin_message_id: str | None = None
    idempotency_key: str | None = None

    def checked_packet(self) -> JSON:
        """Refuse invalid fields; the packet as the task keeps it (with its defaults)."""
        packet = _check_creation(self)
        check_agent_id(self.assignee or "", "assignee")
        return packet


@dataclass
class RequestCapabilityInput(Input):
    """Hand a task to whichever registered agent offers a capability."""

    project: str
    capability: CapabilityInput | JSON
    packet: PacketInput | JSON
    parent_task_id: str | None = None
    display_title: str | None = None
    turn_budget: int | None = None
    origin_message_id: str | None = None
    idempotency_key: str | None = None

    def checked_packet(self) -> JSON:
        """Refuse invalid fields; the packet as the task keeps it (with its defaults)."""
        packet = _check_creation(self)
        check_capability(self.capability)
        return packet


def _check_creation(inp: HandoffInput | RequestCapabilityInput) -> JSON:
    check_project(inp.project)
    packet = shapes.with_defaults("packet", as_json(inp.packet))
    shapes.check("packet", packet)
    for name in ("parent_task_id", "display_title", "turn_budget", "origin_message_id"):
        shapes.check(name, getattr(inp, name))
    if inp.idempotency_key is not None and not 1 <= len(inp.idempotency_key) <= 200:
        raise InvalidInput("idempotency_key: must be 1 to 200 characters")
    return packet


# checkpoints


@dataclass
class CheckpointInput(Input):
    """The fields of latest_checkpoint."""

    progress: str
    decisions: list[str] | None = None
    files_touched: list[str] | None = None
    next_steps: list[str] | None = None
    open_questions: list[str] | None = None
    needs_answer: bool | None = None


def checkpoint_body(checkpoint: CheckpointInput | JSON) -> JSON:
    """latest_checkpoint as the task keeps it (with its defaults), if it fits the schema."""
    given = as_json(checkpoint)
    if not isinstance(given, dict):
        raise InvalidInput("checkpoint: must be an object")
    body = shapes.with_defaults("checkpoint", {k: v for k, v in given.items() if v is not None})
    checked: JSON = shapes.check("checkpoint", body)
    return checked


# results


@dataclass
class EvidenceInput(Input):
    kind: str
    summary: str
    url: str | None = None
    content: str | None = None
    criteria: list[int] | None = None
    artifact: int | None = None
    observed_at: str | None = None
    verifier: str | None = None


@dataclass
class ArtifactInput(Input):
    ref: str
    sha256: str | None = None
    commit_sha: str | None = None


@dataclass
class ContextItemInput(Input):
    """A lineage context item, flat: the fields of its kind."""

    kind: str
    sha256: str
    task_id: str | None = None
    key: str | None = None
    checkpoint_id: str | None = None


@dataclass(frozen=True)
class Submission:
    """A returned result as checked: the JSON its body is made of."""

    summary: str
    evidence: list[JSON]
    provenance: str
    submission_id: str | None
    artifacts: list[JSON]
    context: list[JSON]

    def fingerprint(self) -> str:
        """Tells a repeated submission (same submission_id) from a different one."""
        # its fields as they are (JSON already): asdict's deep copy would change nothing
        return sha256_of({f.name: getattr(self, f.name) for f in dataclasses.fields(self)})


@dataclass
class ResultInput(Input):
    summary: str
    evidence: Sequence[EvidenceInput | JSON]
    provenance: str
    submission_id: str | None = None
    artifacts: Sequence[ArtifactInput | JSON] | None = None
    context: Sequence[ContextItemInput | JSON] | None = None

    def checked(self) -> Submission:
        shapes.check("summary", self.summary, "result.summary")
        evidence = [_object(e) for e in self.evidence]
        shapes.check("evidence", evidence, "result.evidence")
        shapes.check("provenance", self.provenance, "result.provenance")
        if self.submission_id is not None:
            shapes.check("submission_id", self.submission_id, "result.submission_id")
        artifacts = [_artifact(a) for a in self.artifacts or []]
        shapes.check("artifacts", artifacts, "result.artifacts")
        context = [_object(c) for c in self.context or []]
        shapes.check("context", context, "result.context")
        return Submission(
            self.summary, evidence, self.provenance, self.submission_id, artifacts, context
        )


def _artifact(value: ArtifactInput | JSON) -> Any:
    return shapes.with_item_defaults("artifacts", as_json(value))


@dataclass
class VerdictInput(Input):
    criterion: int
    accepted: bool
    note: str | None = None


def check_verdicts(verdicts: Sequence[VerdictInput | JSON] | None) -> list[JSON]:
    checked: list[JSON] = shapes.check("verdicts", [_object(v) for v in verdicts or []])
    return checked


# an owner's rules


@dataclass
class GateRuleInput(Input):
    """A gate rule: unset match fields match anything."""

    effect: str
    priority: int = 0
    project: str | None = None
    requester_owner: str | None = None
    requester_agent: str | None = None
    deliverable_type: str | None = None
    capability_kind: str | None = None

    def check(self) -> None:
        if self.effect not in GATE_EFFECTS:
            raise InvalidInput(f"effect: {self.effect!r} is not one of allow, deny, hold")
        _check_match(
            self.project, self.requester_owner, self.requester_agent, self.deliverable_type
        )
        if self.capability_kind not in (None, *CAPABILITY_KINDS):
            kind = self.capability_kind
            raise InvalidInput(f"capability_kind: {kind!r} is not a capability kind")
        if not -1_000_000 <= (self.priority or 0) <= 1_000_000:
            raise InvalidInput("priority: must be between -1000000 and 1000000")


@dataclass
class ResultRuleInput(Input):
    """A result rule: unset match fields match anything."""

    policy: str
    project: str | None = None
    assignee: str | None = None
    deliverable_type: str | None = None

    def check(self) -> None:
        if self.policy not in POLICIES:
            raise InvalidInput(f"policy: {self.policy!r} is not one of {', '.join(POLICIES)}")
        _check_match(self.project, None, None, self.deliverable_type, assignee=self.assignee)


def _check_match(
    project: str | None,
    requester_owner: str | None,
    requester_agent: str | None,
    deliverable_type: str | None,
    assignee: str | None = None,
) -> None:
    if project is not None:
        check_project(project)
    if requester_owner is not None:
        check_handle(requester_owner, "requester_owner")
    for name, agent_id in (("requester_agent", requester_agent), ("assignee", assignee)):
        if agent_id is not None:
            check_agent_id(agent_id, name)
    if deliverable_type is not None:
        shapes.check("deliverable_type", deliverable_type)
