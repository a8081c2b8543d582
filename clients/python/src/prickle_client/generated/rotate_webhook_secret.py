from .base_model import BaseModel
from .fragments import WebhookFields


class RotateWebhookSecret(BaseModel):
    rotate_webhook_secret: "RotateWebhookSecretRotateWebhookSecret"


class RotateWebhookSecretRotateWebhookSecret(BaseModel):
    webhook: "RotateWebhookSecretRotateWebhookSecretWebhook"
    secret: str


RotateWebhookSecretRotateWebhookSecretWebhook = WebhookFields
RotateWebhookSecret.model_rebuild()
RotateWebhookSecretRotateWebhookSecret.model_rebuild()
