"""Bearer tokens: only their sha256 is stored; a token names one person or one agent.

No request authenticates on a token whose revocation has committed, whoever committed it
(this process, another server, `prickle token revoke`, `prickle erase`): each request proves
what it knows of its token against the database itself, never against an announcement that
may still be on its way.

- On a SQLite file, a process keeps what it has learned of tokens (`Credentials`: a token's
  hash -> its id, the principal it names, its expiry), each entry marked with the file's
  `PRAGMA data_version` read just before the token's row was (`Store.data_version`: it moves
  whenever any other connection commits to the file). A request reads the version (a couple
  of microseconds, no transaction) and uses the entry only while it is unchanged; after any
  commit elsewhere it reads the token's row again, in a read transaction of its own.
- On PostgreSQL there is no such number to read for nothing: every request reads its
  token's row, one statement without BEGIN and COMMIT (`Store.fresh_read`).
- An expired token is refused by the clock.

What holds a token open (a WebSocket connection, a stream over SSE or A2A:
`Holders`) is closed on revocation as this process hears of it: at once for a
revocation it made itself (`announce_revoked`, after the commit); from the event hub for
other processes' (the event hub: a NOTIFY on PostgreSQL, sent by the revoking
transaction; on SQLite a poll of the revocation count), within 2 s.

`last_used_at` is written at most once a minute per token and process: when the token is
used in a later minute than the one this process last recorded for it.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import secrets
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import datetime

from app.domain.clock import new_id, now, rfc3339
from app.domain.errors import Unauthenticated, Unavailable
from app.domain.principals import Principal
from app.domain.tokens import TokenInfo, expiry, minute_of
from app.storage.outage import quietly
from app.storage.repositories.tokens import StoredToken
from app.storage.store import Store
from app.storage.tx import Tx

log = logging.getLogger(__name__)

TOKEN_PREFIX = "prk_"

# What a listener hears: the ids of revoked tokens, or None when some may have been revoked
# unseen (a lost LISTEN connection, another process on SQLite): then it asks the database.
Revoked = frozenset[str] | None


@dataclass(frozen=True)
class Credential:
    """An authenticated token: its id, the principal it names, when it expires, and the
    process's revocation epoch when it was checked (see Credentials.unchanged_since)."""

    token_id: str
    principal: Principal
    expires_at: datetime | None
    epoch: int

    def expired(self, at: datetime) -> bool:
        return self.expires_at is not None and at >= self.expires_at


@dataclass(frozen=True)
class NewToken:
    token_info: TokenInfo
    token: str  # the secret, shown once


@dataclass
class _Known:
    digest: str
    credential: Credential
    used: str | None  # the minute of last use this process recorded
    recorded_until: float = 0.0  # the POSIX time until which `used` is this minute
    version: int | None = None  # the database's data_version before the row was read


class Credentials:
    """This process's cache of one database's tokens, and who hears of revocations."""

    def __init__(self) -> None:
        self.known: dict[str, _Known] = {}  # by the token's sha256
        self.epoch = 0  # counts the revocations heard; a read older than one is not cached
        self.listeners: list[Callable[[Revoked], None]] = []
        self.proofs: dict[str, _Proofs] = {}  # the reads of tokens' rows under way, by hash

    def revoked(self, token_ids: Revoked) -> None:
        """Forget the revoked tokens (all, for None) and tell every listener."""
        self.epoch += 1
        if token_ids is None:
            self.known.clear()
        else:
            for digest in [d for d, k in self.known.items() if k.credential.token_id in token_ids]:
                del self.known[digest]
        for listener in list(self.listeners):
            try:
                listener(token_ids)
            except Exception:
                log.exception("a revocation listener failed")

    def unchanged_since(self, credential: Credential) -> bool:
        """True when no revocation was heard since the credential was checked."""
        return credential.epoch == self.epoch


_credentials: dict[str, Credentials] = {}


def credentials_of(store: Store) -> Credentials:
    """The process's Credentials for the store's database (one per database URL)."""
    found = _credentials.get(store.url)
    if found is None:
        found = _credentials[store.url] = Credentials()
    return found


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


async def issue(
    tx: Tx,
    principal: Principal,
    at: datetime,
    label: str | None = None,
    expires_in_seconds: int | None = None,
) -> NewToken:
    """A new token for the principal, stored as its hash; the secret is in the answer only."""
    token = new_token()
    expires_at = expiry(at, expires_in_seconds)
    info = TokenInfo(
        id=new_id(),
        principal_kind=principal.kind,
        principal=principal.id,
        label=label,
        created_at=rfc3339(at),
        last_used_at=None,
        expires_at=rfc3339(expires_at) if expires_at else None,
        revoked_at=None,
    )
    await tx.tokens.put(token_digest(token), info)
    return NewToken(info, token)


def announce_revoked(store: Store, token_ids: Collection[str]) -> None:
    """Tell this process that the tokens were revoked: call it after the revoking
    transaction committed. (Other processes hear of it from the commit itself.)"""
    if token_ids:
        credentials_of(store).revoked(frozenset(token_ids))


async def authenticate(store: Store, authorization: str | None) -> Principal:
    """The principal behind an `Authorization: Bearer <token>` value."""
    return (await credential_for(store, authorization)).principal


async def credential_for(store: Store, authorization: str | None) -> Credential:
    """The live token behind an `Authorization: Bearer <token>` value; unauthenticated
    when there is none, or it is unknown, revoked or expired."""
    digest = token_digest(_bearer(authorization))
    credentials = credentials_of(store)
    version = store.data_version()  # before the row is read, if it is
    known = credentials.known.get(digest)
    if known is None or version is None or known.version != version:
        known = await _proved(store, credentials, digest, version)
    at = now()
    if known.credential.expired(at):
        credentials.known.pop(digest, None)
        raise Unauthenticated("the bearer token has expired")
    await _record_use(store, known, at)
    return known.credential


def _bearer(authorization: str | None) -> str:
    if not authorization:
        raise Unauthenticated("a bearer token is required (Authorization: Bearer <token>)")
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthenticated("the Authorization header must be 'Bearer <token>'")
    return token.strip()


@dataclass
class _Proofs:
    """The reads of one token's row, one at a time (`lock`): a request that arrives while
    one is under way waits for it to end, then takes the answer of a read that began after
    it arrived, if one did, or begins one. So however many requests carry a token at once,
    it costs a read at a time, and each request's answer is read after it arrived."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    begun: int = 0  # reads begun
    last: tuple[int, _Known | Exception] | None = None  # the last read: its number, its answer
    waiting: int = 0


async def _proved(
    store: Store, credentials: Credentials, digest: str, version: int | None
) -> _Known:
    """The token as its row stands now (`_look_up`), read after this call began."""
    proofs = credentials.proofs.get(digest)
    if proofs is None:
        proofs = credentials.proofs[digest] = _Proofs()
    arrived = proofs.begun
    proofs.waiting += 1
    try:
        async with proofs.lock:
            if proofs.last is None or proofs.last[0] <= arrived:
                proofs.begun += 1
                number = proofs.begun
                try:
                    answer: _Known | Exception = await _look_up(
                        store, credentials, digest, version, credentials.known.get(digest)
                    )
                except (Unauthenticated, Unavailable) as error:
                    answer = error
                proofs.last = (number, answer)
            answer = proofs.last[1]
    finally:
        proofs.waiting -= 1
        if not proofs.waiting and credentials.proofs.get(digest) is proofs:
            del credentials.proofs[digest]
    if isinstance(answer, Exception):
        raise answer
    return answer


async def _look_up(
    store: Store, credentials: Credentials, digest: str, version: int | None, was: _Known | None
) -> _Known:
    """The token's row, read now in a transaction of its own (begun after `version` was
    read, so it sees at least what the version stands for); kept, marked with `version`,
    unless a revocation was heard meanwhile. A token known before keeps its last use."""
    epoch = credentials.epoch
    async with store.fresh_read() as tx:
        stored = await tx.tokens.by_digest(digest)
    if stored is None or not hmac.compare_digest(stored.token_sha256, digest):
        credentials.known.pop(digest, None)
        raise Unauthenticated("the bearer token is not valid")
    if stored.info.revoked_at is not None:
        credentials.known.pop(digest, None)
        raise Unauthenticated("the bearer token was revoked")
    credential = _credential(stored, epoch)
    if was is not None:  # seen before: what this process recorded of its use stays
        known = was
        known.credential = credential
    else:
        known = _Known(digest, credential, stored.info.last_used_at)
    known.version = version
    if credentials.epoch == epoch:  # no revocation was heard while reading: keep it
        credentials.known[digest] = known
    else:
        credentials.known.pop(digest, None)
    return known


def _credential(stored: StoredToken, epoch: int) -> Credential:
    info = stored.info
    expires_at = datetime.fromisoformat(info.expires_at) if info.expires_at else None
    return Credential(info.id, Principal(info.principal_kind, info.principal), expires_at, epoch)


async def _record_use(store: Store, known: _Known, at: datetime) -> None:
    if at.timestamp() < known.recorded_until:  # within the minute already recorded
        return
    start = minute_of(at)
    minute = rfc3339(start)
    if known.used is not None and known.used >= minute:
        known.recorded_until = start.timestamp() + 60
        return
    known.used = minute
    try:
        async with store.write() as tx:
            await tx.tokens.touch(known.credential.token_id, minute)
    except Exception as error:  # a missed minute of last use is no reason to refuse the request
        quietly(log, "recording a token's last use failed", error)


async def revoked_among(store: Store, token_ids: Collection[str]) -> list[str]:
    """Those of the tokens that are revoked, expired, or gone (asked of the database)."""
    if not token_ids:
        return []
    async with store.read() as tx:
        return await tx.tokens.revoked_among(list(token_ids), rfc3339(now()))
