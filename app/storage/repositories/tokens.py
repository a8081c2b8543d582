"""Bearer tokens, stored as their sha256, each naming one person or agent."""

from __future__ import annotations

from sqlalchemy import bindparam, insert, select

from app.storage.repositories.base import Repository
from app.storage.tables import TokenRow, table_of

tokens = table_of(TokenRow)

_INSERT = insert(tokens)
_PRINCIPAL = select(tokens.c.principal_kind, tokens.c.principal_id).where(
    tokens.c.token_sha256 == bindparam("token_sha256")
)


class Tokens(Repository):
    __slots__ = ()

    async def put(self, token_sha256: str, kind: str, principal_id: str, at: str) -> None:
        row = {
            "token_sha256": token_sha256,
            "principal_kind": kind,
            "principal_id": principal_id,
            "created_at": at,
        }
        await self.tx.conn.execute(_INSERT, row)

    async def principal_for(self, token_sha256: str) -> tuple[str, str] | None:
        """(principal kind, principal id) behind the token's sha256, if any."""
        row = await self.tx.one(_PRINCIPAL, {"token_sha256": token_sha256})
        return (row[0], row[1]) if row else None
