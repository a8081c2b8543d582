"""Bearer tokens: only their hash is stored, and each names one person or one agent."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import select

from app.domain.errors import Unauthenticated
from app.domain.principals import Principal, agent, person
from app.service import admin, auth
from app.service.auth import token_digest
from app.service.credentials import revoke_token
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


async def test_requests_on_one_token_at_once_share_reads_each_begun_after_they_arrived(
    store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """However many requests carry a token at once, its row is read one time at a time;
    a request that arrives while a read is under way is answered by a read begun after it
    arrived: one arriving after a revocation committed is refused, even while a read begun
    before the revocation is still under way."""
    made = await admin.provision_token(store, person("alice"))
    header = f"Bearer {made.token}"
    reads: list[asyncio.Event] = []
    looking_up = auth._look_up

    async def paused(*args):  # type: ignore[no-untyped-def]
        go = asyncio.Event()
        try:
            return await looking_up(*args)
        finally:  # read: held until the test lets it answer
            reads.append(go)
            await go.wait()

    monkeypatch.setattr(auth, "_look_up", paused)
    # every request reads the row, as on PostgreSQL
    monkeypatch.setattr(store, "data_version", lambda: None)
    early = [asyncio.create_task(auth.authenticate(store, header)) for _ in range(10)]
    await _until(lambda: len(reads) == 1)
    later = [asyncio.create_task(auth.authenticate(store, header)) for _ in range(10)]
    await asyncio.sleep(0)
    reads[0].set()  # the first read, begun before the others arrived: it answers the first
    assert await early[0] == person("alice")
    await _until(lambda: len(reads) == 2)  # the next read, for every request that waited
    assert not any(t.done() for t in [*early[1:], *later])
    await revoke_token(store, None, made.token_info.id)
    refused = asyncio.create_task(auth.authenticate(store, header))  # after the revocation
    await asyncio.sleep(0)
    reads[1].set()
    await _until(lambda: len(reads) == 3)
    reads[2].set()
    answers = await asyncio.gather(*early[1:], *later, return_exceptions=True)
    assert all(a == person("alice") for a in answers), answers  # read before the revocation
    with pytest.raises(Unauthenticated, match="revoked"):
        await refused
    assert len(reads) == 3  # 21 requests, 3 reads


async def _until(done) -> None:  # type: ignore[no-untyped-def]
    async with asyncio.timeout(5):
        while not done():
            await asyncio.sleep(0)
