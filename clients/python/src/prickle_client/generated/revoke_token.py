
from .base_model import BaseModel


class RevokeToken(BaseModel):
    revoke_token: "RevokeTokenRevokeToken"


class RevokeTokenRevokeToken(BaseModel):
    id: str
    principal: str
    label: str | None
    created_at: str
    last_used_at: str | None
    expires_at: str | None
    revoked_at: str | None


RevokeToken.model_rebuild()
