"""A2A push notifications, through Prickle's webhooks: a push notification config is a
webhook of the caller's on one task whose payload is `a2a` (its durable cursor, retries,
SSRF guard and Standard Webhooks signature are every webhook's: app/service/
webhook_delivery.py). Each event of the task is POSTed as an A2A StreamResponse holding the
task as the event left it (its status, artifacts and `metadata["prickle"]`, the event's
cursor included), with the config's token as `X-A2A-Notification-Token`."""

from __future__ import annotations

import json

from a2a.types import AuthenticationInfo, StreamResponse, TaskPushNotificationConfig
from google.protobuf import json_format

from app.a2a.inbound import tasks
from app.domain.events import Event
from app.domain.principals import Principal
from app.domain.task import Task
from app.domain.webhooks import Webhook

PAYLOAD = "a2a"
SCHEME = "standard-webhooks"  # the secret each notification is signed with


def body(event: Event, task: Task, timestamp: str, owner: Principal) -> bytes:
    shown = tasks.a2a_task(task, owner, note=event.note, cursor=event.cursor)
    document = json_format.MessageToDict(StreamResponse(task=shown))
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode()


def config(webhook: Webhook, secret: str | None = None) -> TaskPushNotificationConfig:
    """The webhook as an A2A push notification config; with its signing secret (as its
    `authentication`) only when it was just made."""
    shown = TaskPushNotificationConfig(
        id=webhook.id,
        task_id=webhook.filters.task_id or "",
        url=webhook.url,
        token=webhook.push_token or "",
    )
    if secret is not None:
        shown.authentication.CopyFrom(AuthenticationInfo(scheme=SCHEME, credentials=secret))
    return shown
