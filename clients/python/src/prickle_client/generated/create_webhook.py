from .base_model import BaseModel
from .fragments import WebhookFields


class CreateWebhook(BaseModel):
    create_webhook: "CreateWebhookCreateWebhook"


class CreateWebhookCreateWebhook(BaseModel):
    webhook: "CreateWebhookCreateWebhookWebhook"
    secret: str


CreateWebhookCreateWebhookWebhook = WebhookFields
CreateWebhook.model_rebuild()
CreateWebhookCreateWebhook.model_rebuild()
