"""Bearer tokens, stored as their sha256, each naming one person or agent.

A revocation committed on PostgreSQL is announced on `TOKENS_CHANNEL` (the revoked ids,
comma-separated) by a NOTIFY sent inside the revoking transaction: every process's hub
hears it when, and only if, the revocation commits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, func, insert, or_, select, update

from app.domain.tokens import TokenInfo
from app.storage.repositories.base import Repository
from app.storage.statements import once
from app.storage.tables import TokenRow, table_of

tokens = table_of(TokenRow)

TOKENS_CHANNEL = "prickle_tokens"
NOTIFY_IDS = 200  # ids per notification: 200 ids of 26 characters stay far below 8000 bytes

_INFO = (
    tokens.c.id,
    tokens.c.principal_kind,
    tokens.c.principal_id,
    tokens.c.label,
    tokens.c.created_at,
    tokens.c.last_used_at,
    tokens.c.expires_at,
    tokens.c.revoked_at,
)
_INSERT = insert(tokens)
_BY_DIGEST = once(  # every request on PostgreSQL (the service's `authenticate`)
    select(tokens.c.token_sha256, *_INFO).where(tokens.c.token_sha256 == bindparam("token_sha256"))
)
_BY_ID = select(*_INFO).where(tokens.c.id == bindparam("id"))
_REVOKE = (
    update(tokens)
    .where(tokens.c.id == bindparam("token_id"), tokens.c.revoked_at.is_(None))
    .values(revoked_at=bindparam("at"))
)
_TOUCH = (
    update(tokens)
    .where(
        tokens.c.id == bindparam("token_id"),
        or_(tokens.c.last_used_at.is_(None), tokens.c.last_used_at < bindparam("minute")),
    )
    .values(last_used_at=bindparam("minute"))
)
_REVOKED_COUNT = select(func.count()).select_from(tokens).where(tokens.c.revoked_at.isnot(None))


@dataclass(frozen=True)
class StoredToken:
    """A token found by its hash: the hash as stored, and what the token is."""

    token_sha256: str
    info: TokenInfo


def _info(row: Any) -> TokenInfo:
    return TokenInfo(*row)


class Tokens(Repository):
    __slots__ = ()

    async def put(
        self,
        token_sha256: str,
        info: TokenInfo,
    ) -> None:
        row = {
            "token_sha256": token_sha256,
            "id": info.id,
            "principal_kind": info.principal_kind,
            "principal_id": info.principal,
            "label": info.label,
            "created_at": info.created_at,
            "expires_at": info.expires_at,
        }
        await self.tx.conn.execute(_INSERT, row)

    async def by_digest(self, token_sha256: str) -> StoredToken | None:
        """The token whose sha256 this is, if any (revoked and expired ones too)."""
        row = await self.tx.one(_BY_DIGEST, {"token_sha256": token_sha256})
        return StoredToken(row[0], _info(row[1:])) if row else None

    async def get(self, token_id: str) -> TokenInfo | None:
        row = await self.tx.one(_BY_ID, {"id": token_id})
        return _info(row) if row else None

    async def of(self, handle: str, with_agents: bool) -> list[TokenInfo]:
        """The tokens of the principal `handle`, and with `with_agents` of its agents too,
        oldest first (ids sort by creation)."""
        named = tokens.c.principal_id == handle
        if with_agents:  # a handle holds no LIKE wildcard: [a-z0-9-] only
            named = or_(named, tokens.c.principal_id.like(f"{handle}/%"))
        rows = await self.tx.rows(select(*_INFO).where(named).order_by(tokens.c.id))
        return [_info(row) for row in rows]

    async def revoke(self, token_ids: Sequence[str], at: str) -> list[str]:
        """Revoke the tokens not yet revoked among `token_ids`; the ids this revoked. On
        PostgreSQL the revocation is announced to every process when the transaction
        commits."""
        revoked = []
        for token_id in dict.fromkeys(token_ids):
            done = await self.tx.conn.execute(_REVOKE, {"token_id": token_id, "at": at})
            if done.rowcount:
                revoked.append(token_id)
        await self.announce(revoked)
        return revoked

    async def live_ids_of(self, principal_ids: Sequence[str]) -> list[str]:
        """The ids of the tokens not yet revoked of these principals."""
        stmt = select(tokens.c.id).where(
            tokens.c.principal_id.in_(list(principal_ids)), tokens.c.revoked_at.is_(None)
        )
        return [row[0] for row in await self.tx.rows(stmt.order_by(tokens.c.id))]

    async def announce(self, token_ids: Sequence[str]) -> None:
        if self.tx.sqlite:
            return  # one process serves SQLite: the service tells it after the commit
        for start in range(0, len(token_ids), NOTIFY_IDS):
            payload = ",".join(token_ids[start : start + NOTIFY_IDS])
            await self.tx.conn.execute(select(func.pg_notify(TOKENS_CHANNEL, payload)))

    async def touch(self, token_id: str, minute: str) -> None:
        """Record use in `minute`, unless a later (or the same) minute is recorded."""
        await self.tx.conn.execute(_TOUCH, {"token_id": token_id, "minute": minute})

    async def revoked_count(self) -> int:
        """How many tokens were ever revoked: it changes whenever a token is revoked."""
        count: int = (await self.tx.conn.execute(_REVOKED_COUNT)).scalar_one()
        return count

    async def revoked_among(self, token_ids: Sequence[str], at: str) -> list[str]:
        """Those of `token_ids` that are revoked, expired at `at`, or gone."""
        stmt = select(tokens.c.id, tokens.c.revoked_at, tokens.c.expires_at).where(
            tokens.c.id.in_(list(token_ids))
        )
        live = {
            row[0]
            for row in await self.tx.rows(stmt)
            if row[1] is None and (row[2] is None or row[2] > at)
        }
        return [token_id for token_id in token_ids if token_id not in live]
