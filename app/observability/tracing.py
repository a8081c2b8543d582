"""OpenTelemetry traces, on only when the standard OTEL_* variables ask for them.

`OTEL_TRACES_EXPORTER` (`console`, `otlp`, comma-separated; `none` is off), or an OTLP
endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), turns them on
unless `OTEL_SDK_DISABLED=true`; `OTEL_SERVICE_NAME` names the service (default `prickle`).
Then the ASGI app, Strawberry (a span per operation and resolver, without argument values)
and SQLAlchemy are traced, and each move made through a verb has a `prickle.move` span with
`prickle.task_id`, `prickle.verb`, `prickle.from_state` and `prickle.to_state`.

Whether they are on, and the span helper the service uses, are `app.spans`'s (a leaf any
layer may import); this module installs the tracer and instruments the app, as the app
asks. When traces are off nothing of OpenTelemetry is imported.
Needs the `otel` extra (`pip install 'prickle[otel]'`); `otlp` also needs an exporter package
(opentelemetry-exporter-otlp).
"""

from __future__ import annotations

import contextlib
import importlib
import logging
from functools import cache
from typing import Any

from app.settings import current
from app.spans import enabled

log = logging.getLogger(__name__)


@cache
def setup() -> bool:
    """Install the tracer provider and its exporters, once per process; False when the
    OpenTelemetry SDK is not installed (a warning says so)."""
    try:
        from opentelemetry import trace
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
    except ImportError:
        log.warning("OTEL_* asks for traces, but the otel extra is not installed")
        return False
    service = current().otel_service_name
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    for processor in _processors():
        provider.add_span_processor(processor)
    trace.set_tracer_provider(provider)
    return True


def _processors() -> list[Any]:
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        ConsoleSpanExporter,
        SimpleSpanProcessor,
    )

    names = current().otel_traces_exporter or "otlp"
    found: list[Any] = []
    for name in (n.strip().lower() for n in names.split(",")):
        if name == "console":
            found.append(SimpleSpanProcessor(ConsoleSpanExporter()))
        elif name == "otlp":
            exporter = _otlp_exporter()
            if exporter is not None:
                found.append(BatchSpanProcessor(exporter))
        elif name != "none":
            log.warning("unknown OTEL_TRACES_EXPORTER %r: ignored", name)
    return found


def _otlp_exporter() -> Any:
    """OTLP over HTTP, else gRPC: whichever exporter package is installed."""
    for transport in ("http", "grpc"):
        with contextlib.suppress(ImportError):
            module = importlib.import_module(f"opentelemetry.exporter.otlp.proto.{transport}")
            return importlib.import_module(f"{module.__name__}.trace_exporter").OTLPSpanExporter()
    log.warning("OTLP traces need opentelemetry-exporter-otlp; none are sent")
    return None


def asgi_middleware() -> list[Any]:
    """The ASGI instrumentation, as Starlette middleware; none when traces are off."""
    if not (enabled() and setup()):
        return []
    from opentelemetry.instrumentation.asgi import OpenTelemetryMiddleware
    from starlette.middleware import Middleware

    return [Middleware(OpenTelemetryMiddleware)]


def schema_extensions() -> list[Any]:
    """Strawberry's OpenTelemetry extension, recording no argument values; none when off."""
    if not (enabled() and setup()):
        return []
    from strawberry.extensions.tracing import OpenTelemetryExtension

    def no_arguments(arguments: dict[str, Any], info: Any) -> dict[str, Any]:
        return {}

    return [lambda: OpenTelemetryExtension(arg_filter=no_arguments)]


def instrument_engine(engine: Any) -> None:
    """SQLAlchemy's statements (of a sync Engine: the store's statements_engine) as spans;
    nothing when traces are off."""
    if not (enabled() and setup()):
        return
    from opentelemetry.instrumentation.sqlalchemy import SQLAlchemyInstrumentor

    # its declared range stops short of SQLAlchemy 2.1, whose engine events it uses unchanged
    SQLAlchemyInstrumentor().instrument(engine=engine, skip_dep_check=True)


def shutdown() -> None:
    """Send what is buffered before the process ends."""
    if not enabled():
        return
    from opentelemetry import trace

    provider = trace.get_tracer_provider()
    ending = getattr(provider, "shutdown", None)
    if callable(ending):
        ending()
