"""The task: the protocol's task object plus the server's own bookkeeping."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from app.domain.errors import InvalidState
from app.domain.events import Event
from app.domain.principals import owner_of
from app.domain.table import table
from app.domain.types import JSON

__all__ = ["JSON", "PROTOCOL_FIELDS", "Gate", "Task"]

# Fields of the protocol's task object, in schema order; everything else on Task is ours.
PROTOCOL_FIELDS = (
    "id",
    "project",
    "state",
    "waiting_on",
    "requester",
    "assignee",
    "packet",
    "result",
    "latest_checkpoint",
    "latest_checkpoint_by",
    "parent_task_id",
    "created_at",
    "updated_at",
    "requested_by",
    "origin_message_id",
    "route",
    "display_title",
    "turn_budget",
)


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
    schedule_id: str | None = None  # the owner schedule whose run created the task
    schedule_version: int | None = None  # that schedule's version at the run
    # when the task last moved (a checkpoint is no move): since then it stands where it is,
    # so a task that waits on someone has waited since then (the inbox's order)
    moved_at: str | None = None

    @property
    def assignee_owner(self) -> str:
        return owner_of(self.assignee)

    @property
    def requested_by_id(self) -> str:
        by: str = self.requested_by.get("handle") or self.requested_by["agent_id"]
        return by

    @property
    def requester_owner(self) -> str:
        """The requester agent's owner; where there is no requester agent, requested_by."""
        return owner_of(self.requester) if self.requester else self.requested_by_id

    def apply(
        self,
        verb: str,
        to_state: str,
        *,
        actor: str | None,
        at: str,
        waiting_on: str | None = None,
        kind: str = "moved",
        note: str | None = None,
    ) -> Event:
        """Make the table's move from the task's state to `to_state` by `verb` (InvalidState if
        there is none): leaving `waiting` forgets what the task waited on."""
        if table().find(self.state, to_state, verb) is None:
            raise InvalidState(verb, self.state, self.waiting_on)
        from_state = self.state
        self.state = to_state
        self.moved_at = at
        self.waiting_on = waiting_on if to_state == "waiting" else None
        if to_state != "waiting":
            self.resume_to = self.wait_agent = self.question = None
        return self.record(kind, verb, from_state, actor, at, note)

    def record(
        self,
        kind: str,
        verb: str,
        from_state: str | None,
        actor: str | None,
        at: str,
        note: str | None = None,
    ) -> Event:
        """A new version of the task and the event that says so (a move's or a checkpoint's);
        `actor` is a handle or agent id, None for the server."""
        self.updated_at = at
        self.version += 1
        return Event(
            kind=kind,
            task_id=self.id,
            project=self.project,
            from_state=from_state,
            to_state=self.state,
            waiting_on=self.waiting_on,
            verb=verb,
            actor=actor,
            at=at,
            version=self.version,
            task=self.to_protocol(),
            note=note,
            wait_agent=self.wait_agent,
        )

    def snapshot(self, seq: int) -> Event:
        """The task as it is now, as one `snapshot` event at log position `seq` (the last seq
        committed when it was read): no move, no actor."""
        return Event(
            kind="snapshot",
            task_id=self.id,
            project=self.project,
            from_state=None,
            to_state=self.state,
            waiting_on=self.waiting_on,
            verb=None,
            actor=None,
            at=self.updated_at,
            version=self.version,
            task=self.to_protocol(),
            seq=seq,
            wait_agent=self.wait_agent,
        )

    def to_protocol(self) -> JSON:
        """The task object exactly as task.schema.json describes it."""
        return {name: getattr(self, name) for name in PROTOCOL_FIELDS}

    def copy(self) -> Task:
        return dataclasses.replace(self, gate=dataclasses.replace(self.gate))
