from typing import Optional

from .base_model import BaseModel


class RevokeToken(BaseModel):
    revoke_token: "RevokeTokenRevokeToken"


class RevokeTokenRevokeToken(BaseModel):
    id: str
    principal: str
    label: Optional[str]
    created_at: str
    last_used_at: Optional[str]
    expires_at: Optional[str]
    revoked_at: Optional[str]


RevokeToken.model_rebuild()
