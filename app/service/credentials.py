"""The credentials verbs: `tokens`, `create_token`, `revoke_token`; and `revoke_all`.

A person manages its own tokens and its agents'; an agent only its own. A token another
principal holds is `not_found` to the caller, exactly as if it were absent. A revocation
takes effect on every process from the moment its transaction commits (the bearer
tokens' `Credentials` says how), and closes the WebSocket connections the token opened (the
API's WebSocket handlers).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.domain.clock import now, rfc3339
from app.domain.errors import Conflict, Forbidden, InvalidInput, NotFound
from app.domain.principals import Principal, check_agent_id
from app.domain.tokens import TokenInfo, check_expires_in, check_label
from app.service.auth import NewToken, announce_revoked, issue
from app.storage.store import Store
from app.storage.tx import Tx

TOKEN_ID = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}$")  # app.domain.clock.new_id's alphabet


async def tokens(store: Store, actor: Principal) -> list[TokenInfo]:
    """The caller's tokens, and for a person its agents' too, oldest first."""
    async with store.read() as tx:
        return await tx.tokens.of(actor.id, with_agents=actor.is_person)


async def create_token(
    store: Store,
    actor: Principal,
    agent: str | None = None,
    label: str | None = None,
    expires_in_seconds: int | None = None,
) -> NewToken:
    """A new token for the caller itself, or (a person) for one of its agents."""
    label = check_label(label)
    expires_in_seconds = check_expires_in(expires_in_seconds)
    principal = _holder(actor, agent)
    async with store.write() as tx:
        if not principal.is_person and not await tx.principals.agent_exists(principal.id):
            raise NotFound(f"no agent {principal.id}")
        if await tx.erasures.contains(principal.id):
            raise Conflict(f"{principal.id} was erased: it gets no new token")
        return await issue(tx, principal, now(), label, expires_in_seconds)


def _holder(actor: Principal, agent: str | None) -> Principal:
    """Who the new token names: the caller, or the agent it names if the caller owns it."""
    if agent is None:
        return actor
    check_agent_id(agent, "agent")
    if agent == actor.id:
        return actor
    if not actor.is_person:
        raise Forbidden("an agent creates tokens for itself only")
    if not actor.acts_for(agent):
        raise Forbidden(f"{actor.id} does not own {agent}")
    return Principal("agent", agent)


async def revoke_token(store: Store, actor: Principal | None, token_id: str) -> TokenInfo:
    """Revoke a token, by its principal or that principal's owner (`actor` None: the
    operator, `prickle token revoke`, who may revoke any). Revoking a revoked token
    changes nothing and answers it as it is."""
    check_token_id(token_id)
    async with store.write() as tx:
        found = await tx.tokens.get(token_id)
        if found is None or (actor is not None and not found.manageable_by(actor)):
            raise NotFound(f"no token {token_id}")
        revoked = await tx.tokens.revoke([token_id], rfc3339(now()))
        info = await tx.tokens.get(token_id) or found
    announce_revoked(store, revoked)
    return info


async def revoke_all(tx: Tx, principal_ids: Sequence[str], at: str) -> list[str]:
    """Revoke every live token of these principals inside the caller's transaction; the
    ids revoked. Once that transaction commits, call
    `app.service.auth.announce_revoked(store, ids)`: this process then forgets the tokens
    and closes their WebSocket connections (other processes hear of it from the commit)."""
    return await tx.tokens.revoke(await tx.tokens.live_ids_of(principal_ids), at)


def check_token_id(token_id: str) -> str:
    if not isinstance(token_id, str) or not TOKEN_ID.match(token_id):
        raise InvalidInput(f"id: {token_id[:80]!r} is not a token id")
    return token_id
