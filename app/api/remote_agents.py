"""The GraphQL type of a remote A2A agent (its credential is never shown)."""

from __future__ import annotations

import strawberry

from app.api.node import Node
from app.domain.remote_agents import RemoteAgent as DomainRemoteAgent
from app.service.nodes import REMOTE_AGENT


@strawberry.type(
    description="An agent of the caller's that lives elsewhere and speaks A2A: the tasks "
    "routed to it are sent to it, and its moves are made on its behalf (docs/a2a.md)."
)
class RemoteAgent(Node):
    id: strawberry.ID = strawberry.field(
        description="Its node id: `remote_agent:` and its agent id (which is the agent's own "
        "node id, a PrincipalInfo)."
    )
    agent_id: str
    card_url: str
    has_credential: bool = strawberry.field(
        description="Whether a credential is sent to it (the credential is never shown)."
    )
    created_at: str

    @classmethod
    def from_domain(cls, agent: DomainRemoteAgent) -> RemoteAgent:
        return cls(
            id=strawberry.ID(REMOTE_AGENT + agent.agent_id),
            agent_id=agent.agent_id,
            card_url=agent.card_url,
            has_credential=agent.credential is not None,
            created_at=agent.created_at,
        )
