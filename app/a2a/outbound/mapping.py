"""A2A and Prickle, side by side: the message that sends a task, and the moves a remote
task's state calls for (docs/a2a.md, "Outbound", has the table).

| remote state | the Prickle moves, made by the remote agent as the assignee |
|---|---|
| SUBMITTED | accept_task |
| WORKING | accept_task, start_task; save_checkpoint with its status message, if any |
| INPUT_REQUIRED, AUTH_REQUIRED | accept_task, start_task, wait_on(human, the question) |
| COMPLETED | accept_task, start_task, return_result (artifacts as evidence) |
| FAILED, REJECTED, CANCELED | hand_back (the remote's reason) |

Each move is made only from the state it leaves, so following a remote task again after a
crash repeats none: the plan is worked out from the task as it is now.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from a2a.helpers.proto_helpers import get_message_text
from a2a.types.a2a_pb2 import (
    Artifact,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    TaskState,
)
from a2a.types.a2a_pb2 import Task as RemoteTask
from google.protobuf.json_format import MessageToDict
from google.protobuf.struct_pb2 import Struct, Value

from app.domain.task import Task
from app.domain.types import JSON

SUBMITTED = TaskState.TASK_STATE_SUBMITTED
WORKING = TaskState.TASK_STATE_WORKING
ASKING = (TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED)
COMPLETED = TaskState.TASK_STATE_COMPLETED
ENDED_BADLY = (
    TaskState.TASK_STATE_FAILED,
    TaskState.TASK_STATE_REJECTED,
    TaskState.TASK_STATE_CANCELED,
)
TERMINAL = (COMPLETED, *ENDED_BADLY)
# Prickle states in which the remote agent has nothing more to do
OVER = ("verifying", "approval", "completed", "rejected", "cancelled", "returned")

MAX_SUMMARY = 4000
MAX_EVIDENCE_SUMMARY = 500
MAX_CONTENT = 8000
MAX_TEXT = 8000
MAX_PROGRESS = 2000
MAX_REASON = 1000
MAX_EVIDENCE = 20
MAX_CRITERIA = 20


def state_name(state: int) -> str:
    """`WORKING` for TASK_STATE_WORKING: the name the docs use."""
    name: str = TaskState.Name(state)
    return name.removeprefix("TASK_STATE_")


def message_id(task_id: str, seq: int) -> str:
    """The id of the message that sends the task routed by event `seq`: the same on every
    resend, another when the task is routed again."""
    return f"prickle-{task_id}-{seq}"


def answer_id(task_id: str, seq: int) -> str:
    """The id of the message that carries the answer recorded by event `seq`."""
    return f"prickle-{task_id}-answer-{seq}"


def _data(value: JSON) -> Part:
    struct = Struct()
    struct.update(value)
    return Part(data=Value(struct_value=struct), media_type="application/json")


def send_request(task: Task, message_id: str) -> SendMessageRequest:
    """SendMessage for the task: the packet's task as text, the whole packet as a data part
    (with the Prickle task's id and project); its context is the message id, so that the
    remote task can be found again by it."""
    packet = task.packet
    prickle = {"task_id": task.id, "project": task.project, "requester": task.requester}
    message = Message(
        message_id=message_id,
        context_id=message_id,
        role=Role.ROLE_USER,
        parts=[Part(text=str(packet["task"])), _data({"packet": packet, "prickle": prickle})],
    )
    return SendMessageRequest(
        message=message, configuration=SendMessageConfiguration(return_immediately=True)
    )


def reply_request(remote: RemoteTask, message_id: str, text: str) -> SendMessageRequest:
    """SendMessage answering the remote task's question."""
    message = Message(
        message_id=message_id,
        context_id=remote.context_id,
        task_id=remote.id,
        role=Role.ROLE_USER,
        parts=[Part(text=text)],
    )
    return SendMessageRequest(
        message=message, configuration=SendMessageConfiguration(return_immediately=True)
    )


def status_text(remote: RemoteTask) -> str:
    """The text of the remote task's status message ("" when it has none)."""
    if not remote.status.HasField("message"):
        return ""
    return get_message_text(remote.status.message).strip()


def status_id(remote: RemoteTask) -> str:
    """What tells one status update from another: its message's id, else its timestamp."""
    status = remote.status
    ident = status.message.message_id if status.HasField("message") else ""
    return (ident or status.timestamp.ToJsonString() or state_name(status.state))[:200]


def question_of(remote: RemoteTask) -> tuple[str, str]:
    """The remote's question: its status update's id and its text."""
    text = status_text(remote)
    text = text or f"the remote agent asks for input ({state_name(remote.status.state)})"
    return status_id(remote), text[:MAX_TEXT]


def progress_of(remote: RemoteTask) -> str | None:
    """A WORKING update's message, kept as the task's checkpoint; None without one."""
    if remote.status.state != WORKING:
        return None
    return status_text(remote)[:MAX_PROGRESS] or None


def reason_of(remote: RemoteTask) -> str:
    text = status_text(remote)
    said = f": {text}" if text else ""
    return f"the remote A2A agent ended the task {state_name(remote.status.state)}{said}"[
        :MAX_REASON
    ]


@dataclass(frozen=True)
class Plan:
    """What to do for a remote task's state, given the Prickle task as it is now."""

    verbs: tuple[str, ...]  # the moves, in order, each from the state the one before leaves
    done: bool  # nothing more to follow


def plan(remote_state: int, task: Task) -> Plan:
    """The moves that bring the Prickle task to the remote's state (see the module's table)."""
    if task.state in OVER:
        return Plan((), True)
    state, waiting_on = task.state, task.waiting_on
    if remote_state in ENDED_BADLY:
        return Plan(("hand_back",), True)
    if waiting_on == "human" or state == "waiting":
        return Plan((), False)  # the requester's answer, or the owner, moves it on
    start = {"routed": ("accept_task", "start_task"), "accepted": ("start_task",)}.get(state, ())
    if remote_state == SUBMITTED:
        return Plan(start[:1], False)
    if remote_state == WORKING:
        return Plan(start, False)
    if remote_state in ASKING:
        return Plan((*start, "wait_on"), False)
    if remote_state == COMPLETED:
        return Plan((*start, "return_result"), True)
    return Plan((), False)


def _criteria(artifact: Artifact, count: int) -> list[int]:
    meta = MessageToDict(artifact.metadata) if artifact.HasField("metadata") else {}
    wanted = meta.get("criteria")
    if not isinstance(wanted, list):
        return []
    found = sorted({int(c) for c in wanted if isinstance(c, int | float) and 0 <= c < count})
    return found[:MAX_CRITERIA]


def _artifact_text(artifact: Artifact) -> str:
    texts = []
    for part in artifact.parts:
        if part.HasField("text"):
            texts.append(part.text)
        elif part.HasField("data"):
            texts.append(json.dumps(MessageToDict(part.data), sort_keys=True))
    return "\n".join(texts)


def _artifact_url(artifact: Artifact) -> str | None:
    for part in artifact.parts:
        url: str = part.url
        if part.HasField("url") and url.startswith(("http://", "https://")):
            return url
    return None


def evidence_of(artifact: Artifact, count: int) -> JSON:
    """An artifact as an evidence item: a link when it has a URL part, else a note holding
    its text and data; tied to the criteria its metadata names (`criteria`), if any."""
    text = _artifact_text(artifact)
    summary = artifact.name or artifact.description or text.split("\n", 1)[0] or "an artifact"
    item: dict[str, Any] = {"kind": "note", "summary": summary[:MAX_EVIDENCE_SUMMARY]}
    url = _artifact_url(artifact)
    if url is not None:
        item.update(kind="link", url=url)
    if text:
        item["content"] = text[:MAX_CONTENT]
    criteria = _criteria(artifact, count)
    if criteria:
        item["criteria"] = criteria
    return item


def result_of(remote: RemoteTask, task: Task, submission_id: str) -> JSON:
    """The result the completed remote task returns: its status message (else its artifacts'
    text) as the summary, its artifacts as evidence."""
    count = len(task.packet.get("acceptance_criteria", []))
    evidence = [evidence_of(a, count) for a in remote.artifacts[:MAX_EVIDENCE]]
    texts = [_artifact_text(a) for a in remote.artifacts]
    summary = status_text(remote) or "\n".join(t for t in texts if t).strip()
    summary = summary or "completed by the remote A2A agent"
    if not evidence:
        evidence = [{"kind": "note", "summary": summary[:MAX_EVIDENCE_SUMMARY]}]
    return {
        "summary": summary[:MAX_SUMMARY],
        "evidence": evidence,
        "provenance": "agent_generated",
        "submission_id": submission_id,
    }
