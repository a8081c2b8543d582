"""An agent's A2A card: its name, its skills (the capabilities it registered), its two
interfaces (JSON-RPC at the base, HTTP+JSON under it), streaming, and the bearer scheme
(a Prickle token)."""

from __future__ import annotations

from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a.utils.constants import PROTOCOL_VERSION_CURRENT, TransportProtocol

SCHEME = "prickle_token"


def agent_card(agent_id: str, base_url: str, capabilities: list[tuple[str, str]]) -> AgentCard:
    """The card of `agent_id`, served at `base_url` (`{server}/a2a/{owner}/{agent}`)."""
    owner, name = agent_id.split("/", 1)
    return AgentCard(
        name=agent_id,
        description=(
            f"{name}, an agent of {owner} on a Prickle task server: a message hands it a task"
            " (the owner's gate decides where it lands); the task's exact state, waitingOn,"
            ' version and allowedVerbs ride in metadata["prickle"].'
        ),
        supported_interfaces=[
            _interface(base_url, TransportProtocol.JSONRPC),
            _interface(base_url, TransportProtocol.HTTP_JSON),
        ],
        provider=AgentProvider(organization=owner, url=base_url),
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        security_schemes={
            SCHEME: SecurityScheme(
                http_auth_security_scheme=HTTPAuthSecurityScheme(
                    scheme="bearer",
                    bearer_format="Prickle token",
                    description="a token of the Prickle server (prickle token create)",
                )
            )
        },
        security_requirements=[SecurityRequirement(schemes={SCHEME: StringList()})],
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain", "application/json"],
        skills=[_skill(kind, skill) for kind, skill in capabilities] or [_any_task()],
    )


def _interface(url: str, binding: TransportProtocol) -> AgentInterface:
    return AgentInterface(
        url=url, protocol_binding=binding.value, protocol_version=PROTOCOL_VERSION_CURRENT
    )


def _skill(kind: str, name: str) -> AgentSkill:
    return AgentSkill(
        id=f"{kind}:{name}",
        name=name,
        description=f"the capability {kind} {name!r}, as the agent registered it",
        tags=[kind],
    )


def _any_task() -> AgentSkill:
    return AgentSkill(
        id="task",
        name="task",
        description="any task handed to it: the message's text is the task",
        tags=["task"],
    )
