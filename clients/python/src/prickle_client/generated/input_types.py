from typing import Optional

from .base_model import BaseModel
from .enums import (
    CapabilityKind,
    CatchUp,
    ContextKind,
    DeliverableType,
    EvidenceKind,
    GateEffect,
    Provenance,
    ResultPolicy,
    Verifier,
)


class ArtifactInput(BaseModel):
    ref: str
    sha256: str | None = None
    commit_sha: str | None = None


class CapabilityInput(BaseModel):
    kind: CapabilityKind
    name: str


class CheckpointInput(BaseModel):
    """The fields of latest_checkpoint."""

    progress: str
    decisions: list[str] | None = None
    files_touched: list[str] | None = None
    next_steps: list[str] | None = None
    open_questions: list[str] | None = None
    needs_answer: bool | None = None


class ContextItemInput(BaseModel):
    """A lineage context item, flat: the fields of its kind."""

    kind: ContextKind
    sha256: str
    task_id: str | None = None
    key: str | None = None
    checkpoint_id: str | None = None


class EvidenceInput(BaseModel):
    kind: EvidenceKind
    summary: str
    url: str | None = None
    content: str | None = None
    criteria: list[int] | None = None
    artifact: int | None = None
    observed_at: str | None = None
    verifier: Verifier | None = None


class GateRuleInput(BaseModel):
    """A gate rule: unset match fields match anything."""

    effect: GateEffect
    priority: int = 0
    project: str | None = None
    requester_owner: str | None = None
    requester_agent: str | None = None
    deliverable_type: DeliverableType | None = None
    capability_kind: CapabilityKind | None = None


class HandoffInput(BaseModel):
    """Hand a task to a named agent."""

    project: str
    assignee: str
    packet: "PacketInput"
    parent_task_id: str | None = None
    display_title: str | None = None
    turn_budget: int | None = None
    origin_message_id: str | None = None
    idempotency_key: str | None = None


class PacketInput(BaseModel):
    task: str
    deliverable_type: DeliverableType
    acceptance_criteria: list[str]
    context: str | None = None
    files: list[str] | None = None
    depends_on: list[str] | None = None


class RequestCapabilityInput(BaseModel):
    """Hand a task to whichever registered agent offers a capability."""

    project: str
    capability: "CapabilityInput"
    packet: "PacketInput"
    parent_task_id: str | None = None
    display_title: str | None = None
    turn_budget: int | None = None
    origin_message_id: str | None = None
    idempotency_key: str | None = None


class ResultInput(BaseModel):
    summary: str
    evidence: list["EvidenceInput"]
    provenance: Provenance
    submission_id: str | None = None
    artifacts: list["ArtifactInput"] | None = None
    context: list["ContextItemInput"] | None = None


class ResultRuleInput(BaseModel):
    """A result rule: unset match fields match anything."""

    policy: ResultPolicy
    project: str | None = None
    assignee: str | None = None
    deliverable_type: DeliverableType | None = None


class ScheduleInput(BaseModel):
    """An owner schedule: exactly one of assignee or capability, and exactly one of cron (5 fields, read in timezone) or every_seconds; times are RFC 3339 with an offset."""

    project: str
    packet: "PacketInput"
    assignee: str | None = None
    capability: Optional["CapabilityInput"] = None
    display_title: str | None = None
    turn_budget: int | None = None
    cron: str | None = None
    every_seconds: int | None = None
    timezone: str = "UTC"
    starts_at: str | None = None
    ends_at: str | None = None
    catch_up: CatchUp = CatchUp.skip


class VerdictInput(BaseModel):
    criterion: int
    accepted: bool
    note: str | None = None


HandoffInput.model_rebuild()
RequestCapabilityInput.model_rebuild()
ResultInput.model_rebuild()
ScheduleInput.model_rebuild()
