"""The GraphQL types of webhooks: the input, a webhook, a new one (with its secret), and a
delivery attempt."""

from __future__ import annotations

import strawberry

from app.api.node import Node
from app.domain.clock import rfc3339
from app.domain.webhooks import Delivery
from app.domain.webhooks import Webhook as DomainWebhook
from app.service import webhooks as service
from app.service import webhooks as webhook_inputs


@strawberry.input(
    description="A webhook: where to POST, and the filters (each one given narrows the events "
    "to those that match it)."
)
class WebhookInput(webhook_inputs.WebhookInput):
    kinds: list[str] | None = strawberry.field(
        default=None, description="Event kinds: created, moved, checkpointed, result, answered."
    )


@strawberry.type(description="A webhook: the events its owner may see, POSTed to its url.")
class Webhook(Node):
    id: strawberry.ID
    url: str
    project: str | None
    task_id: strawberry.ID | None
    assignee: str | None
    kinds: list[str] | None
    description: str | None
    enabled: bool
    disabled_reason: str | None = strawberry.field(description="Why it was disabled.")
    last_cursor: str = strawberry.field(
        description="The cursor of the last event delivered (the log's head at creation)."
    )
    last_error: str | None = strawberry.field(description="The last failed attempt's error.")
    created_at: str
    domain: strawberry.Private[DomainWebhook]

    @classmethod
    def from_domain(cls, webhook: DomainWebhook) -> Webhook:
        f = webhook.filters
        return cls(
            id=strawberry.ID(webhook.id),
            url=webhook.url,
            project=f.project,
            task_id=None if f.task_id is None else strawberry.ID(f.task_id),
            assignee=f.assignee,
            kinds=None if f.kinds is None else list(f.kinds),
            description=webhook.description,
            enabled=webhook.enabled,
            disabled_reason=webhook.disabled_reason,
            last_cursor=str(webhook.last_cursor),
            last_error=webhook.last_error,
            created_at=rfc3339(webhook.created_at),
            domain=webhook,
        )

    @strawberry.field(description="Events matched but not yet delivered.")
    async def pending(self, info: strawberry.Info) -> int:
        return await service.pending(info.context.store, self.domain)


@strawberry.type(description="A webhook just made or given a new secret.")
class NewWebhook:
    webhook: Webhook
    secret: str = strawberry.field(
        description="whsec_ + base64 of the signing key; shown once, never returned again."
    )

    @classmethod
    def from_domain(cls, made: service.NewWebhook) -> NewWebhook:
        return cls(webhook=Webhook.from_domain(made.webhook), secret=made.secret)


@strawberry.type(description="One attempt to deliver one event to a webhook.")
class WebhookDelivery:
    id: strawberry.ID
    event_cursor: str
    attempt: int = strawberry.field(description="1 for the first attempt at this event.")
    status_code: int | None = strawberry.field(description="Null when no answer came.")
    error: str | None = strawberry.field(description="Null for a 2xx.")
    duration_ms: int
    at: str

    @classmethod
    def from_domain(cls, delivery: Delivery) -> WebhookDelivery:
        return cls(
            id=strawberry.ID(str(delivery.id)),
            event_cursor=delivery.event_cursor,
            attempt=delivery.attempt,
            status_code=delivery.status_code,
            error=delivery.error,
            duration_ms=delivery.duration_ms,
            at=rfc3339(delivery.at),
        )
