"""Tokens in the database: tokens made before migration 0004 keep working and get ids;
only hashes are stored; `last_used_at` is written once a minute per token, not per request."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import event, select, text

from app.domain.errors import Unauthenticated
from app.domain.principals import agent, person
from app.service import admin, auth, credentials
from app.service.auth import credential_for, token_digest
from app.storage.migrate import upgrade
from app.storage.store import Store
from app.storage.tables import TokenRow

AT = "2026-12-01T07:00:00.000000Z"
PERSON = text("INSERT INTO persons (handle, created_at) VALUES ('old', :at)")
OLD_TOKEN = text(  # a token as migration 0003 left the table
    "INSERT INTO tokens (token_sha256, principal_kind, principal_id, created_at) "
    "VALUES (:s, 'person', 'old', :at)"
)


async def test_tokens_made_before_the_migration_keep_working_and_get_ids(
    database_url: str,
) -> None:
    store = Store(database_url)
    try:
        await upgrade(store.engine, "0003")
        async with store.engine.begin() as conn:
            await conn.execute(PERSON, {"at": AT})
            for secret in ("prk_one", "prk_two"):
                await conn.execute(OLD_TOKEN, {"s": token_digest(secret), "at": AT})
        await upgrade(store.engine)
        assert await auth.authenticate(store, "Bearer prk_one") == person("old")
        listed = await credentials.tokens(store, person("old"))
        assert len({t.id for t in listed}) == 2 and all(len(t.id) == 26 for t in listed)
        assert all(t.revoked_at is None and t.expires_at is None for t in listed)
    finally:
        await store.close()


async def test_last_use_is_written_once_a_minute_not_per_request(store: Store) -> None:
    made = await admin.provision_token(store, agent("alice/coder"))
    writes: list[str] = []

    def count(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if statement.lstrip().upper().startswith("UPDATE TOKENS"):
            writes.append(statement)

    event.listen(store.statements_engine, "before_cursor_execute", count)
    try:
        for _ in range(50):
            await credential_for(store, f"Bearer {made.token}")
    finally:
        event.remove(store.statements_engine, "before_cursor_execute", count)
    assert 1 <= len(writes) <= 2  # the first use, and one more if a minute turned meanwhile
    async with store.read() as tx:
        used = (await tx.one(select(TokenRow.__table__.c.last_used_at)))[0]
    assert used is not None and used.endswith(":00.000000Z")


async def test_only_the_hash_is_stored_and_a_revoked_token_is_refused(store: Store) -> None:
    made = await admin.provision_token(store, person("alice"))
    assert await auth.authenticate(store, f"Bearer {made.token}") == person("alice")
    async with store.read() as tx:
        stored = [tuple(r) for r in await tx.rows(select(TokenRow.__table__))]
    assert made.token not in str(stored)
    await credentials.revoke_token(store, person("alice"), made.token_info.id)
    with pytest.raises(Unauthenticated, match="revoked"):
        await auth.authenticate(store, f"Bearer {made.token}")
