"""The environment variables `prickle serve` hands its workers, and the metrics access rule.

Kept apart from app/observability/metrics.py: prometheus-client reads
PROMETHEUS_MULTIPROC_DIR when it is first imported, so `prickle serve` sets it before.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

ACCESS_LOG = "PRICKLE_ACCESS_LOG"  # "1": a log line per request
METRICS_FROM = "PRICKLE_METRICS_FROM"  # the CIDR ranges /metrics answers
MULTIPROCESS = "PROMETHEUS_MULTIPROC_DIR"  # prometheus-client's: every worker's figures
LOOPBACK = "127.0.0.0/8,::1/128"

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def networks(text: str) -> list[Network]:
    """A comma-separated CIDR list; ValueError names the bad entry."""
    found: list[Network] = []
    for entry in (e.strip() for e in text.split(",")):
        if entry:
            try:
                found.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                raise ValueError(f"--metrics-from: {entry!r} is not an address range") from None
    return found


def allowed(host: str | None, ranges: Iterable[Network]) -> bool:
    """Whether a client address lies in one of the ranges."""
    if host is None:
        return False
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return any(address in network for network in ranges)
