"""Bearer tokens as the protocol shows them (`TokenInfo`): never the secret, only its facts.

Who may see or revoke a token: the principal it names, or that principal's owner (a person
sees and revokes its agents' tokens; an agent only its own). Anyone else is told
`not_found`, exactly as if the token did not exist.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from app.domain.errors import InvalidInput
from app.domain.principals import Principal

LABEL_MAX = 100
EXPIRES_IN_MAX = 10 * 366 * 24 * 3600  # ten years, in seconds


@dataclass(frozen=True)
class TokenInfo:
    id: str
    principal_kind: str  # "person" | "agent"
    principal: str  # the handle or agent id the token names
    label: str | None
    created_at: str
    last_used_at: str | None  # to the minute
    expires_at: str | None
    revoked_at: str | None

    def manageable_by(self, actor: Principal) -> bool:
        """The token's own principal, or its agent's owner, sees and revokes it."""
        return actor.acts_for(self.principal)


def check_label(label: str | None) -> str | None:
    if label is None:
        return None
    if not isinstance(label, str) or not 1 <= len(label) <= LABEL_MAX:
        raise InvalidInput(f"label: must be 1 to {LABEL_MAX} characters")
    if not label.isprintable():
        raise InvalidInput("label: must not hold control characters")
    return label


def check_expires_in(seconds: int | None) -> int | None:
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, int):
        raise InvalidInput("expires_in_seconds: must be a whole number of seconds")
    if not 1 <= seconds <= EXPIRES_IN_MAX:
        raise InvalidInput(f"expires_in_seconds: must be between 1 and {EXPIRES_IN_MAX}")
    return seconds


def expiry(at: datetime, seconds: int | None) -> datetime | None:
    return None if seconds is None else at + timedelta(seconds=seconds)


def minute_of(at: datetime) -> datetime:
    """`last_used_at` is kept to the minute: one write a minute per token at most."""
    return at.replace(second=0, microsecond=0)
