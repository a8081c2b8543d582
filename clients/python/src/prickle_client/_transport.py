"""The generated client with the server's errors raised as `prickle_client.errors`."""

from __future__ import annotations

from typing import Any, cast

import httpx

from .errors import Internal, PrickleError, from_graphql
from .generated.client import GeneratedClient
from .generated.exceptions import GraphQLClientGraphQLMultiError


class Transport(GeneratedClient):
    """Every response goes through `get_data`: its first error becomes a PrickleError."""

    def get_data(self, response: Any) -> dict[str, Any]:
        try:
            body = response.json()
        except ValueError as error:
            raise Internal(f"HTTP {response.status_code}: not a GraphQL response") from error
        if not isinstance(body, dict):
            raise Internal(f"HTTP {response.status_code}: not a GraphQL response")
        if body.get("errors"):
            raise from_graphql(body["errors"][0])
        if not 200 <= response.status_code <= 299 or body.get("data") is None:
            raise Internal(f"HTTP {response.status_code}: no data")
        return cast(dict[str, Any], body["data"])


def subscription_error(error: GraphQLClientGraphQLMultiError) -> PrickleError:
    """A subscription's `error` message as the exception of its first error."""
    first = error.errors[0]
    return from_graphql({"message": first.message, "extensions": first.extensions or {}})


def http_client(token: str, timeout: float) -> httpx.AsyncClient:
    """The HTTP client of a principal's token; with none (""), of no one."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.AsyncClient(headers=headers, timeout=timeout)


def ws_url(url: str) -> str:
    """The WebSocket URL of a GraphQL endpoint's http(s) URL."""
    if url.startswith("https://"):
        return "wss://" + url.removeprefix("https://")
    return "ws://" + url.removeprefix("http://")


__all__ = ["Transport", "http_client", "subscription_error", "ws_url"]
