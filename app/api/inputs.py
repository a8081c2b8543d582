"""GraphQL input types: the service's own inputs (app.service.inputs), each narrowing only
the fields whose GraphQL type differs from the plain Python one: enums, nested inputs, IDs.

Enum members become the protocol's plain strings when an input is built, and limits
(lengths, counts, formats) are checked by the service against task.schema.json, so the API
and the protocol cannot disagree about them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING
from typing import Any

import strawberry
from strawberry.relay import GlobalID
from strawberry.scalars import is_scalar
from strawberry.types import get_object_definition
from strawberry.types.arguments import InputContext
from strawberry.types.base import StrawberryList, StrawberryMaybe, StrawberryOptional
from strawberry.types.enum import StrawberryEnumDefinition, has_enum_definition
from strawberry.types.unset import UNSET

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


# Building an input from its GraphQL value. Strawberry converts it field by field, working
# out each field's type again on every request (about 55 µs for a handoff's input and 65
# for a result's); `from_input`, its hook for types that build their own value, does the
# same from a plan made once per class: a leaf (a scalar or an enum, or a list of them) is
# taken as graphql-core coerced it, as Strawberry takes it; anything else (a nested input)
# goes to Strawberry's own conversion.

_TAKEN, _LISTED, _CONVERTED = 0, 1, 2
_Plan = tuple[dict[str, None], tuple[tuple[str, str, int, Any], ...]]
_plans: dict[type, _Plan] = {}


def _build(cls: type, value: Mapping[str, Any], context: InputContext) -> Any:
    plan = _plans.get(cls)
    if plan is None:
        plan = _plans[cls] = _plan(cls, context)
    unset, fields = plan
    kwargs: dict[str, Any] = dict(unset)  # graphql-core has checked the required ones
    for graphql_name, python_name, how, type_ in fields:
        if graphql_name in value:
            item = value[graphql_name]
            if how == _CONVERTED:
                kwargs[python_name] = context.convert(item, type_, graphql_name)
            elif how == _TAKEN or item is None or item is UNSET:
                kwargs[python_name] = item
            else:
                kwargs[python_name] = list(item)  # a copy, as Strawberry makes
    return cls(**kwargs)


def _plan(cls: type, context: InputContext) -> _Plan:
    definition = get_object_definition(cls, strict=True)
    unset = {
        f.python_name: None
        for f in definition.fields
        if f.default_value is MISSING and f.default_factory is MISSING
    }
    fields = []
    for field in definition.fields:
        type_ = field.resolve_type(type_definition=definition)
        how = _CONVERTED
        if _leaf(type_, context, optional=True):
            how = _TAKEN
        elif isinstance(type_, StrawberryOptional) and not isinstance(type_, StrawberryMaybe):
            if isinstance(type_.of_type, StrawberryList) and _leaf(type_.of_type.of_type, context):
                how = _LISTED
        elif isinstance(type_, StrawberryList) and _leaf(type_.of_type, context):
            how = _LISTED
        name = context.config.name_converter.from_field(field)
        fields.append((name, field.python_name, how, type_))
    return unset, tuple(fields)


def _leaf(type_: Any, context: InputContext, optional: bool = True) -> bool:
    """A scalar or an enum (or, with `optional`, either or null): taken as it comes."""
    if optional and isinstance(type_, StrawberryOptional):
        if isinstance(type_, StrawberryMaybe):
            return False
        type_ = type_.of_type
    return (
        isinstance(type_, StrawberryEnumDefinition)
        or has_enum_definition(type_)
        or (is_scalar(type_, context.scalar_registry) and type_ is not GlobalID)
    )


for _input in (
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
):
    get_object_definition(_input, strict=True).from_input = _build
