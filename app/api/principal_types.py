"""Who calls and who is known, as GraphQL types: principals, agent registrations, tokens,
and erasures."""

from __future__ import annotations

import strawberry

from app.api.node import Node
from app.api.shapes import Capability
from app.domain.principals import Principal as DomainPrincipal
from app.domain.tokens import TokenInfo as DomainTokenInfo
from app.service.erasure import Erasure as DomainErasure
from app.service.erasure import PrincipalInfo as DomainPrincipalInfo


@strawberry.type(description="Who is calling: a person (an owner) or an agent.")
class Principal:
    kind: str
    id: str
    owner: str = strawberry.field(description="The handle the principal answers to.")

    @classmethod
    def from_domain(cls, principal: DomainPrincipal) -> Principal:
        return cls(kind=principal.kind, id=principal.id, owner=principal.owner)


@strawberry.type(description="A person or agent as anyone authenticated sees it.")
class PrincipalInfo(Node):
    kind: str = strawberry.field(description="person | agent")
    id: strawberry.ID = strawberry.field(description="The handle or agent id.")
    owner: str = strawberry.field(description="The handle the principal answers to.")
    capabilities: list[Capability] = strawberry.field(
        description="What the agent offers (none for a person or an erased agent)."
    )
    erased: bool
    created_at: str

    @classmethod
    def from_domain(cls, info: DomainPrincipalInfo) -> PrincipalInfo:
        return cls(
            kind=info.kind,
            id=strawberry.ID(info.id),
            owner=info.owner,
            capabilities=[Capability(kind=k, name=n) for k, n in info.capabilities],
            erased=info.erased,
            created_at=info.created_at,
        )


@strawberry.type
class AgentRegistration:
    agent_id: str
    token: str = strawberry.field(description="Shown once; the server keeps only its hash.")


@strawberry.type(description="A bearer token as its holder and owner see it; never the secret.")
class TokenInfo:
    id: strawberry.ID
    principal: str = strawberry.field(description="The handle or agent id the token names.")
    label: str | None
    created_at: str
    last_used_at: str | None = strawberry.field(description="To the minute.")
    expires_at: str | None
    revoked_at: str | None

    @classmethod
    def from_domain(cls, info: DomainTokenInfo) -> TokenInfo:
        return cls(
            id=strawberry.ID(info.id),
            principal=info.principal,
            label=info.label,
            created_at=info.created_at,
            last_used_at=info.last_used_at,
            expires_at=info.expires_at,
            revoked_at=info.revoked_at,
        )


@strawberry.type(description="A token just made: its facts, and its secret, shown only here.")
class NewToken:
    token_info: TokenInfo
    token: str = strawberry.field(description="Shown once; the server keeps only its hash.")


@strawberry.type(description="What an erasure did.")
class Erasure:
    principal: str = strawberry.field(
        description="The handle or agent id erased (a person's agents were erased with it)."
    )
    erased_at: str
    tokens_revoked: int = strawberry.field(description="Live tokens revoked, agents' included.")
    tasks_marked: int = strawberry.field(
        description="Tasks whose requested_by or result now reads `erased: true`."
    )

    @classmethod
    def from_domain(cls, done: DomainErasure) -> Erasure:
        return cls(
            principal=done.principal,
            erased_at=done.erased_at,
            tokens_revoked=done.tokens_revoked,
            tasks_marked=done.tasks_marked,
        )
