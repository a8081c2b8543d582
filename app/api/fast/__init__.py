"""The API's fast paths: compiled pages and mutations, shared subscription results, events
sent past Strawberry's stream, inputs built by plan. Each is taken only while
`PRICKLE_FAST_PATHS` is on and its compat check passes (app/compat); the plain path gives
the same answers without it.

Where they are wired in: `app.api.schema.build_schema` (the compiled executor: compiled.py,
compiled_moves.py, sharing.py; inputs.py's hooks; `wire`: the subscriptions' senders) and
`app.main.create_app` (delivery.py's WebSocket handler, which also lets batches.py send
lists). No plain module of the API imports them. Strawberry's internals they use
are reached through `app.compat.strawberry` only."""

from __future__ import annotations

from app.compat import strawberry as strawberry_compat
from app.settings import current


def enabled() -> bool:
    """Whether the API takes its fast paths: the switch is on (`PRICKLE_FAST_PATHS`) and
    Strawberry's internals are the ones they were written for (checked once, warned once)."""
    return current().fast_paths and strawberry_compat.usable()


def wire(fast: bool) -> None:
    """With `fast`, the subscriptions' senders past Strawberry's stream (app/api/
    subscriptions.py `Senders`): delivery.py's and batches.py's. They send only for an
    operation run by delivery.py's handler (`running`), which `create_app` wires with a fast
    schema alone; elsewhere they answer None, as the plain path's."""
    if not fast:
        return
    from app.api.fast.batches import batch_sender
    from app.api.fast.delivery import direct_sender
    from app.api.subscriptions import Senders

    Senders.direct = staticmethod(direct_sender)
    Senders.batches = staticmethod(batch_sender)
