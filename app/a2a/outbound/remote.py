"""One remote A2A agent, as the `a2a-sdk` client reaches it: through the webhooks' guarded
HTTP client (every address checked at connection, the webhooks' URL guard), with the
owner's credential as a bearer token on every request."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
from a2a.client import A2AClientError, ClientConfig, ClientFactory
from a2a.client.client import Client
from a2a.types.a2a_pb2 import (
    AgentCard,
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
)
from a2a.types.a2a_pb2 import Task as RemoteTask
from a2a.utils.errors import A2AError

from app.domain.errors import InvalidInput
from app.domain.remote_agents import RemoteAgent
from app.service.remote_agents import ALLOWED_BY, bearer, fetch_card
from app.service.webhook_urls import client

CONNECTIONS = 16


# Besides an answer, a request may end in an A2A error, an HTTP one, a reply that does not
# parse (ValueError), or InvalidInput: the guard refused an address (a name may resolve to a
# private one after it was checked).


class RemoteFailed(Exception):
    """The remote agent did not answer as A2A says (or not at all); `refused` when it
    answered with an A2A error (sending again would not help)."""

    def __init__(self, message: str, refused: bool = False) -> None:
        super().__init__(message)
        self.refused = refused


class Remote:
    """The client of one remote agent: `open()` reads its card first."""

    def __init__(self, agent: RemoteAgent, allow_private: bool, timeout: float) -> None:
        self.agent = agent
        self.http = client(allow_private, CONNECTIONS, timeout, ALLOWED_BY)
        self.http.headers.update(bearer(agent.credential))
        self.card: AgentCard | None = None
        self._sending: Client | None = None
        self._following: Client | None = None

    async def open(self) -> None:
        self.card = await fetch_card(self.http, self.agent.card_url, self.agent.credential)
        self._sending = ClientFactory(
            ClientConfig(streaming=False, polling=True, httpx_client=self.http)
        ).create(self.card)
        self._following = ClientFactory(
            ClientConfig(streaming=True, httpx_client=self.http)
        ).create(self.card)

    async def close(self) -> None:
        await self.http.aclose()

    @property
    def streams(self) -> bool:
        return self.card is not None and self.card.capabilities.streaming

    def _client(self, following: bool = False) -> Client:
        chosen = self._following if following else self._sending
        assert chosen is not None, "open() first"
        return chosen

    async def send(self, request: SendMessageRequest) -> RemoteTask:
        """Send the message; the remote task it made or continued."""
        try:
            async for response in self._client().send_message(request):
                if response.HasField("task"):
                    return response.task
                raise RemoteFailed("the remote agent answered with a message, not a task", True)
        except A2AClientError as error:  # no answer, or not one A2A knows: try again
            raise RemoteFailed(f"SendMessage failed: {error}") from error
        except A2AError as error:  # an A2A error: the remote refused the message
            raise RemoteFailed(f"SendMessage failed: {error}", refused=True) from error
        except (httpx.HTTPError, ValueError, InvalidInput) as error:
            raise RemoteFailed(f"SendMessage failed: {error}") from error
        raise RemoteFailed("the remote agent answered nothing")

    async def get(self, remote_task_id: str) -> RemoteTask:
        try:
            return await self._client().get_task(GetTaskRequest(id=remote_task_id))
        except A2AClientError as error:
            raise RemoteFailed(f"GetTask failed: {error}") from error
        except A2AError as error:  # say TaskNotFound
            raise RemoteFailed(f"GetTask failed: {error}", refused=True) from error
        except (httpx.HTTPError, ValueError, InvalidInput) as error:
            raise RemoteFailed(f"GetTask failed: {error}") from error

    async def find(self, context_id: str) -> RemoteTask | None:
        """The remote task of the context (a send made before a crash), if the remote lists
        tasks; None when it has none, or does not list them."""
        try:
            found = await self._client().list_tasks(ListTasksRequest(context_id=context_id))
        except (A2AError, httpx.HTTPError, ValueError, NotImplementedError, InvalidInput):
            return None
        return found.tasks[0] if found.tasks else None

    async def cancel(self, remote_task_id: str) -> None:
        try:
            await self._client().cancel_task(CancelTaskRequest(id=remote_task_id))
        except (A2AError, httpx.HTTPError, ValueError, InvalidInput) as error:
            raise RemoteFailed(f"CancelTask failed: {error}") from error

    async def updates(self, remote_task_id: str) -> AsyncIterator[StreamResponse]:
        """The remote task's stream of updates (SubscribeToTask)."""
        request = SubscribeToTaskRequest(id=remote_task_id)
        try:
            async for response in self._client(following=True).subscribe(request):
                yield response
        except (A2AError, httpx.HTTPError, ValueError, NotImplementedError, InvalidInput) as error:
            raise RemoteFailed(f"SubscribeToTask failed: {error}") from error
