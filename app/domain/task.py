"""The task: the protocol's task object plus the server's own bookkeeping."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from app.domain.principals import owner_of

JSON = dict[str, Any]

# Fields of the protocol's task object, in schema order; everything else on Task is ours.
PROTOCOL_FIELDS = (
    "id", "project", "state", "waiting_on", "requester", "assignee", "packet", "result",
    "latest_checkpoint", "latest_checkpoint_by", "parent_task_id", "created_at", "updated_at",
    "requested_by", "origin_message_id", "route", "display_title", "turn_budget",
)  # fmt: skip


@dataclass
class Gate:
    """How the permission gate let the task through (or held it)."""

    basis: str | None = None  # same_owner | rule | approval
    rule_id: str | None = None
    approval_id: str | None = None


@dataclass
class Task:
    id: str
    project: str
    state: str
    assignee: str
    packet: JSON
    requested_by: JSON
    route: JSON
    created_at: str
    updated_at: str
    requester: str | None = None
    waiting_on: str | None = None
    result: JSON | None = None
    latest_checkpoint: JSON | None = None
    latest_checkpoint_by: JSON | None = None
    parent_task_id: str | None = None
    origin_message_id: str | None = None
    display_title: str | None = None
    turn_budget: int | None = None
    version: int = 0
    resume_to: str | None = None  # the state the task entered `waiting` from
    wait_agent: str | None = None  # the agent named in wait_on(on: agent)
    question: str | None = None
    gate: Gate = field(default_factory=Gate)
    idempotency_key: str | None = None

    @property
    def assignee_owner(self) -> str:
        return owner_of(self.assignee)

    @property
    def requested_by_id(self) -> str:
        return self.requested_by.get("handle") or self.requested_by["agent_id"]

    @property
    def requester_owner(self) -> str:
        """The requester agent's owner; where there is no requester agent, requested_by."""
        return owner_of(self.requester) if self.requester else self.requested_by_id

    def to_protocol(self) -> JSON:
        """The task object exactly as task.schema.json describes it."""
        return {name: getattr(self, name) for name in PROTOCOL_FIELDS}

    def copy(self) -> Task:
        return dataclasses.replace(self, gate=dataclasses.replace(self.gate))
