"""GraphQL enums, with the protocol's lowercase names as both name and value.

Enums of the task object are built from task.schema.json itself, so they cannot drift
from it; the rest come from the domain's own constants.
"""

from __future__ import annotations

from enum import Enum, EnumMeta
from typing import Any

import strawberry

from app.domain.events import KINDS
from app.domain.policy import POLICIES
from app.domain.schedules import CATCH_UP
from app.domain.table import task_schema


def lowercase_enum(name: str, values: list[str] | tuple[str, ...], description: str) -> Any:
    return strawberry.enum(_str_enum(name, values), description=description)


def _str_enum(name: str, values: list[str] | tuple[str, ...]) -> type[Enum]:
    """Enum's functional API, called through its metaclass: mypy types only literal names."""
    return EnumMeta.__call__(Enum, name, {v: v for v in values}, type=str)


def _schema_values(*path: str) -> list[str]:
    node: Any = task_schema()["properties"]
    for step in path:
        node = node[step]
        if "anyOf" in node:
            node = node["anyOf"][0]
        if "properties" in node:
            node = node["properties"]
        elif "items" in node:
            node = node["items"].get("properties", node["items"])
    return list(node["enum"])


_RESULT = ("result",)

TaskState = lowercase_enum("TaskState", _schema_values("state"), "Where a task stands.")
WaitingOn = lowercase_enum(
    "WaitingOn", _schema_values("waiting_on"), "On whom a waiting task waits."
)
DeliverableType = lowercase_enum(
    "DeliverableType", _schema_values("packet", "deliverable_type"), "What the task delivers."
)
EvidenceKind = lowercase_enum(
    "EvidenceKind", _schema_values(*_RESULT, "evidence", "kind"), "What an evidence item is."
)
Verifier = lowercase_enum(
    "Verifier", _schema_values(*_RESULT, "evidence", "verifier"), "Who verified an evidence item."
)
Provenance = lowercase_enum(
    "Provenance", _schema_values(*_RESULT, "provenance"), "Where a result's content came from."
)
ResultStatus = lowercase_enum(
    "ResultStatus", _schema_values(*_RESULT, "status"), "A result's status."
)
DecidedByPolicy = lowercase_enum(
    "DecidedByPolicy", _schema_values(*_RESULT, "decided_by_policy"), "The policy that decided."
)
StaleWhy = lowercase_enum(
    "StaleWhy",
    _schema_values(*_RESULT, "evidence_report", "stale", "why"),
    "Why evidence is stale.",
)
ProvenanceStatus = lowercase_enum(
    "ProvenanceStatus",
    _schema_values(*_RESULT, "provenance_status"),
    "attested when every declared context hash matches what the server holds.",
)
RouteVia = lowercase_enum("RouteVia", _schema_values("route", "via"), "How the task was sent.")
CapabilityKind = lowercase_enum(
    "CapabilityKind", _schema_values("route", "capability", "kind"), "A kind of capability."
)
GateBasis = lowercase_enum(
    "GateBasis", ("same_owner", "rule", "approval"), "How the permission gate let a task through."
)
ContextKind = lowercase_enum(
    "ContextKind", ("packet", "memory_fact", "checkpoint"), "A lineage context item's kind."
)
EventKind = lowercase_enum("EventKind", KINDS, "What an event records.")
GateEffect = lowercase_enum(
    "GateEffect", ("allow", "deny", "hold"), "What a matching gate rule does."
)
ResultPolicy = lowercase_enum("ResultPolicy", POLICIES, "How a result rule judges results.")
Decision = lowercase_enum(
    "Decision", ("accept", "request_changes", "reject"), "The requester's owner's decision."
)
InboxAsk = lowercase_enum(
    "InboxAsk",
    ("approve_handoff", "decide_result", "answer"),
    "What an item of the inbox asks of the caller, by the verb that does it.",
)
WaitOn = lowercase_enum("WaitOn", ("human", "agent"), "What wait_on waits for.")
CatchUp = lowercase_enum(
    "CatchUp", CATCH_UP, "Due times missed while no server ran: none run (skip) or the latest."
)


def plain(value: Any) -> Any:
    """Input values with enums turned back into the protocol's plain strings."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value
