from enum import Enum


class CapabilityKind(str, Enum):
    mcp = "mcp"
    repo = "repo"
    deploy = "deploy"
    data = "data"
    other = "other"


class CatchUp(str, Enum):
    skip = "skip"
    one = "one"


class ContextKind(str, Enum):
    packet = "packet"
    memory_fact = "memory_fact"
    checkpoint = "checkpoint"


class DecidedByPolicy(str, Enum):
    v0 = "v0"
    auto_accept = "auto_accept"


class Decision(str, Enum):
    accept = "accept"
    request_changes = "request_changes"
    reject = "reject"


class DeliverableType(str, Enum):
    code = "code"
    doc = "doc"
    answer = "answer"
    screenshots = "screenshots"
    reviewed_pr = "reviewed_pr"
    design = "design"
    data = "data"
    other = "other"


class EdgeKind(str, Enum):
    parent = "parent"
    depends_on = "depends_on"


class EventKind(str, Enum):
    snapshot = "snapshot"
    created = "created"
    moved = "moved"
    checkpointed = "checkpointed"
    result = "result"
    answered = "answered"


class EvidenceKind(str, Enum):
    test_output = "test_output"
    screenshot = "screenshot"
    link = "link"
    pull_request = "pull_request"
    commit = "commit"
    note = "note"


class GateBasis(str, Enum):
    same_owner = "same_owner"
    rule = "rule"
    approval = "approval"


class GateEffect(str, Enum):
    allow = "allow"
    deny = "deny"
    hold = "hold"


class InboxAsk(str, Enum):
    approve_handoff = "approve_handoff"
    decide_result = "decide_result"
    answer = "answer"


class Provenance(str, Enum):
    agent_generated = "agent_generated"
    from_approved_context = "from_approved_context"
    owner_approved = "owner_approved"
    owner_instruction = "owner_instruction"


class ProvenanceStatus(str, Enum):
    claimed = "claimed"
    attested = "attested"


class ResultPolicy(str, Enum):
    auto_accept = "auto_accept"
    require_complete_evidence = "require_complete_evidence"
    require_approval = "require_approval"


class ResultStatus(str, Enum):
    submitted = "submitted"
    accepted = "accepted"
    rejected = "rejected"
    superseded = "superseded"
    cancelled = "cancelled"


class RouteVia(str, Enum):
    handoff = "handoff"
    request_capability = "request_capability"


class StaleWhy(str, Enum):
    before_previous_revision = "before_previous_revision"
    older_than_7_days = "older_than_7_days"


class TaskState(str, Enum):
    requested = "requested"
    routed = "routed"
    accepted = "accepted"
    working = "working"
    waiting = "waiting"
    verifying = "verifying"
    approval = "approval"
    completed = "completed"
    rejected = "rejected"
    cancelled = "cancelled"
    returned = "returned"


class Verifier(str, Enum):
    assignee = "assignee"
    requester = "requester"
    person = "person"
    ci = "ci"


class WaitOn(str, Enum):
    human = "human"
    agent = "agent"


class WaitingOn(str, Enum):
    owner_approval = "owner_approval"
    human = "human"
    agent = "agent"
    stopped = "stopped"
