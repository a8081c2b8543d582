"""GraphQL input types: the service's own inputs (app.service.inputs), each narrowing only
the fields whose GraphQL type differs from the plain Python one: enums, nested inputs, IDs.

Enum members become the protocol's plain strings when an input is built, and limits
(lengths, counts, formats) are checked by the service against task.schema.json, so the API
and the protocol cannot disagree about them.
"""

from __future__ import annotations

import strawberry

from app.api.enums import (
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
from app.service import inputs
from app.service import schedules as schedule_inputs


@strawberry.input
class PacketInput(inputs.PacketInput):
    deliverable_type: DeliverableType


@strawberry.input
class CapabilityInput(inputs.CapabilityInput):
    kind: CapabilityKind


@strawberry.input(description="Hand a task to a named agent.")
class HandoffInput(inputs.HandoffInput):
    packet: PacketInput
    parent_task_id: strawberry.ID | None = None


@strawberry.input(description="Hand a task to whichever registered agent offers a capability.")
class RequestCapabilityInput(inputs.RequestCapabilityInput):
    capability: CapabilityInput
    packet: PacketInput
    parent_task_id: strawberry.ID | None = None


@strawberry.input(description="The fields of latest_checkpoint.")
class CheckpointInput(inputs.CheckpointInput):
    pass


@strawberry.input
class EvidenceInput(inputs.EvidenceInput):
    kind: EvidenceKind
    verifier: Verifier | None = None


@strawberry.input
class ArtifactInput(inputs.ArtifactInput):
    pass


@strawberry.input(description="A lineage context item, flat: the fields of its kind.")
class ContextItemInput(inputs.ContextItemInput):
    kind: ContextKind


@strawberry.input
class ResultInput(inputs.ResultInput):
    evidence: list[EvidenceInput]
    provenance: Provenance
    artifacts: list[ArtifactInput] | None = None
    context: list[ContextItemInput] | None = None


@strawberry.input
class VerdictInput(inputs.VerdictInput):
    pass


@strawberry.input(description="A gate rule: unset match fields match anything.")
class GateRuleInput(inputs.GateRuleInput):
    effect: GateEffect
    deliverable_type: DeliverableType | None = None
    capability_kind: CapabilityKind | None = None


@strawberry.input(description="A result rule: unset match fields match anything.")
class ResultRuleInput(inputs.ResultRuleInput):
    policy: ResultPolicy
    deliverable_type: DeliverableType | None = None


@strawberry.input(
    description="An owner schedule: exactly one of assignee or capability, and exactly one of "
    "cron (5 fields, read in timezone) or every_seconds; times are RFC 3339 with an offset."
)
class ScheduleInput(schedule_inputs.ScheduleInput):
    packet: PacketInput
    capability: CapabilityInput | None = None
    catch_up: CatchUp = CatchUp.skip


INPUTS: tuple[type, ...] = (
    PacketInput,
    CapabilityInput,
    HandoffInput,
    RequestCapabilityInput,
    CheckpointInput,
    EvidenceInput,
    ArtifactInput,
    ContextItemInput,
    ResultInput,
    VerdictInput,
    GateRuleInput,
    ResultRuleInput,
    ScheduleInput,
)
"""Every input type (the fast path's inputs build each by a plan of its own)."""
