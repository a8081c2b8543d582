"""Webhooks (section 5 of the protocol): what a webhook is, what it is sent, how it is signed.

A webhook is a durable reader of the event log with its own cursor: `read_to`, the seq up
to which the log has been judged for it, and `last_cursor`, the last event delivered. Both
advance only after the receiver answered 2xx (events that do not match move `read_to`).
The body and headers follow the Standard Webhooks specification; the signature is
HMAC-SHA256 keyed with the base64-decoded part of the secret after `whsec_`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
from collections.abc import Container, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from app.domain.errors import InvalidInput
from app.domain.events import FIELDS, KINDS, Event
from app.domain.principals import Principal
from app.domain.task import Task
from app.domain.visibility import sees

SECRET_PREFIX = "whsec_"
SECRET_BYTES = 24
BACKOFF_SECONDS = (5.0, 30.0, 120.0, 600.0, 3600.0)  # then hourly: the last one repeats
GIVE_UP_SECONDS = 24 * 3600.0
# a webhook body's event: the log's fields but the task's version and the event's note (the
# task rides in the body whole), after the event's cursor
EVENT_FIELDS = ("cursor", *(name for name in FIELDS if name not in ("version", "note")))


@dataclass(frozen=True)
class WebhookFilters:
    """Each filter given narrows the events to those that match it."""

    project: str | None = None
    task_id: str | None = None
    assignee: str | None = None
    kinds: tuple[str, ...] | None = None

    def match(self, event: Event) -> bool:
        return (
            (self.task_id is None or event.task_id == self.task_id)
            and (self.project is None or event.project == self.project)
            and (self.assignee is None or event.task.get("assignee") == self.assignee)
            and (self.kinds is None or event.kind in self.kinds)
        )


@dataclass(frozen=True)
class Webhook:
    id: str
    owner: Principal
    url: str
    filters: WebhookFilters
    description: str | None
    secret: str
    enabled: bool
    disabled_reason: str | None
    last_cursor: int
    read_to: int
    last_error: str | None
    failures: int  # consecutive failed attempts of the event now being delivered
    failing_since: datetime | None
    next_attempt_at: datetime | None
    created_at: datetime
    payload: str = "task.event"  # or "a2a": an A2A push notification (app/a2a/inbound)
    push_token: str | None = None  # an A2A push config's token, sent back with each
    # an A2A push config's Authorization header (`Bearer …`, `Basic …`), sent with each;
    # kept out of the repr, so that no log line shows it
    push_auth: str | None = field(default=None, repr=False)

    @property
    def push_scheme(self) -> str | None:
        """The scheme of `push_auth` (`Bearer`, `Basic`), which may be shown; its
        credentials never are."""
        return None if self.push_auth is None else self.push_auth.split(" ", 1)[0]


@dataclass(frozen=True)
class Delivery:
    """One attempt to deliver one event to one webhook."""

    id: int
    webhook_id: str
    event_cursor: str
    attempt: int
    status_code: int | None
    error: str | None
    duration_ms: int
    at: datetime


def check_kinds(kinds: Sequence[str] | None) -> tuple[str, ...] | None:
    if kinds is None:
        return None
    if not kinds:  # it would match no event: most likely a mistake for "every kind"
        raise InvalidInput(
            "kinds: an empty list matches no event; omit kinds to be sent every kind"
        )
    for kind in kinds:
        if kind not in KINDS or kind == "snapshot":
            raise InvalidInput(f"kinds: {kind!r} is not an event kind ({', '.join(KINDS[1:])})")
    return tuple(dict.fromkeys(kinds))


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(os.urandom(SECRET_BYTES)).decode()


def check_secret(secret: str) -> str:
    """A secret a client chose (an A2A push config's): `whsec_` and the base64 of at least
    SECRET_BYTES bytes, as ours are; InvalidInput otherwise."""
    try:
        key = base64.b64decode(secret.removeprefix(SECRET_PREFIX), validate=True)
    except ValueError:
        key = b""
    if not secret.startswith(SECRET_PREFIX) or len(key) < SECRET_BYTES or len(secret) > 100:
        raise InvalidInput(
            f"secret: {SECRET_PREFIX} and the base64 of {SECRET_BYTES} to 70 random bytes"
        )
    return secret


def message_id(webhook_id: str, seq: int) -> str:
    """The `webhook-id` of one event to one webhook: the same on every retry."""
    return f"{webhook_id}_{seq}"


def sign(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """The `webhook-signature` header's value."""
    key = base64.b64decode(secret.removeprefix(SECRET_PREFIX))
    signed = f"{msg_id}.{timestamp}.".encode() + body
    digest = hmac.new(key, signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def body_of(event: Event, task: Task, timestamp: str) -> bytes:
    """The POST body: the event's TaskEvent fields and `task` as `as_protocol` gives it."""
    data = {name: getattr(event, name) for name in EVENT_FIELDS}
    data["task"] = task.to_protocol()
    document = {"type": "task.event", "timestamp": timestamp, "data": data}
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode()


def wanted(
    webhook: Webhook, event: Event, task_now: Task | None, member_of: Container[str]
) -> bool:
    """Whether the webhook is sent the event: it matches every filter and the owner sees the
    task as it is now (the delivery time), as HTTP `task_events` judges it."""
    return (
        task_now is not None
        and webhook.filters.match(event)
        and sees(webhook.owner, task_now, member_of)
    )


def backoff(failures: int, schedule: Sequence[float] = BACKOFF_SECONDS) -> float:
    """Seconds to wait after the `failures`-th consecutive failure (1 for the first)."""
    return schedule[min(failures, len(schedule)) - 1]
