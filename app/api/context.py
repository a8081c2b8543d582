"""The per-request context: the store and hub, the caller (authenticated once), loaders.

Over HTTP the caller's token is in the `Authorization` header; over WebSockets it is in
the `connection_init` payload (`{"Authorization": "Bearer <token>"}`), which arrives after
the context is made, so authentication happens on first use: once per request, or once
per WebSocket connection (whose `credential` the WebSocket handler then registers, so that the
connection is closed when its token is revoked).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.websockets import WebSocket

from app.api.loaders import Loaders, create_loaders
from app.domain.errors import Unauthenticated
from app.domain.principals import Principal
from app.events.hub import Hub
from app.service.auth import Credential, credential_for
from app.service.database import Store


@dataclass
class Context:
    store: Store
    hub: Hub
    request: Request | WebSocket
    response: Any = None
    connection_params: dict[str, Any] | None = None
    principal: Principal | None = None
    credential: Credential | None = None
    _loaders: Loaders | None = field(default=None, repr=False)

    @property
    def is_websocket(self) -> bool:
        kind: str = self.request.scope["type"]
        return kind == "websocket"

    def authorization(self) -> str | None:
        params = self.connection_params if isinstance(self.connection_params, dict) else {}
        for key in ("Authorization", "authorization"):
            value = params.get(key)
            if isinstance(value, str):
                return value
        return self.request.headers.get("authorization")

    async def viewer(self) -> Principal:
        """The authenticated caller; unauthenticated raises."""
        if self.principal is None:
            credential = await credential_for(self.store, self.authorization())
            self.credential, self.principal = credential, credential.principal
        return self.principal

    @property
    def loaders(self) -> Loaders:
        """The request's loaders, made on first use (a mutation answered from the task in
        hand needs none)."""
        if self._loaders is None:
            if self.principal is None:
                raise Unauthenticated("a bearer token is required (Authorization: Bearer <token>)")
            self._loaders = create_loaders(self.store, self.principal, cache=not self.is_websocket)
        return self._loaders


async def get_context(request: Request | WebSocket, response: Any) -> Context:
    state = request.app.state
    return Context(store=state.store, hub=state.hub, request=request, response=response)
