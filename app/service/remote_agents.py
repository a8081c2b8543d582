"""Remote agents: an owner registers an A2A agent that lives elsewhere as one of its agents
(`register_remote_agent`), lists them (`remote_agents`) and removes one
(`remove_remote_agent`). Tasks routed to one are sent to it by app/a2a/outbound, a durable
reader of the log, which makes the moves on the agent's behalf.

The card's URL is checked as a webhook's is (the webhooks' URL guard): http or https, no
credentials in it, and no loopback, private, link-local or otherwise non-global address
unless `prickle serve --allow-private-agents` (PRICKLE_ALLOW_PRIVATE_AGENTS=1); every later
connection is checked again by the same guarded client. The card is fetched at
registration: a URL that does not answer with an agent card is refused. The credential is
sent as `Authorization: Bearer <credential>` and never shown again.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import httpx

from app.domain.clock import now, rfc3339
from app.domain.errors import Conflict, Forbidden, InvalidInput, NotFound
from app.domain.principals import Principal, check_agent_id, check_handle
from app.domain.remote_agents import RemoteAgent
from app.domain.types import JSON
from app.service.erasure import refuse_erased
from app.service.inputs import CapabilityInput, check_capability
from app.service.webhook_urls import check_url, client
from app.settings import BY_NAME, current
from app.storage.store import Store

if TYPE_CHECKING:
    from a2a.types.a2a_pb2 import AgentCard

# named in a refusal
ALLOWED_BY = f"--allow-private-agents ({BY_NAME['allow_private_agents'].variable}=1)"
CARD_PATH = "/.well-known/agent-card.json"
CARD_TIMEOUT = 10.0
MAX_CREDENTIAL = 4096
_CREDENTIAL = re.compile(r"^[\x21-\x7e]+$")  # printable ASCII, no spaces: a header's token


def private_allowed() -> bool:
    """Whether remote agents may be on loopback, private or other non-global addresses."""
    return current().allow_private_agents


# Wake-ups: the dispatcher of this process learns of remote agents registered here.

_listeners: weakref.WeakKeyDictionary[Store, list[Callable[[], None]]] = weakref.WeakKeyDictionary()


def on_change(store: Store, listener: Callable[[], None]) -> Callable[[], None]:
    """Call `listener` after each registration; returns the function that stops it."""
    _listeners.setdefault(store, []).append(listener)
    return lambda: _listeners.get(store, []).remove(listener)


def card_address(card_url: str) -> str:
    """Where the card is: the URL itself when it names a JSON file, else the agent's base URL
    with /.well-known/agent-card.json."""
    if urlsplit(card_url).path.endswith(".json"):
        return card_url
    return card_url.rstrip("/") + CARD_PATH


def bearer(credential: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {credential}"} if credential else {}


async def fetch_card(http: httpx.AsyncClient, card_url: str, credential: str | None) -> AgentCard:
    """The remote agent's card; InvalidInput when it does not answer with one. The A2A SDK
    is imported here, not with the server: a server without remote agents never loads it."""
    from a2a.client import A2ACardResolver, AgentCardResolutionError

    resolver = A2ACardResolver(http, card_address(card_url), agent_card_path="")
    try:
        return await resolver.get_agent_card(http_kwargs={"headers": bearer(credential)})
    except AgentCardResolutionError as error:
        raise InvalidInput(f"card_url: no agent card there ({error})"[:500]) from None
    except InvalidInput as error:  # the guard refused an address on the way
        raise InvalidInput(error.message) from None
    except (httpx.HTTPError, ValueError) as error:
        raise InvalidInput(f"card_url: no agent card there ({error})"[:500]) from None


def _owner(actor: Principal) -> str:
    if not actor.is_person:
        raise Forbidden("only a person (an owner) registers remote agents")
    return actor.id


def check_credential(credential: str | None) -> str | None:
    if credential is None:
        return None
    if len(credential) > MAX_CREDENTIAL or not _CREDENTIAL.match(credential):
        raise InvalidInput(
            f"credential: printable ASCII without spaces, at most {MAX_CREDENTIAL} characters"
        )
    return credential


async def register_remote_agent(
    store: Store,
    actor: Principal,
    name: str,
    card_url: str,
    credential: str | None = None,
    capabilities: Sequence[CapabilityInput | JSON] | None = None,
) -> RemoteAgent:
    """Register (or change) `<caller>/<name>` as a remote A2A agent: tasks routed to it from
    now on are sent to it."""
    owner = _owner(actor)
    agent_id = check_agent_id(f"{owner}/{check_handle(name, 'name')}")
    allowed = private_allowed()
    card_url = await check_url(card_url, allowed, ALLOWED_BY)
    credential = check_credential(credential)
    offered = [(c["kind"], c["name"]) for c in map(check_capability, capabilities or [])]
    async with client(allowed, 4, CARD_TIMEOUT, ALLOWED_BY) as http:
        await fetch_card(http, card_url, credential)
    at = rfc3339(now())
    async with store.write() as tx:
        await refuse_erased(tx, agent_id, "register_remote_agent", Conflict)
        await tx.principals.ensure_agent(agent_id, owner, at)
        await tx.principals.set_capabilities(agent_id, offered)
        head = await tx.events.last_seq()
        await tx.remote_agents.put(RemoteAgent(agent_id, owner, card_url, credential, at, head))
        made = await tx.remote_agents.get(agent_id)
    assert made is not None
    for listener in list(_listeners.get(store, [])):
        listener()
    return made


async def remote_agents(store: Store, actor: Principal) -> list[RemoteAgent]:
    """The caller's remote agents."""
    owner = _owner(actor)
    async with store.read() as tx:
        return await tx.remote_agents.of(owner)


async def remove_remote_agent(store: Store, actor: Principal, agent: str) -> bool:
    """Stop sending to the remote agent: it stays an agent; its open tasks wait for the
    owner (reroute or cancel them)."""
    owner = _owner(actor)
    check_agent_id(agent, "agent")
    async with store.write() as tx:
        found = await tx.remote_agents.get(agent)
        if found is None or found.owner != owner:
            raise NotFound(f"no remote agent {agent}")
        return await tx.remote_agents.delete(agent)
