"""A typed client of the Prickle task server: `Client` (blocking) and `AsyncClient`.

    from prickle_client import Client
    with Client("http://127.0.0.1:8000/graphql", token) as prickle:
        task = prickle.accept_task(task_id)

Each verb returns the task as the server left it; each refusal raises the exception of its
code (`InvalidState`, `Forbidden`, `NotFound`, ...; all are `PrickleError`).
`AsyncClient.events(...)` follows the task_events subscription across lost connections.
"""

from __future__ import annotations

from ._async import AsyncClient, Event, Principal, TaskPage
from ._base import Task
from ._sync import Client
from .errors import (
    ClientClosed,
    Conflict,
    Forbidden,
    Internal,
    InvalidInput,
    InvalidState,
    NotFound,
    PrickleError,
    QueryTooComplex,
    RateLimited,
    TransportFailed,
    TurnBudgetExhausted,
    Unauthenticated,
    Unavailable,
)
from .events import EventBatchStream, EventStream
from .generated.enums import Decision, Provenance, TaskState, WaitOn
from .generated.input_types import CheckpointInput, EvidenceInput, PacketInput, ResultInput

__all__ = [
    "AsyncClient",
    "CheckpointInput",
    "Client",
    "ClientClosed",
    "Conflict",
    "Decision",
    "Event",
    "EventBatchStream",
    "EventStream",
    "EvidenceInput",
    "Forbidden",
    "Internal",
    "InvalidInput",
    "InvalidState",
    "NotFound",
    "PacketInput",
    "PrickleError",
    "Principal",
    "Provenance",
    "QueryTooComplex",
    "RateLimited",
    "ResultInput",
    "Task",
    "TaskPage",
    "TaskState",
    "TransportFailed",
    "TurnBudgetExhausted",
    "Unauthenticated",
    "Unavailable",
    "WaitOn",
]
