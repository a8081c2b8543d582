"""Where a webhook may send: the URL check at registration and again at every connection.

A webhook URL must be `http` or `https`, and its host must not resolve to a loopback,
private, link-local, multicast (or unspecified, reserved, or any other address that is not
globally reachable, such as 100.64.0.0/10) address, unless the server runs
with `--allow-private-webhooks` (PRICKLE_ALLOW_PRIVATE_WEBHOOKS=1). Because a name can
resolve differently later (DNS rebinding), the HTTP client's connections go through
`GuardedBackend`, which resolves the host itself, checks every address, and connects to the
addresses it checked, in the resolver's order, until one answers; TLS still verifies the
certificate against the host name.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

import httpcore
import httpx

from app.domain.errors import InvalidInput
from app.settings import current

MAX_URL = 2048
ALLOWED_BY = "--allow-private-webhooks"

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class RefusedAddress(InvalidInput):
    """The URL's host is, or resolves to, an address webhooks may not reach."""


def private_allowed() -> bool:
    """Whether webhooks may reach private addresses (--allow-private-webhooks)."""
    return current().allow_private_webhooks


def refused(address: IPAddress) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return refused(address.ipv4_mapped)
    return (
        address.is_loopback
        or address.is_private
        or address.is_link_local
        or address.is_multicast
        or address.is_unspecified
        or address.is_reserved
        or not address.is_global  # e.g. 100.64.0.0/10, shared address space (RFC 6598)
    )


async def resolve(host: str, port: int) -> list[str]:
    """Every address the host resolves to (the host itself when it is an address)."""
    try:
        found = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise InvalidInput(f"url: the host {host!r} does not resolve ({error})") from None
    return list(dict.fromkeys(str(info[4][0]) for info in found))


def check_addresses(
    host: str, addresses: Iterable[str], allow_private: bool, allowed_by: str = ALLOWED_BY
) -> None:
    if allow_private:
        return
    for text in addresses:
        if refused(ipaddress.ip_address(text.split("%", 1)[0])):
            raise RefusedAddress(
                f"url: {host!r} resolves to {text}, a loopback, private, link-local, multicast "
                f"or otherwise non-global address (the server allows these only with "
                f"{allowed_by})"
            )


async def check_url(url: str, allow_private: bool, allowed_by: str = ALLOWED_BY) -> str:
    """The URL, if a webhook may be sent to it; InvalidInput says why not. (A remote A2A
    agent's card URL is checked the same way, `allowed_by` its own setting.)"""
    if not isinstance(url, str) or not url or len(url) > MAX_URL:
        raise InvalidInput(f"url: must be an http or https URL of at most {MAX_URL} characters")
    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as error:
        raise InvalidInput(f"url: {error}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidInput(f"url: {url!r} is not an http or https URL with a host")
    if parts.username is not None or parts.password is not None:
        raise InvalidInput("url: must not hold credentials")
    host = parts.hostname
    check_addresses(host, await resolve(host, port), allow_private, allowed_by)
    return url


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend, connecting only to addresses `check_addresses` allows."""

    def __init__(self, allow_private: bool, allowed_by: str = ALLOWED_BY) -> None:
        self.allow_private = allow_private
        self.allowed_by = allowed_by
        self.inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = await resolve(host, port)
        check_addresses(host, addresses, self.allow_private, self.allowed_by)
        for address in addresses[:-1]:  # the next one when one does not answer (say IPv6)
            try:
                return await self.inner.connect_tcp(
                    address, port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout):
                continue
        return await self.inner.connect_tcp(
            addresses[-1], port, timeout, local_address, socket_options
        )

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("webhooks are not sent over Unix sockets")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


def client(
    allow_private: bool,
    max_connections: int = 100,
    timeout: float = 10.0,
    allowed_by: str = ALLOWED_BY,
) -> httpx.AsyncClient:
    """The HTTP client deliveries use: `timeout` seconds for each of connecting, sending,
    waiting for the answer and reading it, no redirects, pooled connections, every
    connection checked by GuardedBackend; no proxy from the environment."""
    transport = httpx.AsyncHTTPTransport()
    transport._pool = httpcore.AsyncConnectionPool(
        ssl_context=httpx.create_ssl_context(),
        max_connections=max_connections,
        max_keepalive_connections=max_connections,
        keepalive_expiry=30.0,
        network_backend=GuardedBackend(allow_private, allowed_by),
    )
    return httpx.AsyncClient(
        transport=transport, timeout=timeout, follow_redirects=False, trust_env=False
    )
