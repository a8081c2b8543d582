"""Webhooks: the verbs a principal uses on its own webhooks.

Any principal may register webhooks; each is sent the events its owner may see, judged at
delivery time (app.service.webhook_delivery). A new webhook starts at the head of the log:
it is sent the events committed after its creation. The secret is returned only by
`create_webhook` and `rotate_webhook_secret`.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from app.domain import shapes
from app.domain.clock import new_id, now
from app.domain.errors import InvalidInput, NotFound
from app.domain.principals import Principal, check_agent_id, check_project
from app.domain.webhooks import (
    Delivery,
    Webhook,
    WebhookFilters,
    check_kinds,
    check_secret,
    new_secret,
)
from app.service.inputs import Input
from app.service.webhook_urls import check_url, private_allowed
from app.storage import webhook_reads
from app.storage.store import Store
from app.storage.tx import Tx

__all__ = [
    "NewWebhook",
    "WebhookInput",
    "create_webhook",
    "delete_webhook",
    "enable_webhook",
    "on_change",
    "pending",
    "rotate_webhook_secret",
    "webhook_deliveries",
    "webhooks_of",
]

MAX_DESCRIPTION = 1000
MAX_DELIVERIES_PAGE = 1000
MAX_PUSH_TOKEN = 1000


@dataclass
class WebhookInput(Input):
    """What `create_webhook` takes: the URL and the filters (each one given narrows)."""

    url: str
    project: str | None = None
    task_id: str | None = None
    assignee: str | None = None
    kinds: list[str] | None = None
    description: str | None = None

    def filters(self) -> WebhookFilters:
        return WebhookFilters(
            project=None if self.project is None else check_project(self.project),
            task_id=None if self.task_id is None else shapes.check("task_id", self.task_id),
            assignee=None if self.assignee is None else check_agent_id(self.assignee, "assignee"),
            kinds=check_kinds(self.kinds),
        )


@dataclass(frozen=True)
class NewWebhook:
    webhook: Webhook
    secret: str  # shown once


# Wake-ups: the delivering loop of this process learns of webhooks made or enabled here.

_listeners: weakref.WeakKeyDictionary[Store, list[Callable[[], None]]] = weakref.WeakKeyDictionary()


def on_change(store: Store, listener: Callable[[], None]) -> Callable[[], None]:
    """Call `listener` after each commit that gives a webhook something to deliver; returns
    the function that stops it."""
    _listeners.setdefault(store, []).append(listener)
    return lambda: _listeners.get(store, []).remove(listener)


def _changed(store: Store) -> None:
    for listener in list(_listeners.get(store, [])):
        listener()


async def _own(tx: Tx, actor: Principal, webhook_id: str) -> Webhook:
    found = await tx.webhooks.get(webhook_id)
    if found is None or found.owner != actor:
        raise NotFound(f"no webhook {webhook_id} of yours")
    return found


async def create_webhook(
    store: Store,
    actor: Principal,
    inp: WebhookInput,
    allow_private: bool | None = None,
    payload: str = "task.event",
    push_token: str | None = None,
    secret: str | None = None,
    push_auth: str | None = None,
) -> NewWebhook:
    """A webhook of the caller's, sent the events committed from now on; `payload` "a2a":
    an A2A push notification config's (with its token, `push_token`, the signing `secret`
    its client chose, if it did, and the `Authorization` header to send, `push_auth`)."""
    if push_token is not None and len(push_token) > MAX_PUSH_TOKEN:
        raise InvalidInput(f"token: at most {MAX_PUSH_TOKEN} characters")
    filters = inp.filters()
    if inp.description is not None and len(inp.description) > MAX_DESCRIPTION:
        raise InvalidInput(f"description: at most {MAX_DESCRIPTION} characters")
    allowed = private_allowed() if allow_private is None else allow_private
    url = await check_url(inp.url, allowed)
    secret = new_secret() if secret is None else check_secret(secret)
    async with store.write() as tx:
        head = await tx.events.last_seq()
        made = Webhook(
            id=new_id(),
            owner=actor,
            url=url,
            filters=filters,
            description=inp.description,
            secret=secret,
            enabled=True,
            disabled_reason=None,
            last_cursor=head,
            read_to=head,
            last_error=None,
            failures=0,
            failing_since=None,
            next_attempt_at=None,
            created_at=now(),
            payload=payload,
            push_token=push_token,
            push_auth=push_auth,
        )
        await tx.webhooks.insert(made)
    _changed(store)
    return NewWebhook(made, secret)


async def webhooks_of(store: Store, actor: Principal) -> list[Webhook]:
    async with store.read() as tx:
        return await tx.webhooks.of(actor)


async def pending(store: Store, webhook: Webhook) -> int:
    """Events matched but not yet delivered to the webhook."""
    async with store.read() as tx:
        return await webhook_reads.pending(tx, webhook)


async def webhook_deliveries(
    store: Store, actor: Principal, webhook_id: str, first: int, after: int | None
) -> Sequence[Delivery]:
    """The webhook's delivery attempts, oldest first, after the attempt `after`."""
    if not 0 <= first <= MAX_DELIVERIES_PAGE:
        raise InvalidInput(f"first: must be between 0 and {MAX_DELIVERIES_PAGE}, not {first}")
    async with store.read() as tx:
        await _own(tx, actor, webhook_id)
        return await tx.webhooks.deliveries(webhook_id, first, after)


async def delete_webhook(store: Store, actor: Principal, webhook_id: str) -> bool:
    async with store.write() as tx:
        await _own(tx, actor, webhook_id)
        return await tx.webhooks.delete(webhook_id)


async def enable_webhook(store: Store, actor: Principal, webhook_id: str) -> Webhook:
    """Enabled again, continuing from the first undelivered event: nothing is skipped."""
    async with store.write() as tx:
        await _own(tx, actor, webhook_id)
        await tx.webhooks.change(
            webhook_id,
            enabled=True,
            disabled_reason=None,
            failures=0,
            failing_since=None,
            next_attempt_at=None,
        )
        changed = await _own(tx, actor, webhook_id)
    _changed(store)
    return changed


async def rotate_webhook_secret(store: Store, actor: Principal, webhook_id: str) -> NewWebhook:
    """A new secret, shown once; deliveries from now on are signed with it."""
    secret = new_secret()
    async with store.write() as tx:
        await _own(tx, actor, webhook_id)
        await tx.webhooks.change(webhook_id, secret=secret)
        changed = await _own(tx, actor, webhook_id)
    return NewWebhook(changed, secret)
