"""The server's metrics, in the Prometheus text format at `GET /metrics`.

- `prickle_requests_total{operation_type, operation, code}`: GraphQL requests (queries and
  mutations; a subscription is counted by `prickle_subscriptions`), by their root fields
  (`operation`, e.g. `handoff` or `me,tasks`) and by the code of their first error (`ok`
  when none);
- `prickle_mutations_total{mutation, code}`: each mutation field executed, with its code;
- `prickle_request_duration_seconds{operation_type, operation}`: a histogram of the same;
- `prickle_websocket_connections`, `prickle_subscriptions`: open now;
- `prickle_hub_lag_events`: the newest committed seq minus the newest dispatched to
  subscribers, the most of any process;
- `prickle_events_written_total`: events in the event log (its newest seq).

Under `prickle serve` every process writes its figures to the directory in
PROMETHEUS_MULTIPROC_DIR (prometheus-client's multiprocess mode), so that one scrape of any
worker sees them all. `/metrics` answers only the addresses `--metrics-from` allows
(CIDR ranges, default loopback); any other gets 403.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
from collections.abc import Callable, Iterable, Iterator
from typing import Protocol

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead
from prometheus_client.registry import Collector
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from app.settings import Network, current, networks

REQUESTS = Counter(
    "prickle_requests",
    "GraphQL requests (queries and mutations) by root fields and first error code",
    ["operation_type", "operation", "code"],
)
MUTATIONS = Counter("prickle_mutations", "Mutation fields executed", ["mutation", "code"])
DURATION = Histogram(
    "prickle_request_duration_seconds",
    "Time to answer a GraphQL query or mutation",
    ["operation_type", "operation"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)
CONNECTIONS = Gauge(
    "prickle_websocket_connections", "Open WebSocket connections", multiprocess_mode="livesum"
)
SUBSCRIPTIONS = Gauge("prickle_subscriptions", "Open subscriptions", multiprocess_mode="livesum")
HUB_LAG = Gauge(
    "prickle_hub_lag_events",
    "The newest committed event seq minus the newest dispatched to subscribers",
    multiprocess_mode="livemax",
)
DATABASE_UP = Gauge(
    "prickle_database_up",
    "1 while the database answers this process's probe (SELECT 1 every 0.25 s), else 0",
    multiprocess_mode="livemin",
)

ROUTED_READS = Counter(
    "prickle_routed_reads",
    "Query reads a read replica may serve (--database-read-url), by where they were served"
    " and why the primary served one (lagging: the replica had not replayed the client's"
    " floor in time; unavailable)",
    ["served", "why"],
)


def routed_read(served: str, why: str) -> None:
    ROUTED_READS.labels(served, why).inc()


def connection_opened() -> None:
    CONNECTIONS.inc()


def connection_closed() -> None:
    CONNECTIONS.dec()


def process_ended() -> None:
    """Forget this process's live gauges (its connections and subscriptions are gone)."""
    if current().metrics_directory:
        mark_process_dead(os.getpid())


class _FromTheDatabase(Collector):
    """Figures every process shares, read from the database at scrape time."""

    def __init__(self, last_seq: int, webhook_backlog: int) -> None:
        self.last_seq = last_seq
        self.webhook_backlog = webhook_backlog

    def collect(self) -> Iterator[Metric]:
        yield CounterMetricFamily(
            "prickle_events_written", "Events written to the event log", value=self.last_seq
        )
        yield GaugeMetricFamily(
            "prickle_webhook_backlog",
            "Events after each enabled webhook's last delivered one, summed",
            value=self.webhook_backlog,
        )


def exposition(last_seq: int | None, webhook_backlog: int = 0) -> bytes:
    """Every process's figures (or this one's, outside multiprocess mode), in text format."""
    registry = REGISTRY
    if current().metrics_directory:
        registry = CollectorRegistry()
        MultiProcessCollector(registry)
    else:
        registry = CollectorRegistry()
        registry.register(_Everything())
    if last_seq is not None:  # (not while the database is down)
        registry.register(_FromTheDatabase(last_seq, webhook_backlog))
    return generate_latest(registry)


class _Everything(Collector):
    """The default registry's metrics, into a registry of the scrape's own."""

    def collect(self) -> Iterator[Metric]:
        yield from REGISTRY.collect()


def routes() -> list[Route]:
    return [Route("/metrics", serve_metrics)]


async def serve_metrics(request: Request) -> Response:
    ranges = networks(current().metrics_from)
    if not allowed(request.client.host if request.client else None, ranges):
        return PlainTextResponse("metrics are not served to this address\n", status_code=403)
    state = request.app.state
    hub = state.hub
    HUB_LAG.set(max(hub.committed - hub.head, 0))
    up = state.store.health.reachable
    DATABASE_UP.set(1 if up else 0)
    last_seq: int | None = None
    backlog = 0
    if up:
        try:
            async with state.store.read() as tx:
                last_seq = await tx.events.last_seq()
                backlog = await tx.webhooks.backlog(last_seq)
        except Exception:  # went down meanwhile (logged by its health): this process's figures
            last_seq = None
    return Response(exposition(last_seq, backlog), media_type=CONTENT_TYPE_LATEST)


async def watch_hub(hub: _HasHead, database_up: Callable[[], bool], seconds: float = 0.25) -> None:
    """Keep this process's hub lag and database state current (other workers' scrapes read
    them from its file)."""
    while True:
        HUB_LAG.set(max(hub.committed - hub.head, 0))
        DATABASE_UP.set(1 if database_up() else 0)
        await asyncio.sleep(seconds)


class _HasHead(Protocol):
    committed: int
    head: int


def allowed(host: str | None, ranges: Iterable[Network]) -> bool:
    """Whether a client address lies in one of the ranges (--metrics-from)."""
    if host is None:
        return False
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return any(address in network for network in ranges)
