from typing import Annotated, Any, Literal, Optional, Union

from pydantic import Field

from .base_model import BaseModel
from .enums import (
    CapabilityKind,
    CatchUp,
    DecidedByPolicy,
    DeliverableType,
    EventKind,
    EvidenceKind,
    GateBasis,
    Provenance,
    ProvenanceStatus,
    ResultStatus,
    RouteVia,
    StaleWhy,
    TaskState,
    Verifier,
    WaitingOn,
)


class EventFields(BaseModel):
    cursor: str
    seq: int
    kind: EventKind
    task_id: str
    project: str
    from_state: TaskState | None
    to_state: TaskState
    waiting_on: WaitingOn | None
    verb: str | None
    actor: str | None
    at: str
    version: int
    note: str | None


class ResultFields(BaseModel):
    summary: str
    evidence: list["ResultFieldsEvidence"]
    provenance: Provenance
    returned_by: str
    returned_at: str
    submission_id: str | None
    revision: int | None
    artifacts: list["ResultFieldsArtifacts"] | None
    status: ResultStatus | None
    verdicts: list["ResultFieldsVerdicts"] | None
    verified_by: Annotated[Union["ResultFieldsVerifiedByPersonRef", "ResultFieldsVerifiedByAgentRef", "ResultFieldsVerifiedBySystemRef"], Field(discriminator="typename__")] | None
    decided_by: Annotated[Union["ResultFieldsDecidedByPersonRef", "ResultFieldsDecidedByAgentRef", "ResultFieldsDecidedBySystemRef"], Field(discriminator="typename__")] | None
    decided_by_policy: DecidedByPolicy | None
    reason: str | None
    evidence_report: Optional["ResultFieldsEvidenceReport"]
    lineage: Optional["ResultFieldsLineage"]
    provenance_status: ProvenanceStatus | None


class ResultFieldsEvidence(BaseModel):
    kind: EvidenceKind
    summary: str
    url: str | None
    content: str | None
    criteria: list[int] | None
    artifact: int | None
    observed_at: str | None
    verifier: Verifier | None


class ResultFieldsArtifacts(BaseModel):
    ref: str
    sha256: str | None
    commit_sha: str | None


class ResultFieldsVerdicts(BaseModel):
    criterion: int
    accepted: bool
    note: str | None


class ResultFieldsVerifiedByPersonRef(BaseModel):
    typename__: Literal["PersonRef"] = Field(alias="__typename")
    kind: str
    handle: str
    erased: bool | None


class ResultFieldsVerifiedByAgentRef(BaseModel):
    typename__: Literal["AgentRef"] = Field(alias="__typename")
    kind: str
    agent_id: str
    erased: bool | None


class ResultFieldsVerifiedBySystemRef(BaseModel):
    typename__: Literal["SystemRef"] = Field(alias="__typename")
    kind: str


class ResultFieldsDecidedByPersonRef(BaseModel):
    typename__: Literal["PersonRef"] = Field(alias="__typename")
    kind: str
    handle: str
    erased: bool | None


class ResultFieldsDecidedByAgentRef(BaseModel):
    typename__: Literal["AgentRef"] = Field(alias="__typename")
    kind: str
    agent_id: str
    erased: bool | None


class ResultFieldsDecidedBySystemRef(BaseModel):
    typename__: Literal["SystemRef"] = Field(alias="__typename")
    kind: str


class ResultFieldsEvidenceReport(BaseModel):
    coverage: list["ResultFieldsEvidenceReportCoverage"]
    general: list[int]
    uncovered: list[int]
    stale: list["ResultFieldsEvidenceReportStale"]
    complete: bool


class ResultFieldsEvidenceReportCoverage(BaseModel):
    criterion: int
    evidence: list[int]


class ResultFieldsEvidenceReportStale(BaseModel):
    evidence: int
    why: StaleWhy


class ResultFieldsLineage(BaseModel):
    cause: Union[
        "ResultFieldsLineageCauseOwnerMessageCause",
        "ResultFieldsLineageCauseTaskCause",
        "ResultFieldsLineageCauseNoCause",
        "ResultFieldsLineageCauseOwnerScheduleCause",
    ] = Field(discriminator="typename__")
    context: list[
        Annotated[
            Union[
                "ResultFieldsLineageContextPacketContext",
                "ResultFieldsLineageContextMemoryFactContext",
                "ResultFieldsLineageContextCheckpointContext",
            ],
            Field(discriminator="typename__"),
        ]
    ]
    recorded_at: str


class ResultFieldsLineageCauseOwnerMessageCause(BaseModel):
    typename__: Literal["OwnerMessageCause"] = Field(alias="__typename")
    kind: str
    message_id: str
    author: str


class ResultFieldsLineageCauseTaskCause(BaseModel):
    typename__: Literal["TaskCause"] = Field(alias="__typename")
    kind: str
    task_id: str
    basis: GateBasis
    rule_id: str | None
    approval_id: str | None


class ResultFieldsLineageCauseNoCause(BaseModel):
    typename__: Literal["NoCause"] = Field(alias="__typename")
    kind: str


class ResultFieldsLineageCauseOwnerScheduleCause(BaseModel):
    typename__: Literal["OwnerScheduleCause"] = Field(alias="__typename")
    kind: str
    schedule_id: str
    version: int
    task_id: str
    owner: str


class ResultFieldsLineageContextPacketContext(BaseModel):
    typename__: Literal["PacketContext"] = Field(alias="__typename")
    kind: str
    task_id: str
    sha256: str


class ResultFieldsLineageContextMemoryFactContext(BaseModel):
    typename__: Literal["MemoryFactContext"] = Field(alias="__typename")
    kind: str
    key: str
    sha256: str


class ResultFieldsLineageContextCheckpointContext(BaseModel):
    typename__: Literal["CheckpointContext"] = Field(alias="__typename")
    kind: str
    task_id: str
    checkpoint_id: str
    sha256: str


class ScheduleFields(BaseModel):
    id: str
    project: str
    owner: str
    version: int
    assignee: str | None
    capability: Optional["ScheduleFieldsCapability"]
    packet: "ScheduleFieldsPacket"
    display_title: str | None
    turn_budget: int | None
    cron: str | None
    every_seconds: int | None
    timezone: str
    starts_at: str | None
    ends_at: str | None
    catch_up: CatchUp
    paused: bool
    next_run_at: str | None
    last_run_at: str | None
    last_task_id: str | None
    runs: int
    last_error: str | None
    created_at: str


class ScheduleFieldsCapability(BaseModel):
    kind: CapabilityKind
    name: str


class ScheduleFieldsPacket(BaseModel):
    task: str
    deliverable_type: DeliverableType
    acceptance_criteria: list[str]
    context: str
    files: list[str]
    depends_on: list[str]


class TaskFields(BaseModel):
    id: str
    project: str
    state: TaskState
    waiting_on: WaitingOn | None
    requester: str | None
    assignee: str
    packet: "TaskFieldsPacket"
    result: Optional["TaskFieldsResult"]
    latest_checkpoint: Optional["TaskFieldsLatestCheckpoint"]
    latest_checkpoint_by: Optional["TaskFieldsLatestCheckpointBy"]
    parent_task_id: str | None
    created_at: str
    updated_at: str
    requested_by: Union[
        "TaskFieldsRequestedByPersonRef",
        "TaskFieldsRequestedByAgentRef",
        "TaskFieldsRequestedBySystemRef",
    ] = Field(discriminator="typename__")
    origin_message_id: str | None
    route: "TaskFieldsRoute"
    display_title: str | None
    turn_budget: int | None


class TaskFieldsPacket(BaseModel):
    task: str
    deliverable_type: DeliverableType
    acceptance_criteria: list[str]
    context: str
    files: list[str]
    depends_on: list[str]


class TaskFieldsResult(ResultFields):
    pass


class TaskFieldsLatestCheckpoint(BaseModel):
    progress: str
    decisions: list[str]
    files_touched: list[str]
    next_steps: list[str]
    open_questions: list[str]
    needs_answer: bool | None


class TaskFieldsLatestCheckpointBy(BaseModel):
    agent: str
    provenance: str
    handed_back: bool


class TaskFieldsRequestedByPersonRef(BaseModel):
    typename__: Literal["PersonRef"] = Field(alias="__typename")
    kind: str
    handle: str
    erased: bool | None


class TaskFieldsRequestedByAgentRef(BaseModel):
    typename__: Literal["AgentRef"] = Field(alias="__typename")
    kind: str
    agent_id: str
    erased: bool | None


class TaskFieldsRequestedBySystemRef(BaseModel):
    typename__: Literal["SystemRef"] = Field(alias="__typename")
    kind: str


class TaskFieldsRoute(BaseModel):
    via: RouteVia
    capability: Optional["TaskFieldsRouteCapability"]


class TaskFieldsRouteCapability(BaseModel):
    kind: CapabilityKind
    name: str


class TaskDetail(TaskFields):
    version: int
    allowed_verbs: list[str]
    as_protocol: Any


EventFields.model_rebuild()
ResultFields.model_rebuild()
ScheduleFields.model_rebuild()
TaskFields.model_rebuild()
TaskDetail.model_rebuild()
