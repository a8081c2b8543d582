"""The API's fast paths: compiled pages and mutations, shared subscription results, events
sent past Strawberry's stream, inputs built by plan. Each is taken only while
`PRICKLE_FAST_PATHS` is on and its compat check passes (app/compat); the plain path gives
the same answers without it.

Where they are wired in: `app.api.schema.build_schema` (the compiled executor: compiled.py,
compiled_moves.py, sharing.py; inputs.py's hooks) and `app.main.create_app` (delivery.py's
WebSocket handler, which also lets batches.py send lists). Strawberry's internals they use
are reached through app/compat/strawberry.py only."""

from __future__ import annotations

from app.compat import strawberry as strawberry_compat
from app.settings import current


def enabled() -> bool:
    """Whether the API takes its fast paths: the switch is on (`PRICKLE_FAST_PATHS`) and
    Strawberry's internals are the ones they were written for (checked once, warned once)."""
    return current().fast_paths and strawberry_compat.usable()
