
from .base_model import BaseModel


class CreateToken(BaseModel):
    create_token: "CreateTokenCreateToken"


class CreateTokenCreateToken(BaseModel):
    token_info: "CreateTokenCreateTokenTokenInfo"
    token: str


class CreateTokenCreateTokenTokenInfo(BaseModel):
    id: str
    principal: str
    label: str | None
    created_at: str
    last_used_at: str | None
    expires_at: str | None
    revoked_at: str | None


CreateToken.model_rebuild()
CreateTokenCreateToken.model_rebuild()
