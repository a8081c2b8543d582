"""One fast path taken off a server, to measure what it is worth on its own target: a
`prickle serve` started with this folder on `PYTHONPATH` and `PRICKLE_BENCH_WITHOUT=<name>`
runs with every other fast path as it is. For the bench only (tests/bench/run.py and
compare.py, `--without`); the names are `WITHOUT`'s."""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any


def _grouped() -> None:  # a SQLite file's writes one transaction each, not grouped
    from app.storage.fast.paths import FastPaths

    made = FastPaths.__init__

    def init(self: FastPaths, *args: Any, **kwargs: Any) -> None:
        made(self, *args, **kwargs)
        self.grouped = None

    FastPaths.__init__ = init


def _alone() -> None:  # PostgreSQL: every block a transaction, BEGIN ... COMMIT included
    from app.storage.fast.paths import FastPaths

    made = FastPaths.transaction

    def transaction(
        self: FastPaths,
        write: bool,
        alone: bool = False,
        optimistic: bool = False,
        snapshot: bool = False,
    ) -> Any:
        return made(self, write, False, False, snapshot)

    FastPaths.transaction = transaction


def _kept() -> None:  # PostgreSQL: each transaction checks a connection out of the pool
    from app.storage.fast.kept import Kept

    made = Kept.__init__

    def init(self: Kept, engine: Any, most: int) -> None:
        made(self, engine, 0)

    Kept.__init__ = init


def _driver() -> None:  # every statement through SQLAlchemy (SQLite: in the transaction the
    # fast path began; PostgreSQL: as when listened to, BEGIN ... COMMIT included)
    from app.storage.fast import loop, paths

    loop.marked = lambda statement: None
    paths._listened = lambda conn: True


def _shared_read() -> None:  # each read of a query in a transaction of its own
    from app.storage.fast.paths import FastPaths

    FastPaths.reading = lambda self, snapshot=False: nullcontext()


def _compiled_moves() -> None:
    from app.api.fast import compiled_moves

    compiled_moves.cached_plan = lambda schema, operation: None


def _compiled_page() -> None:
    from app.api.fast import compiled

    compiled._plans.of = lambda operation: None


def _inputs() -> None:
    from app.api.fast import inputs

    inputs.wire = lambda on: None


def _sharing() -> None:
    from app.api.fast import sharing

    sharing._key = lambda executor, payload: None


def _delivery() -> None:  # each event through Strawberry's stream (the batches still sent)
    from app.api.fast import delivery

    delivery.direct_sender = lambda: None


def _batches() -> None:
    from app.api.fast import batches

    batches.batch_sender = lambda info: None


WITHOUT: dict[str, Callable[[], None]] = {
    "grouped": _grouped,
    "alone": _alone,
    "kept": _kept,
    "driver": _driver,
    "shared_read": _shared_read,
    "compiled_moves": _compiled_moves,
    "compiled_page": _compiled_page,
    "inputs": _inputs,
    "sharing": _sharing,
    "delivery": _delivery,
    "batches": _batches,
}

for _name in filter(None, os.environ.get("PRICKLE_BENCH_WITHOUT", "").split(",")):
    WITHOUT[_name]()
