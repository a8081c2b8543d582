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
    WaitOn,
)


class EventFields(BaseModel):
    cursor: str
    seq: int
    kind: EventKind
    task_id: str
    project: str
    from_state: Optional[TaskState]
    to_state: TaskState
    waiting_on: Optional[WaitingOn]
    verb: Optional[str]
    actor: Optional[str]
    at: str
    version: int
    note: Optional[str]


class ResultFields(BaseModel):
    summary: str
    evidence: list["ResultFieldsEvidence"]
    provenance: Provenance
    returned_by: str
    returned_at: str
    submission_id: Optional[str]
    revision: Optional[int]
    artifacts: Optional[list["ResultFieldsArtifacts"]]
    status: Optional[ResultStatus]
    verdicts: Optional[list["ResultFieldsVerdicts"]]
    verified_by: Optional[
        Annotated[
            Union[
                "ResultFieldsVerifiedByPersonRef",
                "ResultFieldsVerifiedByAgentRef",
                "ResultFieldsVerifiedBySystemRef",
            ],
            Field(discriminator="typename__"),
        ]
    ]
    decided_by: Optional[
        Annotated[
            Union[
                "ResultFieldsDecidedByPersonRef",
                "ResultFieldsDecidedByAgentRef",
                "ResultFieldsDecidedBySystemRef",
            ],
            Field(discriminator="typename__"),
        ]
    ]
    decided_by_policy: Optional[DecidedByPolicy]
    reason: Optional[str]
    evidence_report: Optional["ResultFieldsEvidenceReport"]
    lineage: Optional["ResultFieldsLineage"]
    provenance_status: Optional[ProvenanceStatus]


class ResultFieldsEvidence(BaseModel):
    kind: EvidenceKind
    summary: str
    url: Optional[str]
    content: Optional[str]
    criteria: Optional[list[int]]
    artifact: Optional[int]
    observed_at: Optional[str]
    verifier: Optional[Verifier]


class ResultFieldsArtifacts(BaseModel):
    ref: str
    sha256: Optional[str]
    commit_sha: Optional[str]


class ResultFieldsVerdicts(BaseModel):
    criterion: int
    accepted: bool
    note: Optional[str]


class ResultFieldsVerifiedByPersonRef(BaseModel):
    typename__: Literal["PersonRef"] = Field(alias="__typename")
    kind: str
    handle: str
    erased: Optional[bool]


class ResultFieldsVerifiedByAgentRef(BaseModel):
    typename__: Literal["AgentRef"] = Field(alias="__typename")
    kind: str
    agent_id: str
    erased: Optional[bool]


class ResultFieldsVerifiedBySystemRef(BaseModel):
    typename__: Literal["SystemRef"] = Field(alias="__typename")
    kind: str


class ResultFieldsDecidedByPersonRef(BaseModel):
    typename__: Literal["PersonRef"] = Field(alias="__typename")
    kind: str
    handle: str
    erased: Optional[bool]


class ResultFieldsDecidedByAgentRef(BaseModel):
    typename__: Literal["AgentRef"] = Field(alias="__typename")
    kind: str
    agent_id: str
    erased: Optional[bool]


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
    rule_id: Optional[str]
    approval_id: Optional[str]


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
    assignee: Optional[str]
    capability: Optional["ScheduleFieldsCapability"]
    packet: "ScheduleFieldsPacket"
    display_title: Optional[str]
    turn_budget: Optional[int]
    cron: Optional[str]
    every_seconds: Optional[int]
    timezone: str
    starts_at: Optional[str]
    ends_at: Optional[str]
    catch_up: CatchUp
    paused: bool
    next_run_at: Optional[str]
    last_run_at: Optional[str]
    last_task_id: Optional[str]
    runs: int
    last_error: Optional[str]
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
    waiting_on: Optional[WaitingOn]
    requester: Optional[str]
    assignee: str
    packet: "TaskFieldsPacket"
    result: Optional["TaskFieldsResult"]
    latest_checkpoint: Optional["TaskFieldsLatestCheckpoint"]
    latest_checkpoint_by: Optional["TaskFieldsLatestCheckpointBy"]
    parent_task_id: Optional[str]
    created_at: str
    updated_at: str
    requested_by: Union[
        "TaskFieldsRequestedByPersonRef",
        "TaskFieldsRequestedByAgentRef",
        "TaskFieldsRequestedBySystemRef",
    ] = Field(discriminator="typename__")
    origin_message_id: Optional[str]
    route: "TaskFieldsRoute"
    display_title: Optional[str]
    turn_budget: Optional[int]


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
    needs_answer: Optional[bool]


class TaskFieldsLatestCheckpointBy(BaseModel):
    agent: str
    provenance: str
    handed_back: bool


class TaskFieldsRequestedByPersonRef(BaseModel):
    typename__: Literal["PersonRef"] = Field(alias="__typename")
    kind: str
    handle: str
    erased: Optional[bool]


class TaskFieldsRequestedByAgentRef(BaseModel):
    typename__: Literal["AgentRef"] = Field(alias="__typename")
    kind: str
    agent_id: str
    erased: Optional[bool]


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
    question: Optional["TaskDetailQuestion"]


class TaskDetailQuestion(BaseModel):
    on: WaitOn
    question: Optional[str]
    asked_by: str
    agent: Optional[str]
    answerers: list[str]
    resumes_when_subtasks_end: bool


class WebhookFields(BaseModel):
    id: str
    url: str
    project: Optional[str]
    task_id: Optional[str]
    assignee: Optional[str]
    kinds: Optional[list[str]]
    description: Optional[str]
    enabled: bool
    disabled_reason: Optional[str]
    last_cursor: str
    pending: int
    last_error: Optional[str]
    created_at: str


EventFields.model_rebuild()
ResultFields.model_rebuild()
ScheduleFields.model_rebuild()
TaskFields.model_rebuild()
TaskDetail.model_rebuild()
WebhookFields.model_rebuild()
