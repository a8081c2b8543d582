"""GraphQL input types, each turned into what the service takes (`to_service()`).

Limits (lengths, counts, formats) are checked by the service against task.schema.json,
so the API and the protocol cannot disagree about them.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import strawberry

from app import service
from app.api.enums import (
    CapabilityKind,
    ContextKind,
    DeliverableType,
    EvidenceKind,
    GateEffect,
    Provenance,
    ResultPolicy,
    Verifier,
    plain,
)
from app.service.results import ResultInput as ServiceResultInput


def fields_of(value: Any) -> dict[str, Any]:
    """An input object as a plain dict, unset (null) fields left out, enums as strings."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(value):
        item = getattr(value, f.name)
        if item is None:
            continue
        if isinstance(item, list):
            item = [fields_of(i) if dataclasses.is_dataclass(i) else i for i in item]
        elif dataclasses.is_dataclass(item):
            item = fields_of(item)
        out[f.name] = plain(item)
    return out


@strawberry.input
class PacketInput:
    task: str
    deliverable_type: DeliverableType
    acceptance_criteria: list[str]
    context: str | None = None
    files: list[str] | None = None
    depends_on: list[str] | None = None


@strawberry.input
class CapabilityInput:
    kind: CapabilityKind
    name: str


@strawberry.input(description="Hand a task to a named agent.")
class HandoffInput:
    project: str
    assignee: str
    packet: PacketInput
    parent_task_id: strawberry.ID | None = None
    display_title: str | None = None
    turn_budget: int | None = None
    origin_message_id: str | None = None
    idempotency_key: str | None = None

    def to_service(self) -> service.HandoffInput:
        return service.HandoffInput(**fields_of(self))


@strawberry.input(description="Hand a task to whichever registered agent offers a capability.")
class RequestCapabilityInput:
    project: str
    capability: CapabilityInput
    packet: PacketInput
    parent_task_id: strawberry.ID | None = None
    display_title: str | None = None
    turn_budget: int | None = None
    origin_message_id: str | None = None
    idempotency_key: str | None = None

    def to_service(self) -> service.HandoffInput:
        return service.HandoffInput(**fields_of(self))


@strawberry.input(description="The fields of latest_checkpoint.")
class CheckpointInput:
    progress: str
    decisions: list[str] | None = None
    files_touched: list[str] | None = None
    next_steps: list[str] | None = None
    open_questions: list[str] | None = None
    needs_answer: bool | None = None


@strawberry.input
class EvidenceInput:
    kind: EvidenceKind
    summary: str
    url: str | None = None
    content: str | None = None
    criteria: list[int] | None = None
    artifact: int | None = None
    observed_at: str | None = None
    verifier: Verifier | None = None


@strawberry.input
class ArtifactInput:
    ref: str
    sha256: str | None = None
    commit_sha: str | None = None


@strawberry.input(description="A lineage context item, flat: the fields of its kind.")
class ContextItemInput:
    kind: ContextKind
    sha256: str
    task_id: str | None = None
    key: str | None = None
    checkpoint_id: str | None = None


@strawberry.input
class ResultInput:
    summary: str
    evidence: list[EvidenceInput]
    provenance: Provenance
    submission_id: str | None = None
    artifacts: list[ArtifactInput] | None = None
    context: list[ContextItemInput] | None = None

    def to_service(self) -> ServiceResultInput:
        return ServiceResultInput(**fields_of(self))


@strawberry.input
class VerdictInput:
    criterion: int
    accepted: bool
    note: str | None = None


@strawberry.input(description="A gate rule: unset match fields match anything.")
class GateRuleInput:
    effect: GateEffect
    priority: int = 0
    project: str | None = None
    requester_owner: str | None = None
    requester_agent: str | None = None
    deliverable_type: DeliverableType | None = None
    capability_kind: CapabilityKind | None = None


@strawberry.input(description="A result rule: unset match fields match anything.")
class ResultRuleInput:
    policy: ResultPolicy
    project: str | None = None
    assignee: str | None = None
    deliverable_type: DeliverableType | None = None
