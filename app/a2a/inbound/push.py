"""A2A push notifications, through Prickle's webhooks: a push notification config is a
webhook of the caller's on one task whose payload is `a2a` (its durable cursor, retries,
SSRF guard and Standard Webhooks signature are every webhook's: app/service/
webhook_delivery.py). Each event of the task is POSTed as an A2A StreamResponse holding the
task as the event left it (its status, artifacts and `metadata["prickle"]`, the event's
cursor included), with the config's token as `X-A2A-Notification-Token` and its
`authentication` (A2A v1.0 section 4.3.3: `Bearer` or `Basic`) as `Authorization`.

The Standard Webhooks signing secret is not the config's `credentials`: the client asks for
one in the request's `Prickle-Webhook-Secret` header, else one is made, and answered once in
the response's `Prickle-Webhook-Secret` header. (A config of the first release,
`authentication: {scheme: "standard-webhooks", credentials: "whsec_…"}`, still asks for its
secret that way: deprecated.)"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from a2a.types import AuthenticationInfo, StreamResponse, TaskPushNotificationConfig
from a2a.utils.errors import InvalidParamsError
from google.protobuf import json_format

from app.a2a.inbound import tasks
from app.domain.errors import InvalidInput
from app.domain.events import Event
from app.domain.principals import Principal
from app.domain.task import Task
from app.domain.webhooks import Webhook, check_secret

PAYLOAD = "a2a"
SECRET_HEADER = "prickle-webhook-secret"  # the signing secret: asked for, or made and shown
SIGNING = "standard-webhooks"  # deprecated: a scheme whose credentials were the secret
SCHEMES = {"bearer": "Bearer", "basic": "Basic"}  # RFC 9110: schemes are case-insensitive
MAX_CREDENTIALS = 2000
TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*")  # RFC 9110's token68, what both schemes take


@dataclass(frozen=True)
class Asked:
    """What a config asks for: the Authorization header to send, and the signing secret."""

    authorization: str | None
    secret: str | None


def asked(wanted: TaskPushNotificationConfig, secret_header: str | None) -> Asked:
    """The config's `authentication` read: `Bearer` or `Basic` with credentials (token68);
    InvalidParams otherwise, saying why. The signing secret: the request's header's."""
    secret = None if secret_header is None else _secret(secret_header.strip())
    if not wanted.HasField("authentication"):
        return Asked(None, secret)
    auth = wanted.authentication
    scheme, credentials = auth.scheme.strip(), auth.credentials
    if scheme.lower() == SIGNING:  # the first release's way of asking for the secret
        return Asked(None, _secret(credentials) if credentials else secret)
    if scheme.lower() not in SCHEMES:
        shown = repr(scheme[:40]) if scheme else "empty"
        raise InvalidParamsError(
            message=f"authentication.scheme: Bearer or Basic, not {shown} (the signing "
            "secret goes in the Prickle-Webhook-Secret header)"
        )
    if not credentials:
        raise InvalidParamsError(message=f"authentication.credentials: required with {scheme}")
    if len(credentials) > MAX_CREDENTIALS or not TOKEN68.fullmatch(credentials):
        raise InvalidParamsError(
            message=f"authentication.credentials: a token68 (letters, digits, -._~+/ and "
            f"trailing =) of at most {MAX_CREDENTIALS} characters"
        )
    return Asked(f"{SCHEMES[scheme.lower()]} {credentials}", secret)


def _secret(secret: str) -> str:
    try:
        return check_secret(secret)
    except InvalidInput as error:  # said as invalid params
        raise InvalidParamsError(message=f"{SECRET_HEADER}: {error}") from None


def body(event: Event, task: Task, timestamp: str, owner: Principal) -> bytes:
    shown = tasks.a2a_task(task, owner, note=event.note, cursor=event.cursor)
    document = json_format.MessageToDict(StreamResponse(task=shown))
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode()


def config(webhook: Webhook) -> TaskPushNotificationConfig:
    """The webhook as an A2A push notification config: its `authentication` the scheme
    alone (the credentials are never shown again)."""
    shown = TaskPushNotificationConfig(
        id=webhook.id,
        task_id=webhook.filters.task_id or "",
        url=webhook.url,
        token=webhook.push_token or "",
    )
    scheme = webhook.push_scheme
    if scheme is not None:
        shown.authentication.CopyFrom(AuthenticationInfo(scheme=scheme))
    return shown
