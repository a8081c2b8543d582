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
    sha256: Optional[str] = None
    commit_sha: Optional[str] = None


class CapabilityInput(BaseModel):
    kind: CapabilityKind
    name: str


class CheckpointInput(BaseModel):
    """The fields of latest_checkpoint."""

    progress: str
    decisions: Optional[list[str]] = None
    files_touched: Optional[list[str]] = None
    next_steps: Optional[list[str]] = None
    open_questions: Optional[list[str]] = None
    needs_answer: Optional[bool] = None


class ContextItemInput(BaseModel):
    """A lineage context item, flat: the fields of its kind."""

    kind: ContextKind
    sha256: str
    task_id: Optional[str] = None
    key: Optional[str] = None
    checkpoint_id: Optional[str] = None


class EvidenceInput(BaseModel):
    kind: EvidenceKind
    summary: str
    url: Optional[str] = None
    content: Optional[str] = None
    criteria: Optional[list[int]] = None
    artifact: Optional[int] = None
    observed_at: Optional[str] = None
    verifier: Optional[Verifier] = None


class GateRuleInput(BaseModel):
    """A gate rule: unset match fields match anything."""

    effect: GateEffect
    priority: int = 0
    project: Optional[str] = None
    requester_owner: Optional[str] = None
    requester_agent: Optional[str] = None
    deliverable_type: Optional[DeliverableType] = None
    capability_kind: Optional[CapabilityKind] = None


class HandoffInput(BaseModel):
    """Hand a task to a named agent."""

    project: str
    assignee: str
    packet: "PacketInput"
    parent_task_id: Optional[str] = None
    display_title: Optional[str] = None
    turn_budget: Optional[int] = None
    origin_message_id: Optional[str] = None
    idempotency_key: Optional[str] = None


class PacketInput(BaseModel):
    task: str
    deliverable_type: DeliverableType
    acceptance_criteria: list[str]
    context: Optional[str] = None
    files: Optional[list[str]] = None
    depends_on: Optional[list[str]] = None


class RequestCapabilityInput(BaseModel):
    """Hand a task to whichever registered agent offers a capability."""

    project: str
    capability: "CapabilityInput"
    packet: "PacketInput"
    parent_task_id: Optional[str] = None
    display_title: Optional[str] = None
    turn_budget: Optional[int] = None
    origin_message_id: Optional[str] = None
    idempotency_key: Optional[str] = None


class ResultInput(BaseModel):
    summary: str
    evidence: list["EvidenceInput"]
    provenance: Provenance
    submission_id: Optional[str] = None
    artifacts: Optional[list["ArtifactInput"]] = None
    context: Optional[list["ContextItemInput"]] = None


class ResultRuleInput(BaseModel):
    """A result rule: unset match fields match anything."""

    policy: ResultPolicy
    project: Optional[str] = None
    assignee: Optional[str] = None
    deliverable_type: Optional[DeliverableType] = None


class ScheduleInput(BaseModel):
    """An owner schedule: exactly one of assignee or capability, and exactly one of cron (5 fields, read in timezone) or every_seconds; times are RFC 3339 with an offset."""

    project: str
    packet: "PacketInput"
    assignee: Optional[str] = None
    capability: Optional["CapabilityInput"] = None
    display_title: Optional[str] = None
    turn_budget: Optional[int] = None
    cron: Optional[str] = None
    every_seconds: Optional[int] = None
    timezone: str = "UTC"
    starts_at: Optional[str] = None
    ends_at: Optional[str] = None
    catch_up: CatchUp = CatchUp.skip


class VerdictInput(BaseModel):
    criterion: int
    accepted: bool
    note: Optional[str] = None


class WebhookInput(BaseModel):
    """A webhook: where to POST, and the filters (each one given narrows the events to those that match it)."""

    url: str
    project: Optional[str] = None
    task_id: Optional[str] = None
    assignee: Optional[str] = None
    kinds: Optional[list[str]] = None
    "Event kinds: created, moved, checkpointed, result, answered."
    description: Optional[str] = None


HandoffInput.model_rebuild()
RequestCapabilityInput.model_rebuild()
ResultInput.model_rebuild()
ScheduleInput.model_rebuild()
