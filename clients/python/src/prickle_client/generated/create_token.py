from typing import Optional

from .base_model import BaseModel


class CreateToken(BaseModel):
    create_token: "CreateTokenCreateToken"


class CreateTokenCreateToken(BaseModel):
    token_info: "CreateTokenCreateTokenTokenInfo"
    token: str


class CreateTokenCreateTokenTokenInfo(BaseModel):
    id: str
    principal: str
    label: Optional[str]
    created_at: str
    last_used_at: Optional[str]
    expires_at: Optional[str]
    revoked_at: Optional[str]


CreateToken.model_rebuild()
CreateTokenCreateToken.model_rebuild()
