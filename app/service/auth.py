"""Bearer tokens: only their sha256 is stored; a token names one person or one agent."""

from __future__ import annotations

import hashlib
import secrets

from app.domain.errors import Unauthenticated
from app.domain.principals import Principal
from app.storage.store import Store, Tx

TOKEN_PREFIX = "prk_"
_known: dict[str, Principal] = {}  # tokens are never revoked, so a hit stays true


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


async def issue(tx: Tx, principal: Principal, at: str) -> str:
    token = new_token()
    await tx.tokens.put(token_digest(token), principal.kind, principal.id, at)
    return token


async def authenticate(store: Store, authorization: str | None) -> Principal:
    """The principal behind an `Authorization: Bearer <token>` value."""
    if not authorization:
        raise Unauthenticated("a bearer token is required (Authorization: Bearer <token>)")
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthenticated("the Authorization header must be 'Bearer <token>'")
    digest = token_digest(token.strip())
    key = f"{store.url}|{digest}"
    if key in _known:
        return _known[key]
    async with store.read() as tx:
        found = await tx.tokens.principal_for(digest)
    if found is None:
        raise Unauthenticated("the bearer token is not valid")
    _known[key] = Principal(*found)
    return _known[key]
