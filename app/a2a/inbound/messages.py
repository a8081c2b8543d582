"""An A2A message read as what it asks of Prickle: a handoff to the agent (its text the
packet's task, a data part shaped like a packet the rest, its `messageId` the idempotency
key, its `contextId` the project), or, naming a task, the answer to that task's question."""

from __future__ import annotations

from typing import Any

from a2a.types import Message
from a2a.utils.errors import ContentTypeNotSupportedError, InvalidParamsError
from google.protobuf import json_format

from app.domain.principals import Principal
from app.service.inputs import HandoffInput

DEFAULT_DELIVERABLE = "answer"
DEFAULT_CRITERIA = ("the message is answered",)
PACKET_FIELDS = frozenset(
    {"task", "deliverable_type", "acceptance_criteria", "context", "files", "depends_on"}
)
HANDOFF_FIELDS = frozenset({"display_title", "turn_budget", "parent_task_id"})


def text_of(message: Message) -> str:
    """The message's text parts, joined; ContentTypeNotSupported for a file part."""
    texts = []
    for part in message.parts:
        kind = part.WhichOneof("content")
        if kind == "text":
            texts.append(part.text)
        elif kind in ("raw", "url"):
            raise ContentTypeNotSupportedError(
                message="file parts are not taken: send text, and a data part for the packet"
            )
    return "\n".join(texts)


def data_of(message: Message) -> dict[str, Any]:
    """The message's data parts, merged; each must be an object of packet fields."""
    merged: dict[str, Any] = {}
    for part in message.parts:
        if part.WhichOneof("content") != "data":
            continue
        data = json_format.MessageToDict(part.data)
        if not isinstance(data, dict):
            raise InvalidParamsError(message="a data part must be an object of packet fields")
        unknown = sorted(set(data) - PACKET_FIELDS - HANDOFF_FIELDS)
        if unknown:
            raise InvalidParamsError(
                message=f"a data part's fields are a packet's: unknown {', '.join(unknown)}"
            )
        merged.update(data)
    return merged


def handoff_input(message: Message, caller: Principal, agent_id: str) -> HandoffInput:
    """The handoff the message asks for, by `caller` to `agent_id`."""
    if not message.message_id:
        raise InvalidParamsError(message="message.messageId is required")
    data = data_of(message)
    text = text_of(message) or data.get("task")
    if not text:
        raise InvalidParamsError(message="the message has no text: it is the packet's task")
    packet = {k: v for k, v in data.items() if k in PACKET_FIELDS}
    packet["task"] = text
    packet.setdefault("deliverable_type", DEFAULT_DELIVERABLE)
    packet.setdefault("acceptance_criteria", list(DEFAULT_CRITERIA))
    turn_budget = data.get("turn_budget")
    return HandoffInput(
        project=message.context_id or caller.owner,
        assignee=agent_id,
        packet=packet,
        parent_task_id=data.get("parent_task_id"),
        display_title=data.get("display_title"),
        turn_budget=int(turn_budget) if isinstance(turn_budget, int | float) else turn_budget,
        idempotency_key=message.message_id,
    )
