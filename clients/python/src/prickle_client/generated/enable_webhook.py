from .base_model import BaseModel
from .fragments import WebhookFields


class EnableWebhook(BaseModel):
    enable_webhook: "EnableWebhookEnableWebhook"


EnableWebhookEnableWebhook = WebhookFields
EnableWebhook.model_rebuild()
