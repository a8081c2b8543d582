"""A Prickle task, and each event of its log, as A2A shows them: the state by the one
mapping table (docs/a2a.md), the open question or the result to decide as the status
message, the result as an artifact, and the exact Prickle state in `metadata["prickle"]`."""

from __future__ import annotations

import mimetypes
from collections.abc import Sequence
from typing import Any

from a2a.types import (
    Artifact,
    Message,
    Part,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a.utils.errors import InvalidParamsError
from google.protobuf import json_format, struct_pb2

from app.domain import moves
from app.domain.events import Event, Said
from app.domain.principals import Principal
from app.domain.questions import open_question
from app.domain.task import JSON
from app.domain.task import Task as PrickleTask

# The one mapping, Prickle state (and what a `waiting` task waits on) to A2A's TaskState.
STATES: dict[str, TaskState] = {
    "requested": TaskState.TASK_STATE_SUBMITTED,
    "routed": TaskState.TASK_STATE_SUBMITTED,
    "accepted": TaskState.TASK_STATE_WORKING,
    "working": TaskState.TASK_STATE_WORKING,
    "verifying": TaskState.TASK_STATE_WORKING,
    "approval": TaskState.TASK_STATE_INPUT_REQUIRED,
    "returned": TaskState.TASK_STATE_INPUT_REQUIRED,
    "completed": TaskState.TASK_STATE_COMPLETED,
    "rejected": TaskState.TASK_STATE_REJECTED,
    "cancelled": TaskState.TASK_STATE_CANCELED,
}
WAITING: dict[str, TaskState] = {
    "owner_approval": TaskState.TASK_STATE_AUTH_REQUIRED,
    "stopped": TaskState.TASK_STATE_AUTH_REQUIRED,
    "human": TaskState.TASK_STATE_INPUT_REQUIRED,
    "agent": TaskState.TASK_STATE_INPUT_REQUIRED,
}
TERMINAL = frozenset({"completed", "rejected", "cancelled"})
# where a blocking SendMessage stops waiting (A2A v1.0 section 3.2.2): a final state, or
# one interrupted, on the client's input or on an authorization (the owner's gate, a stop)
SETTLED = frozenset(
    {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_CANCELED,
        TaskState.TASK_STATE_REJECTED,
        TaskState.TASK_STATE_INPUT_REQUIRED,
        TaskState.TASK_STATE_AUTH_REQUIRED,
    }
)


def prickle_states(wanted: TaskState) -> tuple[tuple[str, str | None], ...]:
    """The (state, waiting_on) pairs `a2a_state` maps to `wanted` (a waiting_on of None:
    any), for a filter (`TaskFilters.state_in`). WAITING names every waiting_on the
    protocol has, so a `waiting` task is found by exactly one of them."""
    plain = [(state, None) for state, shown in STATES.items() if shown == wanted]
    waiting = [("waiting", on) for on, shown in WAITING.items() if shown == wanted]
    return (*plain, *waiting)


def settled(task: PrickleTask) -> bool:
    """Whether a blocking SendMessage answers with the task as it is (SETTLED)."""
    return a2a_state(task.state, task.waiting_on) in SETTLED


def a2a_state(state: str, waiting_on: str | None) -> TaskState:
    if state == "waiting":
        return WAITING.get(waiting_on or "", TaskState.TASK_STATE_INPUT_REQUIRED)
    return STATES[state]


def value(data: Any) -> struct_pb2.Value:
    """JSON as a protobuf Value (a data part's payload)."""
    return json_format.ParseDict(data, struct_pb2.Value())


def struct(data: JSON) -> struct_pb2.Struct:
    return json_format.ParseDict(data, struct_pb2.Struct())


def agent_says(task_id: str, context_id: str, text: str, message_id: str) -> Message:
    return Message(
        message_id=message_id,
        task_id=task_id,
        context_id=context_id,
        role=Role.ROLE_AGENT,
        parts=[Part(text=text)],
    )


def status_text(task: PrickleTask, note: str | None = None) -> str | None:
    """What the status message says: the open question of a wait, the result to decide,
    the reason of a hand-back (the event's note, when known)."""
    question = open_question(task)
    if question is not None:
        # an event's task carries no question: the move that asked has it as its note
        return question.question or note or f"waiting on {question.on}: answer to resume"
    if task.state == "approval" and task.result:
        return f"result to decide: {task.result.get('summary', '')}"
    if task.state == "returned":
        return f"handed back: {note}" if note else "handed back"
    if task.state == "waiting":
        return f"waiting on {task.waiting_on}" + (f": {note}" if note else "")
    return None


def history_length(length: int | None) -> int | None:
    """A request's `historyLength`: unset (None) is the whole history, 0 none; below 0 is
    invalid params."""
    if length is not None and length < 0:
        raise InvalidParamsError(message=f"historyLength must not be negative, not {length}")
    return length


def last(history: Sequence[Message], length: int | None) -> list[Message]:
    """The last `length` messages of the history (all of them when it has fewer; None:
    all)."""
    if length is None:
        return list(history)
    return list(history[max(0, len(history) - length) :])


def prickle_metadata(task: PrickleTask, viewer: Principal, cursor: str | None = None) -> JSON:
    verbs = moves.allowed_verbs(task, viewer)
    meta: JSON = {
        "state": task.state,
        "waitingOn": task.waiting_on,
        "version": task.version,
        "allowedVerbs": verbs,
        "project": task.project,
        "assignee": task.assignee,
        # deprecated: the snake_case names of the first release, kept beside for one more
        "waiting_on": task.waiting_on,
        "allowed_verbs": verbs,
    }
    if cursor is not None:
        meta["cursor"] = cursor
    return {"prickle": meta}


def status(task: PrickleTask, note: str | None = None) -> TaskStatus:
    shown = TaskStatus(state=a2a_state(task.state, task.waiting_on))
    shown.timestamp.FromJsonString(task.updated_at)
    text = status_text(task, note)
    if text is not None:
        shown.message.CopyFrom(
            agent_says(task.id, task.project, text, f"{task.id}-v{task.version}")
        )
    return shown


def artifacts(result: JSON | None) -> list[Artifact]:
    """The result as an artifact: its summary as a text part, its evidence and its report
    as data parts, and each evidence item with a `url` as a URL file part (its summary the
    part's `filename`, its `mediaType` the one its URL's extension names, if any, the item's
    index in the evidence in the part's metadata)."""
    if not result:
        return []
    evidence = result.get("evidence") or []
    parts = [Part(text=result.get("summary", ""))]
    parts.append(Part(data=value({"evidence": evidence})))
    parts += [
        Part(
            url=item["url"],
            filename=str(item.get("summary") or "")[:500],
            media_type=mimetypes.guess_type(item["url"], strict=False)[0] or "",
            metadata=struct({"prickle": {"evidence": index, "kind": item.get("kind")}}),
        )
        for index, item in enumerate(evidence)
        if isinstance(item, dict) and isinstance(item.get("url"), str) and item["url"]
    ]
    if result.get("evidence_report") is not None:
        parts.append(Part(data=value({"evidence_report": result["evidence_report"]})))
    meta = {k: result.get(k) for k in ("revision", "status", "artifacts") if result.get(k)}
    return [
        Artifact(
            artifact_id=f"result-{result.get('revision', 1)}",
            name="result",
            description=f"revision {result.get('revision', 1)}, {result.get('status')}",
            parts=parts,
            metadata=struct({"prickle": meta}),
        )
    ]


def a2a_task(
    task: PrickleTask,
    viewer: Principal,
    history: Sequence[Message] = (),
    note: str | None = None,
    cursor: str | None = None,
) -> Task:
    return Task(
        id=task.id,
        context_id=task.project,
        status=status(task, note),
        artifacts=artifacts(task.result),
        history=list(history),
        metadata=struct(prickle_metadata(task, viewer, cursor)),
    )


def requested_message(task: PrickleTask) -> Message:
    """The message that asked for the task, as its packet keeps it."""
    packet = task.packet
    rest = {k: v for k, v in packet.items() if k != "task" and v not in ("", [], None)}
    return Message(
        message_id=task.idempotency_key or f"{task.id}-packet",
        task_id=task.id,
        context_id=task.project,
        role=Role.ROLE_USER,
        parts=[Part(text=packet.get("task", "")), Part(data=value(rest))],
    )


def history_of(task: PrickleTask, said: Sequence[Said]) -> list[Message]:
    """The conversation: the request, each question asked and each answer given."""
    history = [requested_message(task)]
    for event in said:
        mid = f"{task.id}-e{event.seq}"
        if event.kind == "answered":
            history.append(_says(task, Role.ROLE_USER, event.note, mid))
        elif event.kind == "moved" and event.waiting_on in ("human", "agent"):
            history.append(_says(task, Role.ROLE_AGENT, event.note, mid))
    return history


def _says(task: PrickleTask, role: Role, text: str, message_id: str) -> Message:
    return Message(
        message_id=message_id,
        task_id=task.id,
        context_id=task.project,
        role=role,
        parts=[Part(text=text)],
    )


def stream_events(event: Event, task: PrickleTask, viewer: Principal) -> list[Any]:
    """One event of the log as A2A stream events, each with the event's cursor in
    `metadata["prickle"]`: a status update; before it, when the event judged a result (it
    leaves `verifying`: the result is on the task from then on), that result as an artifact
    update."""
    meta = prickle_metadata(task, viewer, event.cursor)
    meta["prickle"].update(kind=event.kind, verb=event.verb, actor=event.actor)
    shown: list[Any] = []
    if event.from_state == "verifying" and task.result:
        shown.append(
            TaskArtifactUpdateEvent(
                task_id=task.id,
                context_id=task.project,
                artifact=artifacts(task.result)[0],
                metadata=struct(meta),
            )
        )
    shown.append(
        TaskStatusUpdateEvent(
            task_id=task.id,
            context_id=task.project,
            status=status(task, event.note),
            metadata=struct(meta),
        )
    )
    return shown
