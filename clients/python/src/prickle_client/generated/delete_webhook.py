from .base_model import BaseModel


class DeleteWebhook(BaseModel):
    delete_webhook: bool
