"""A span around a piece of work, when the OTEL_* variables turn traces on; a no-op otherwise.

A leaf: it imports nothing of the server, so any layer may open a span (the service opens
`prickle.move`). Installing the tracer and its exporters, and tracing the ASGI app,
Strawberry and SQLAlchemy, is the tracing module's (`setup`), which the app calls.
When traces are off nothing of OpenTelemetry is imported.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from functools import cache
from typing import Any, Protocol

from app.settings import current


class Span(Protocol):
    def set_attribute(self, key: str, value: Any) -> None: ...


class _NoSpan:
    def set_attribute(self, key: str, value: Any) -> None:
        return None


_NO_SPAN = _NoSpan()


@cache
def enabled() -> bool:
    """Whether the OTEL_* variables ask for traces (read once per process)."""
    settings = current()
    if settings.otel_sdk_disabled:
        return False
    exporters = settings.otel_traces_exporter
    if exporters is not None:
        return exporters.strip().lower() not in ("", "none")
    return bool(settings.otel_exporter_otlp_endpoint or settings.otel_exporter_otlp_traces_endpoint)


@contextlib.contextmanager
def span(name: str, **attributes: str) -> Iterator[Span]:
    """A span of this process's tracer while traces are on; a no-op otherwise."""
    if not enabled():
        yield _NO_SPAN
        return
    from opentelemetry import trace

    with trace.get_tracer("prickle").start_as_current_span(name, attributes=attributes) as s:
        yield s
