"""SQLModel tables. Nested protocol objects are stored as JSON; timestamps as RFC 3339 text."""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, BigInteger, Column, Index, Integer, Table, UniqueConstraint, false
from sqlalchemy.dialects.postgresql import JSONB
from sqlmodel import Field, SQLModel

Json = JSON().with_variant(JSONB(), "postgresql")


def json_column(nullable: bool = True) -> Any:
    return Field(default=None, sa_column=Column(Json, nullable=nullable))


def table_of(row: type[SQLModel]) -> Table:
    """The Table SQLModel made for a `table=True` class (its types do not declare __table__)."""
    table = vars(row)["__table__"]
    assert isinstance(table, Table)
    return table


_WAITED = ("moved_at", "id")  # the inbox's order: oldest waiting first


class TaskRow(SQLModel, table=True):
    """A column per field of the domain Task, by its name (the task-field tests keep them
    together), its gate in three, and columns derived for the read side's filters."""

    __tablename__ = "tasks"
    __table_args__ = (
        UniqueConstraint("created_by", "idempotency_key", name="uq_tasks_idempotency"),
        # each filter of a tasks page, read in task id order (`task_page`)
        Index("ix_tasks_project_id", "project", "id"),
        Index("ix_tasks_project_state", "project", "state", "id"),
        Index("ix_tasks_state", "state", "id"),
        Index("ix_tasks_assignee", "assignee", "id"),
        Index("ix_tasks_requester", "requester", "id"),
        # also the inbox's branches, oldest waiting first (`Inbox`)
        Index("ix_tasks_assignee_owner", "assignee_owner", "state", "waiting_on", *_WAITED),
        Index("ix_tasks_requester_owner", "requester_owner", "state", "waiting_on", *_WAITED),
        Index("ix_tasks_wait_agent", "wait_agent", "moved_at", "id"),
        Index("ix_tasks_requested_by", "requested_by_id"),
        Index("ix_tasks_parent", "parent_task_id"),
    )

    id: str = Field(primary_key=True, max_length=64)
    project: str = Field(max_length=39)
    state: str = Field(max_length=16)
    waiting_on: str | None = Field(default=None, max_length=16)
    requester: str | None = Field(default=None, max_length=79)
    requester_owner: str = Field(max_length=39)
    assignee: str = Field(max_length=79)
    assignee_owner: str = Field(max_length=39)
    requested_by: dict[str, Any] = json_column(nullable=False)
    requested_by_id: str = Field(max_length=79)
    packet: dict[str, Any] = json_column(nullable=False)
    result: dict[str, Any] | None = json_column()
    latest_checkpoint: dict[str, Any] | None = json_column()
    latest_checkpoint_by: dict[str, Any] | None = json_column()
    parent_task_id: str | None = Field(default=None, max_length=64, foreign_key="tasks.id")
    created_at: str = Field(max_length=40)
    updated_at: str = Field(max_length=40)
    origin_message_id: str | None = Field(default=None, max_length=64)
    route: dict[str, Any] = json_column(nullable=False)
    display_title: str | None = Field(default=None)
    turn_budget: int | None = None
    version: int = 1
    resume_to: str | None = Field(default=None, max_length=16)
    wait_agent: str | None = Field(default=None, max_length=79)
    question: str | None = None
    gate_basis: str | None = Field(default=None, max_length=16)
    gate_rule_id: str | None = Field(default=None, max_length=64)
    approval_id: str | None = Field(default=None, max_length=64)
    created_by: str = Field(max_length=79)
    idempotency_key: str | None = Field(default=None, max_length=200)
    schedule_id: str | None = Field(default=None, max_length=64)
    schedule_version: int | None = None
    moved_at: str | None = Field(default=None, max_length=40)


class TaskLinkRow(SQLModel, table=True):
    """A step of a task's graph, from `src` to `dst`, both ways of both kinds of edge: `up`
    (to the parent) and `down` (to a subtask), `out` (to a task named in the packet's
    `depends_on`) and `in` (to a task naming it there). Written with the task (its parent and
    its packet never change), so that `task_graph` walks from a task through this table's
    primary key, however many tasks there are. No foreign keys: `depends_on` may name a task
    that does not exist, and a walk only ever starts from one that does."""

    __tablename__ = "task_links"

    src: str = Field(primary_key=True, max_length=64)
    way: str = Field(primary_key=True, max_length=4)
    dst: str = Field(primary_key=True, max_length=64)


class EventRow(SQLModel, table=True):
    """The event log: one row per event, `seq` strictly increasing in commit order."""

    __tablename__ = "events"
    __table_args__ = (
        Index("ix_events_task_seq", "task_id", "seq"),
        Index("ix_events_project_seq", "project", "seq"),
    )

    # on SQLite the rowid (INTEGER PRIMARY KEY: no second b-tree beside the table)
    seq: int = Field(
        sa_column=Column(
            BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=False
        )
    )
    task_id: str = Field(max_length=64, foreign_key="tasks.id")
    project: str = Field(max_length=39)
    kind: str = Field(max_length=16)
    from_state: str | None = Field(default=None, max_length=16)
    to_state: str = Field(max_length=16)
    waiting_on: str | None = Field(default=None, max_length=16)
    verb: str = Field(max_length=32)
    actor: str | None = Field(default=None, max_length=79)
    at: str = Field(max_length=40)
    version: int
    note: str | None = None
    task: dict[str, Any] = json_column(nullable=False)
    wait_agent: str | None = Field(default=None, max_length=79)


def _archive_of(log: Table) -> Table:
    """The archive of the event log: its columns (no foreign keys), read by task."""
    columns = [
        Column(c.name, c.type, primary_key=c.primary_key, nullable=c.nullable, autoincrement=False)
        for c in log.columns
    ]
    return Table(
        "events_archive",
        SQLModel.metadata,
        *columns,
        Index("ix_events_archive_task_seq", "task_id", "seq"),
    )


# Events moved out of `events` by `prickle events archive` (`archive`): the
# history of tasks that ended long ago, read back by the task only.
events_archive = _archive_of(table_of(EventRow))


class EventArchiveRunRow(SQLModel, table=True):
    """One `prickle events archive`: which ended tasks it moved, where, and the highest seq it
    moved (`archived_to`). No reader of the log by cursor is served from below the highest
    of those: the archived events interleave with kept ones up to there."""

    __tablename__ = "event_archive_runs"

    id: int | None = Field(default=None, primary_key=True)
    ended_before: str = Field(max_length=40)
    archived_to: int = Field(sa_column=Column(BigInteger, nullable=False))
    events: int
    target: str
    at: str = Field(max_length=40)


class CheckpointRow(SQLModel, table=True):
    __tablename__ = "checkpoints"
    __table_args__ = (Index("ix_checkpoints_task", "task_id", "id"),)

    id: str = Field(primary_key=True, max_length=64)
    task_id: str = Field(max_length=64, foreign_key="tasks.id")
    body: dict[str, Any] = json_column(nullable=False)
    sha256: str = Field(max_length=64)
    agent: str = Field(max_length=79)
    handed_back: bool = False
    created_at: str = Field(max_length=40)


class ResultRow(SQLModel, table=True):
    __tablename__ = "results"
    __table_args__ = (
        UniqueConstraint("task_id", "revision", name="uq_results_revision"),
        Index("ix_results_task", "task_id", "revision"),
    )

    id: str = Field(primary_key=True, max_length=64)
    task_id: str = Field(max_length=64, foreign_key="tasks.id")
    revision: int
    status: str = Field(max_length=16)
    submission_id: str | None = Field(default=None, max_length=64)
    submission_sha256: str = Field(max_length=64)
    body: dict[str, Any] = json_column(nullable=False)
    created_at: str = Field(max_length=40)


class PersonRow(SQLModel, table=True):
    __tablename__ = "persons"

    handle: str = Field(primary_key=True, max_length=39)
    created_at: str = Field(max_length=40)


class AgentRow(SQLModel, table=True):
    __tablename__ = "agents"

    id: str = Field(primary_key=True, max_length=79)
    owner: str = Field(max_length=39, index=True)
    created_at: str = Field(max_length=40)
    # its A2A card is served without a token (migration 0017); the database's default
    # only, so that a statement naming no column writes to a schema from before it too
    card_public: bool | None = Field(
        default=None, nullable=False, sa_column_kwargs={"server_default": false()}
    )


class TokenRow(SQLModel, table=True):
    """Only the sha256 of a token is stored; `id` names the token to its owner, and is not
    the secret. Every moment is RFC 3339 text; `last_used_at` is kept to the minute."""

    __tablename__ = "tokens"
    __table_args__ = (Index("ix_tokens_id", "id", unique=True),)

    token_sha256: str = Field(primary_key=True, max_length=64)
    id: str = Field(max_length=64)
    principal_kind: str = Field(max_length=8)
    principal_id: str = Field(max_length=79, index=True)
    label: str | None = Field(default=None, max_length=100)
    created_at: str = Field(max_length=40)
    last_used_at: str | None = Field(default=None, max_length=40)
    expires_at: str | None = Field(default=None, max_length=40)
    revoked_at: str | None = Field(default=None, max_length=40)


class CapabilityRow(SQLModel, table=True):
    __tablename__ = "capabilities"
    __table_args__ = (Index("ix_capabilities_kind_name", "kind", "name"),)

    agent_id: str = Field(primary_key=True, max_length=79)
    kind: str = Field(primary_key=True, max_length=16)
    name: str = Field(primary_key=True, max_length=80)


class GateRuleRow(SQLModel, table=True):
    __tablename__ = "gate_rules"

    id: str = Field(primary_key=True, max_length=64)
    owner: str = Field(max_length=39, index=True)
    effect: str = Field(max_length=8)
    priority: int = 0
    project: str | None = Field(default=None, max_length=39)
    requester_owner: str | None = Field(default=None, max_length=39)
    requester_agent: str | None = Field(default=None, max_length=79)
    deliverable_type: str | None = Field(default=None, max_length=16)
    capability_kind: str | None = Field(default=None, max_length=16)
    created_at: str = Field(max_length=40)


class ResultRuleRow(SQLModel, table=True):
    __tablename__ = "result_rules"

    id: str = Field(primary_key=True, max_length=64)
    owner: str = Field(max_length=39, index=True)
    policy: str = Field(max_length=32)
    project: str | None = Field(default=None, max_length=39)
    assignee: str | None = Field(default=None, max_length=79)
    deliverable_type: str | None = Field(default=None, max_length=16)
    created_at: str = Field(max_length=40)


class ApprovalRow(SQLModel, table=True):
    __tablename__ = "approvals"

    id: str = Field(primary_key=True, max_length=64)
    task_id: str = Field(max_length=64, index=True, foreign_key="tasks.id")
    owner: str = Field(max_length=39)
    status: str = Field(max_length=16)  # pending | approved | denied | cancelled
    reason: str | None = None
    created_at: str = Field(max_length=40)
    decided_at: str | None = Field(default=None, max_length=40)


class ProjectMemberRow(SQLModel, table=True):
    __tablename__ = "project_members"
    __table_args__ = (Index("ix_project_members_handle", "handle"),)

    project: str = Field(primary_key=True, max_length=39)
    handle: str = Field(primary_key=True, max_length=39)
    role: str = Field(max_length=8)  # admin | member
    created_at: str = Field(max_length=40)


class ScheduleRow(SQLModel, table=True):
    """An owner schedule. `next_run_at` is NULL while paused or when no due time is left;
    as fixed-width UTC RFC 3339 text it sorts in time order, so `next_run_at <= now` finds
    the due schedules through its index."""

    __tablename__ = "schedules"
    __table_args__ = (Index("ix_schedules_project", "project"),)

    id: str = Field(primary_key=True, max_length=64)
    project: str = Field(max_length=39)
    owner: str = Field(max_length=39, index=True)
    version: int = 1
    assignee: str | None = Field(default=None, max_length=79)
    capability: dict[str, Any] | None = json_column()
    packet: dict[str, Any] = json_column(nullable=False)
    display_title: str | None = Field(default=None)
    turn_budget: int | None = None
    cron: str | None = Field(default=None, max_length=200)
    every_seconds: int | None = None
    timezone: str = Field(max_length=64)
    starts_at: str | None = Field(default=None, max_length=40)
    ends_at: str | None = Field(default=None, max_length=40)
    catch_up: str = Field(max_length=8)
    paused: bool = False
    next_run_at: str | None = Field(default=None, max_length=40, index=True)
    last_run_at: str | None = Field(default=None, max_length=40)
    last_task_id: str | None = Field(default=None, max_length=64)
    runs: int = 0
    last_error: str | None = None
    created_at: str = Field(max_length=40)


class ScheduleRunRow(SQLModel, table=True):
    """One row per run. Its key, unique (schedule_id, due_at), makes one task per due time
    however many processes reach it; `error` says why a run made no task."""

    __tablename__ = "schedule_runs"

    schedule_id: str = Field(primary_key=True, max_length=64)
    due_at: str = Field(primary_key=True, max_length=40)
    task_id: str | None = Field(default=None, max_length=64, foreign_key="tasks.id")
    error: str | None = None
    created_at: str = Field(max_length=40)


class ErasedPrincipalRow(SQLModel, table=True):
    """Erased persons and agents; an id here can never be registered again."""

    __tablename__ = "erased_principals"

    id: str = Field(primary_key=True, max_length=79)  # a handle or an agent id
    kind: str = Field(max_length=8)  # person | agent
    erased_at: str = Field(max_length=40)


class WebhookRow(SQLModel, table=True):
    """A webhook: a durable reader of the event log for its owner. `read_to` is the seq up to
    which the log has been judged for it, `last_cursor` the last event delivered; both move
    only after a 2xx. `leased_by`/`lease_until`: the one process delivering it meanwhile."""

    __tablename__ = "webhooks"

    id: str = Field(primary_key=True, max_length=64)
    owner: str = Field(max_length=79, index=True)
    owner_kind: str = Field(max_length=8)
    url: str = Field(max_length=2048)
    project: str | None = Field(default=None, max_length=39)
    task_id: str | None = Field(default=None, max_length=64)
    assignee: str | None = Field(default=None, max_length=79)
    kinds: list[str] | None = json_column()
    description: str | None = None
    secret: str = Field(max_length=100)
    enabled: bool = True
    disabled_reason: str | None = None
    last_cursor: int = Field(sa_column=Column(BigInteger, nullable=False, default=0))
    read_to: int = Field(sa_column=Column(BigInteger, nullable=False, default=0))
    last_error: str | None = None
    failures: int = 0
    failing_since: str | None = Field(default=None, max_length=40)
    next_attempt_at: str | None = Field(default=None, max_length=40)
    leased_by: str | None = Field(default=None, max_length=64)
    lease_until: str | None = Field(default=None, max_length=40)
    created_at: str = Field(max_length=40)
    # what each POST carries: "task.event" (Prickle's) or "a2a" (an A2A push notification,
    # with `push_token` as its X-A2A-Notification-Token header); migration 0017
    payload: str | None = Field(
        default=None,
        max_length=16,
        nullable=False,
        sa_column_kwargs={"server_default": "task.event"},
    )
    push_token: str | None = Field(default=None, max_length=1000)
    # the Authorization header each POST carries (an A2A push config's authentication,
    # `Bearer …` or `Basic …`); never shown again; migration 0020
    push_auth: str | None = Field(default=None, max_length=2100)


class WebhookDeliveryRow(SQLModel, table=True):
    """One delivery attempt; the last 1,000 per webhook are kept."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (Index("ix_webhook_deliveries_webhook_id", "webhook_id", "id"),)

    id: int | None = Field(default=None, primary_key=True)
    webhook_id: str = Field(max_length=64)
    event_cursor: int = Field(sa_column=Column(BigInteger, nullable=False))
    attempt: int
    status_code: int | None = None
    error: str | None = None
    duration_ms: int
    at: str = Field(max_length=40)


class RemoteAgentRow(SQLModel, table=True):
    """An agent that is a remote A2A agent: its card and the credential sent to it. A durable
    reader of the event log for its tasks: `read_to` is the seq up to which the log has been
    read for it; `leased_by`/`lease_until`: the one process dispatching to it meanwhile."""

    __tablename__ = "remote_agents"

    agent_id: str = Field(primary_key=True, max_length=79)
    owner: str = Field(max_length=39, index=True)
    card_url: str = Field(max_length=2048)
    credential: str | None = Field(default=None, max_length=4096)
    created_at: str = Field(max_length=40)
    read_to: int = Field(sa_column=Column(BigInteger, nullable=False, default=0))
    leased_by: str | None = Field(default=None, max_length=64)
    lease_until: str | None = Field(default=None, max_length=40)


class RemoteTaskRow(SQLModel, table=True):
    """A task sent to a remote A2A agent: the message that sent it (`message_id`, stable
    across resends), the remote's task once known, the remote question already put to the
    requester (`asked`) and the message that answered it (`answered`), the status update
    last kept as a checkpoint, and whether the remote task is over for Prickle (`done`)."""

    __tablename__ = "remote_tasks"

    task_id: str = Field(primary_key=True, max_length=64, foreign_key="tasks.id")
    agent_id: str = Field(max_length=79, index=True)
    message_id: str = Field(max_length=100)
    remote_task_id: str | None = Field(default=None, max_length=200)
    sent_at: str | None = Field(default=None, max_length=40)
    asked: str | None = Field(default=None, max_length=200)
    answered: str | None = Field(default=None, max_length=100)
    checkpointed: str | None = Field(default=None, max_length=200)
    done: bool = False


metadata = SQLModel.metadata
