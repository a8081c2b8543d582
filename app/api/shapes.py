"""The nested shapes of the protocol's task object, as GraphQL types, field by field.

Each type is built from the protocol's JSON (`from_domain`); a field the JSON leaves out is
null. Every `oneOf` of task.schema.json is a union whose members all carry `kind: String!`.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import strawberry

from app.api.enums import (
    CapabilityKind,
    DecidedByPolicy,
    DeliverableType,
    EvidenceKind,
    GateBasis,
    Provenance,
    ProvenanceStatus,
    ResultStatus,
    RouteVia,
    StaleWhy,
    Verifier,
)
from app.domain.task import JSON

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T", bound="DataclassInstance")  # a strawberry.type is a dataclass


def flat(cls: type[T], data: JSON) -> T:
    """An instance of a flat type from a dict; fields the dict leaves out are null."""
    return cls(**{f.name: data.get(f.name) for f in dataclasses.fields(cls)})


@strawberry.type(description="A person: an owner, by handle.")
class PersonRef:
    kind: str
    handle: str
    erased: bool | None = None


@strawberry.type(description="An agent, by its `owner/name` id.")
class AgentRef:
    kind: str
    agent_id: str
    erased: bool | None = None


@strawberry.type(description="The server itself: the permission gate or the result policy.")
class SystemRef:
    kind: str


ActorRef = Annotated[PersonRef | AgentRef | SystemRef, strawberry.union("ActorRef")]
_REFS: dict[str, Any] = {"person": PersonRef, "agent": AgentRef, "system": SystemRef}


def actor_ref(data: JSON | None) -> Any:
    return None if data is None else flat(_REFS[data["kind"]], data)


@strawberry.type
class Packet:
    task: str
    deliverable_type: DeliverableType
    acceptance_criteria: list[str]
    context: str
    files: list[str]
    depends_on: list[str]


@strawberry.type
class Capability:
    kind: CapabilityKind
    name: str


@strawberry.type
class Route:
    via: RouteVia
    capability: Capability | None = None

    @classmethod
    def from_domain(cls, data: JSON) -> Route:
        capability = data.get("capability")
        return cls(via=data["via"], capability=flat(Capability, capability) if capability else None)


@strawberry.type
class Checkpoint:
    progress: str
    decisions: list[str]
    files_touched: list[str]
    next_steps: list[str]
    open_questions: list[str]
    needs_answer: bool | None = None


@strawberry.type
class CheckpointBy:
    agent: str
    provenance: str
    handed_back: bool


@strawberry.type
class Evidence:
    kind: EvidenceKind
    summary: str
    url: str | None = None
    content: str | None = None
    criteria: list[int] | None = None
    artifact: int | None = None
    observed_at: str | None = None
    verifier: Verifier | None = None


@strawberry.type
class Artifact:
    ref: str
    sha256: str | None = None
    commit_sha: str | None = None


@strawberry.type
class Verdict:
    criterion: int
    accepted: bool
    note: str | None = None


@strawberry.type
class Coverage:
    criterion: int
    evidence: list[int]


@strawberry.type
class StaleEvidence:
    evidence: int
    why: StaleWhy


@strawberry.type
class EvidenceReport:
    coverage: list[Coverage]
    general: list[int]
    uncovered: list[int]
    stale: list[StaleEvidence]
    complete: bool

    @classmethod
    def from_domain(cls, data: JSON) -> EvidenceReport:
        return cls(
            coverage=[flat(Coverage, c) for c in data["coverage"]],
            general=data["general"],
            uncovered=data["uncovered"],
            stale=[flat(StaleEvidence, s) for s in data["stale"]],
            complete=data["complete"],
        )


@strawberry.type(description="Caused by a message from the owner.")
class OwnerMessageCause:
    kind: str
    message_id: str
    author: str


@strawberry.type(description="Created by an agent while working on its parent task.")
class TaskCause:
    kind: str
    task_id: str
    basis: GateBasis
    rule_id: str | None
    approval_id: str | None


@strawberry.type(description="No recorded cause.")
class NoCause:
    kind: str


@strawberry.type(description="Created by an owner's schedule.")
class OwnerScheduleCause:
    kind: str
    schedule_id: str
    version: int
    task_id: str
    owner: str


LineageCause = Annotated[
    OwnerMessageCause | TaskCause | NoCause | OwnerScheduleCause, strawberry.union("LineageCause")
]
_CAUSES: dict[str, Any] = {
    "owner_message": OwnerMessageCause,
    "task": TaskCause,
    "none": NoCause,
    "owner_schedule": OwnerScheduleCause,
}


@strawberry.type(description="The packet of a task, by its sha256.")
class PacketContext:
    kind: str
    task_id: str
    sha256: str


@strawberry.type(description="A fact from the assignee's memory, by its sha256.")
class MemoryFactContext:
    kind: str
    key: str
    sha256: str


@strawberry.type(description="A saved checkpoint, by its sha256.")
class CheckpointContext:
    kind: str
    task_id: str
    checkpoint_id: str
    sha256: str


ContextItem = Annotated[
    PacketContext | MemoryFactContext | CheckpointContext, strawberry.union("ContextItem")
]
_CONTEXTS: dict[str, Any] = {
    "packet": PacketContext,
    "memory_fact": MemoryFactContext,
    "checkpoint": CheckpointContext,
}


@strawberry.type
class Lineage:
    cause: LineageCause
    context: list[ContextItem]
    recorded_at: str

    @classmethod
    def from_domain(cls, data: JSON) -> Lineage:
        cause = data["cause"]
        return cls(
            cause=flat(_CAUSES[cause["kind"]], cause),
            context=[flat(_CONTEXTS[c["kind"]], c) for c in data["context"]],
            recorded_at=data["recorded_at"],
        )


@strawberry.type
class Result:
    summary: str
    evidence: list[Evidence]
    provenance: Provenance
    returned_by: str
    returned_at: str
    submission_id: str | None = None
    revision: int | None = None
    artifacts: list[Artifact] | None = None
    status: ResultStatus | None = None
    verdicts: list[Verdict] | None = None
    verified_by: ActorRef | None = None
    decided_by: ActorRef | None = None
    decided_by_policy: DecidedByPolicy | None = None
    reason: str | None = None
    evidence_report: EvidenceReport | None = None
    lineage: Lineage | None = None
    provenance_status: ProvenanceStatus | None = None

    @classmethod
    def from_domain(cls, data: JSON) -> Result:
        built = flat(cls, data)
        built.evidence = [flat(Evidence, e) for e in data["evidence"]]
        built.artifacts = _each(Artifact, data.get("artifacts"))
        built.verdicts = _each(Verdict, data.get("verdicts"))
        built.verified_by = actor_ref(data.get("verified_by"))
        built.decided_by = actor_ref(data.get("decided_by"))
        report, lineage = data.get("evidence_report"), data.get("lineage")
        built.evidence_report = EvidenceReport.from_domain(report) if report else None
        built.lineage = Lineage.from_domain(lineage) if lineage else None
        return built


def _each(cls: type[T], items: list[JSON] | None) -> list[T] | None:
    return None if items is None else [flat(cls, i) for i in items]
