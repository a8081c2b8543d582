from typing import Optional

from .base_model import BaseModel


class WebhookDeliveries(BaseModel):
    webhook_deliveries: list["WebhookDeliveriesWebhookDeliveries"]


class WebhookDeliveriesWebhookDeliveries(BaseModel):
    id: str
    event_cursor: str
    attempt: int
    status_code: Optional[int]
    error: Optional[str]
    duration_ms: int
    at: str


WebhookDeliveries.model_rebuild()
