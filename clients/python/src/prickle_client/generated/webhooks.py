from .base_model import BaseModel
from .fragments import WebhookFields


class Webhooks(BaseModel):
    webhooks: list["WebhooksWebhooks"]


WebhooksWebhooks = WebhookFields
Webhooks.model_rebuild()
