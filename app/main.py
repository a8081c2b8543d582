"""The Starlette app: its lifespan (store, migrations, event hub) and its routes.

The composition root: the one module that imports every layer, and joins what the layers
below do not know of each other (what observes the API, what drains its connections).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

import orjson
from cross_web import HTTPException
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL
from strawberry.schema.exceptions import InvalidOperationTypeError
from strawberry.subscriptions import (
    GRAPHQL_SSE_PROTOCOL,
    GRAPHQL_TRANSPORT_WS_PROTOCOL,
    GRAPHQL_WS_PROTOCOL,
)
from strawberry.types import ExecutionResult
from strawberry.types.unset import UnsetType

from app import board, cors, debug, graphiql, vendor
from app.a2a.inbound import mount as a2a
from app.a2a.outbound.dispatcher import Dispatcher
from app.a2a.outbound.settings import Settings as DispatchSettings
from app.api import errors, media, persisted, sse
from app.api import fast as fast_paths
from app.api.context import Context, get_context
from app.api.fast.delivery import DeliveringHandler
from app.api.limits import rate_limit
from app.api.schema import build_schema
from app.api.ws import (
    LegacyWSHandler,
    TransportWSHandler,
    authenticate_connection,
    close_every_connection,
)
from app.domain.errors import InvalidInput, Unauthenticated, Unavailable
from app.events.hub import Hub
from app.observability import drain, metrics, tracing
from app.observability.context import current as current_request
from app.observability.graphql import observing
from app.observability.requests import RequestLog
from app.request_size import MAX_BODY_BYTES, bounded, gone
from app.service import fast as service_fast
from app.service.auth import credentials_of
from app.service.database import Store, migrate, replica
from app.service.scheduler import Scheduler
from app.service.webhook_delivery import Deliverer
from app.service.webhook_delivery import Settings as DeliverySettings
from app.settings import DEFAULT_RATE, current

MAX_SUBSCRIPTIONS_PER_CONNECTION = 20
GC_THRESHOLDS = (50_000, 20, 100)
SUBSCRIPTION_PROTOCOLS = (GRAPHQL_TRANSPORT_WS_PROTOCOL, GRAPHQL_WS_PROTOCOL, GRAPHQL_SSE_PROTOCOL)

# The API's schema, observed: metrics and the request's log line (told each error's code by
# the API), and OpenTelemetry's extension when the OTEL_* variables turn traces on.
schema = build_schema(
    fast_paths.enabled(), [observing(errors.graphql_code), *tracing.schema_extensions()]
)


class GraphQLApp(GraphQL[Context, None]):
    graphql_transport_ws_handler_class = TransportWSHandler
    graphql_ws_handler_class = LegacyWSHandler
    stream_transport_classes_by_protocol = sse.TRANSPORTS
    documents = persisted.Documents()  # the app's, set by create_app

    async def get_context(self, request: Request | WebSocket, response: Any) -> Context:
        context = await get_context(request, response)
        if sse.is_event_stream(request):
            await context.viewer()  # no stream opens without a valid token: 401
        return context

    async def process_result(self, request: Request, result: ExecutionResult) -> Any:
        sse.number_next(request)  # an event stream's next `id:` (`EventStream`)
        retry_after = errors.unavailable_for(result.errors, result.data)
        request.state.retry_after = retry_after
        processed = await super().process_result(request, result)
        if getattr(request.state, "media", None) == media.GRAPHQL_RESPONSE:
            # GraphQL over HTTP (`negotiate`): a request error has no `data`, and 400
            if retry_after is None and media.before_execution(result.data, result.errors):
                processed.pop("data", None)
                request.state.status = 400
            elif result.errors:
                request.state.status = media.PARTIAL_SUCCESS
        return processed

    async def execute_single(self, *args: Any, **kwargs: Any) -> ExecutionResult:
        """A mutation sent with GET: 405 with `Allow: POST` (GraphQL over HTTP), not 400."""
        try:
            return await super().execute_single(*args, **kwargs)
        except HTTPException as refusal:
            adapter = kwargs.get("request_adapter")
            if isinstance(refusal.__cause__, InvalidOperationTypeError) and (
                adapter is not None and adapter.method == "GET"
            ):
                raise HTTPException(405, refusal.reason) from refusal
            raise

    def should_render_graphql_ide(self, request: Any) -> bool:
        """GraphiQL's page for a GET without a document: not for one that names its document
        by an id (`Documents`)."""
        named = ("documentId", "doc_id", "extensions")
        return super().should_render_graphql_ide(request) and not any(
            n in request.query_params for n in named
        )

    async def render_graphql_ide(self, request: Request) -> Response:
        """Our GraphiQL page, every library served from here (`app.graphiql`)."""
        return graphiql.page()

    def encode_json(self, data: object) -> str:
        """orjson, several times faster than json.dumps on every response and event; a str,
        so that WebSocket messages go as text frames."""
        return orjson.dumps(data).decode()

    def decode_json(self, data: str | bytes) -> object:
        """orjson, which also refuses what the server cannot hold: bytes that are not UTF-8,
        lone surrogates, NaN and numbers beyond a double, nesting deeper than 1024 (the
        standard library recursed until it crashed)."""
        return orjson.loads(data)

    async def parse_http_body(self, request: Any) -> Any:
        """The request, its document taken from its persisted id where it names one
        (`Documents`); a refusal there is raised before anything runs."""
        data = await super().parse_http_body(request)
        documents: persisted.Documents = self.documents
        if isinstance(data, list):
            return data
        document_id = None
        if request.method == "GET":
            document_id = persisted.ids_of(request.query_params)
        elif documents.named_in(await request.get_body()):
            parsed = self.parse_json(await request.get_body())
            document_id = persisted.ids_of(parsed) if isinstance(parsed, dict) else None
        named = document_id is not None or _persisted(data.extensions)
        if documents.only or named:
            sent = data.query is not None
            data.query = documents.resolve(data.query, data.extensions, document_id)
            handled = current_request.get()
            if named and handled is not None:  # the access log's `document`
                handled.document = "sent_with_id" if sent else "by_id"
        return data

    def parse_json(self, data: str | bytes) -> Any:
        parsed = super().parse_json(data)
        if not isinstance(parsed, dict | list):  # a list is a batch, refused by Strawberry
            raise HTTPException(400, "expected a JSON object")
        return parsed

    def is_websocket_origin_allowed(self, request: WebSocket, origin: str) -> bool:
        """Strawberry's check of a page on another origin: the origins of --cors-origins
        (`Cors`, which has refused the others before this)."""
        origins: cors.Origins = request.app.state.cors_origins
        return origins.allows(origin)

    async def on_ws_connect(self, context: Context) -> UnsetType:
        await authenticate_connection(context)
        return UnsetType()  # UNSET, typed: a plain connection_ack, with no payload

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            body = await bounded(scope, receive)
            if body is None:
                await _too_large()(scope, gone, send)
                return
            receive = body
            response = await self._answer(Request(scope, receive))
            await response(scope, receive, send)
            return
        await super().__call__(scope, receive, send)

    async def _answer(self, request: Request) -> Response:
        """Strawberry's answer, in the media type `Accept` asks for (`negotiate`); a
        request it refuses gets a GraphQL error (invalid_input) instead of plain text, with
        Strawberry's status."""
        chosen = None
        if not sse.is_event_stream(request) and not _wants_the_page(request):
            chosen = media.negotiate(request.headers.get("accept"))
            if chosen is None:
                return _not_acceptable()
        request.state.media = chosen
        try:
            response = await self.run(request)
        except HTTPException as refusal:
            body = errors.response_body(InvalidInput(refusal.reason))
            if chosen == media.GRAPHQL_RESPONSE:
                del body["data"]  # a request error: no data (GraphQL over HTTP)
            headers = {"allow": "POST"} if refusal.status_code == 405 else None
            return JSONResponse(body, status_code=refusal.status_code, headers=headers)
        except persisted.Refusal as refusal:  # a persisted document's, before anything ran
            handled = current_request.get()
            if handled is not None:  # the access log's `code`
                handled.code = refusal.code
            body = errors.response_body(refusal)
            del body["data"]
            # Apollo's convention (Apollo Server's, which its links follow): a hash it does
            # not know yet is a 200 to a legacy client; every other refusal is a 400
            found = isinstance(refusal, persisted.NotFound) and chosen == media.JSON
            return JSONResponse(body, status_code=200 if found else 400)
        except Unauthenticated as refusal:  # an event stream, refused before it opens
            headers = {"www-authenticate": "Bearer"}
            return JSONResponse(errors.response_body(refusal), status_code=401, headers=headers)
        except Unavailable as refusal:  # before anything ran (an event stream's token)
            return _unavailable(errors.response_body(refusal), refusal.retry_after)
        retry_after = getattr(request.state, "retry_after", None)
        if retry_after is not None and response.status_code == 200:
            response.status_code = 503
            response.headers["retry-after"] = str(math.ceil(retry_after))
        elif chosen == media.GRAPHQL_RESPONSE and response.media_type == media.JSON:
            response.headers["content-type"] = f"{media.GRAPHQL_RESPONSE}; charset=utf-8"
            response.status_code = getattr(request.state, "status", response.status_code)
        return response


class FastGraphQLApp(GraphQLApp):
    """The app with its schema's fast paths: subscription events sent past Strawberry's
    stream on graphql-transport-ws (`DeliveringHandler`)."""

    graphql_transport_ws_handler_class = DeliveringHandler


def _persisted(extensions: object) -> bool:
    return isinstance(extensions, dict) and "persistedQuery" in extensions


def _wants_the_page(request: Request) -> bool:
    """A browser opening /graphql: GraphiQL's page, not a GraphQL response."""
    return request.method == "GET" and "text/html" in request.headers.get("accept", "")


def _not_acceptable() -> JSONResponse:
    message = (
        f"this endpoint answers {media.GRAPHQL_RESPONSE} or {media.JSON} (or"
        " text/event-stream for a subscription); the request's Accept allows none of them"
    )
    body = {"errors": [{"message": message, "extensions": {"code": media.NOT_ACCEPTABLE}}]}
    return JSONResponse(body, status_code=406)


def _unavailable(body: dict[str, object], retry_after: float) -> JSONResponse:
    return JSONResponse(body, status_code=503, headers={"retry-after": str(math.ceil(retry_after))})


def _too_large() -> JSONResponse:
    refusal = errors.QueryTooComplex(f"the request body is larger than {MAX_BODY_BYTES} bytes")
    body = errors.response_body(refusal)
    return JSONResponse(body, status_code=413, headers={"connection": "close"})


def create_app(
    database_url: str | None = None,
    rate: int = DEFAULT_RATE,
    cors_origins: cors.Origins | None = None,
    documents: persisted.Documents | None = None,
) -> Starlette:
    """The app on `database_url`, limiting each principal to `rate` mutations a second
    (a burst of twice that; 0: no limit); pages of `cors_origins` may call it (`Cors`;
    None: the server's own origin only); `documents`: the persisted documents it knows, and
    whether it runs only those (`Documents`)."""
    origins = cors_origins or cors.Origins()
    service_fast.install()  # the storage's fast paths: its stores take them

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        store = Store(database_url)
        try:
            await migrate(store)
            store.watch()
            hub = Hub(store, queue_size=current().subscriber_queue)
            hub.revocation_listeners.append(credentials_of(store).revoked)
            await hub.start()
            scheduler = Scheduler(store, recheck=current().scheduler_recheck)
            await scheduler.start()
            deliverer = Deliverer(
                store,
                DeliverySettings.of(current()),
                hub.memberships_version,
                bodies={"a2a": a2a.push_body},
            )
            hub.wake_listeners.append(deliverer.wake)
            await deliverer.start()
            dispatcher = Dispatcher(store, DispatchSettings.of(current()))
            hub.wake_listeners.append(dispatcher.wake)
            await dispatcher.start()
            app.state.store, app.state.hub = store, hub
            if store.replica is not None:
                store.replica.observer = metrics.routed_read
            app.state.database_up = lambda: store.health.reachable  # /readyz's
            app.state.scheduler, app.state.deliverer = scheduler, deliverer
            app.state.dispatcher = dispatcher
            try:
                async with _observed(store, hub):
                    yield
            finally:
                await dispatcher.stop()
                await deliverer.stop()
                await scheduler.stop()
                await hub.stop()
        finally:
            await store.close()

    graphql = (FastGraphQLApp if schema.fast else GraphQLApp)(
        schema,
        keep_alive=True,
        keep_alive_interval=current().ping_seconds,
        connection_init_wait_timeout=timedelta(seconds=30),
        max_subscriptions_per_connection=MAX_SUBSCRIPTIONS_PER_CONNECTION,
        subscription_protocols=SUBSCRIPTION_PROTOCOLS,
    )
    graphql.documents = documents or persisted.Documents()
    routes = [
        Route("/graphql", graphql, methods=["GET", "POST"]),
        WebSocketRoute("/graphql", graphql),
        Route("/healthz", healthz),
        Mount("/a2a", app=a2a.A2A()),
        *board.routes(),
        *graphiql.routes(),
        *vendor.routes(),
        *debug.routes(),
        *metrics.routes(),
        *drain.routes(),
    ]
    app = Starlette(routes=routes, lifespan=lifespan, middleware=_middleware(origins))
    app.state.rate_limit = rate_limit(rate)
    app.state.cors_origins = origins
    return app


def _middleware(origins: cors.Origins) -> list[Middleware]:
    """The request id and log line outermost, then CORS (its refusals logged and carrying the
    request id), then the refusal of WebSockets while draining."""
    access_log = current().access_log
    return [
        *tracing.asgi_middleware(),
        Middleware(RequestLog, access_log=access_log),
        Middleware(cors.Cors, origins=origins),
        Middleware(drain.RefuseWhileDraining),
        Middleware(ReadsAfterWrites),
    ]


class ReadsAfterWrites:
    """With a read replica (storage's `Replica`): who each HTTP request is (its
    Authorization header), so that its reads see its own writes, and the floor it carries
    in `Prickle-Position` (what a response of this process or another answered it); every
    response to a client with a floor answers it in that header."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        store: Store | None = getattr(scope["app"].state, "store", None)
        standby = store.replica if store is not None else None
        if scope["type"] != "http" or standby is None:
            await self.app(scope, receive, send)
            return
        token = sent = None
        for name, value in scope["headers"]:
            if name == b"authorization":
                token = value.decode("latin-1")
            elif name == _POSITION:
                sent = replica.parsed_position(value.decode("latin-1"))
                if sent is None:
                    refusal = InvalidInput(
                        f"{replica.POSITION_HEADER}: {value.decode('latin-1')[:40]!r} is not a"
                        " WAL position (as a response's, e.g. 0/16B3748)"
                    )
                    answer = JSONResponse(errors.response_body(refusal), status_code=400)
                    await answer(scope, receive, send)
                    return
        with replica.client(token, sent):
            client = replica.current()

            async def answering(message: Any) -> None:
                if message["type"] == "http.response.start" and client is not None:
                    floor = standby.floor_of(client[0])
                    if floor is not None:
                        shown = replica.shown_position(floor).encode()
                        message["headers"] = [*message.get("headers", []), (_POSITION, shown)]
                await send(message)

            await self.app(scope, receive, answering)


_POSITION = replica.POSITION_HEADER.encode()


@asynccontextmanager
async def _observed(store: Store, hub: Hub) -> AsyncIterator[None]:
    """Beside the app while it serves: the hub lag figure, SQL spans, and draining on SIGTERM
    (every WebSocket closed once the hub has handed out what it read)."""
    up = metrics.watch_hub(hub, lambda: store.health.reachable)
    watcher = asyncio.create_task(up, name="prickle-hub-lag")

    def settled() -> bool:
        return hub.head >= hub.committed and all(s.queue.empty() for s in hub.subscribers)

    async def close_all() -> None:
        await close_every_connection(store, "the server is restarting; resume from your cursor")

    undo_drain = drain.draining.install(close_all, settled)
    tracing.instrument_engine(store.statements_engine)
    try:
        yield
    finally:
        undo_drain()
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
        metrics.process_ended()
        tracing.shutdown()


async def healthz(request: Request) -> JSONResponse:
    """Liveness: 200 while the process serves; the database's state (its probe's) in the
    body, without failing: restarting the process cannot bring a database back."""
    return JSONResponse({"status": "ok", "database": _database(request)})


def _database(request: Request) -> str:
    store: Store = request.app.state.store
    return "up" if store.health.reachable else "down"


def app_from_environment() -> Starlette:
    """The uvicorn factory: the app of this process's settings (`app.settings`: those
    `prickle serve` handed its workers): its database, mutation rate limit, the origins
    whose pages may call it, its persisted documents."""
    _collect_garbage_less_often()
    settings = current()
    origins = cors.Origins.parse(settings.cors_origins)
    documents = persisted.Documents.of(settings.trusted_documents, settings.trusted_documents_only)
    return create_app(settings.database_url, settings.rate_limit, origins, documents)


def _collect_garbage_less_often() -> None:
    """Raise the garbage collector's thresholds in a serving process.

    A server with many open subscriptions holds many long-lived objects, and Python's
    default thresholds (700, 10, 10) run a full collection through all of them every few
    events: with 1,000 subscribers, one event in four took 500 ms to reach them all instead
    of about 100 ms. Reference counting frees almost everything a request makes; the
    collector is only for cycles, which can wait a little longer.
    """
    gc.set_threshold(*GC_THRESHOLDS)
