
from .base_model import BaseModel


class Tokens(BaseModel):
    tokens: list["TokensTokens"]


class TokensTokens(BaseModel):
    id: str
    principal: str
    label: str | None
    created_at: str
    last_used_at: str | None
    expires_at: str | None
    revoked_at: str | None


Tokens.model_rebuild()
