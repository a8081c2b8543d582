"""Bearer tokens: only their hash is stored, and each names one person or one agent."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.domain.errors import Unauthenticated
from app.domain.principals import Principal, agent, person
from app.service import admin, auth
from app.service.auth import token_digest
from app.storage.tables import TokenRow


async def test_a_created_token_authenticates_as_its_principal(store) -> None:
    token = (await admin.provision_token(store, person("alice"))).token
    assert await auth.authenticate(store, f"Bearer {token}") == Principal("person", "alice")
    assert await auth.authenticate(store, f"bearer   {token}  ") == Principal("person", "alice")


async def test_registering_an_agent_returns_its_id_and_a_token_for_it(store) -> None:
    registration = await admin.register_agent(store, person("alice"), "coder")
    assert registration.agent_id == "alice/coder"
    assert await auth.authenticate(store, f"Bearer {registration.token}") == agent("alice/coder")


async def test_only_the_hash_of_a_token_is_stored(store) -> None:
    token = (await admin.provision_token(store, person("alice"))).token
    async with store.read() as tx:
        stored = [r[0] for r in await tx.rows(select(TokenRow.__table__.c.token_sha256))]
    assert stored == [token_digest(token)]
    assert token not in stored


@pytest.mark.parametrize(
    "header",
    [None, "", "Bearer", "Bearer ", "Basic abc", "prk_not-a-token", "Bearer prk_unknown"],
)
async def test_a_missing_malformed_or_unknown_token_is_unauthenticated(store, header) -> None:
    await admin.provision_token(store, person("alice"))
    with pytest.raises(Unauthenticated) as raised:
        await auth.authenticate(store, header)
    assert raised.value.code == "unauthenticated"
