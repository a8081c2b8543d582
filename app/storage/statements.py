"""Statements built once, said so: what runs a transaction's statements may prepare each once.

A repository builds its statements with SQLAlchemy's public API, most of them once (module
constants, or cached builders). `once(statement)` records that, and returns the statement: it
lives as long as the process, so whatever executes it may keep what it makes of it (a
compiled form) by the statement's identity. On the plain path SQLAlchemy runs it as any
other; the fast paths (`Direct`) read this registry, and nothing here
knows them.

`last=True`: the statement ends its command (a task's save with its events, app/storage/
repositories/events.py): it writes, and nothing follows it; where the command wrote nothing
before it, it may commit by itself (`Store.command`).
"""

from __future__ import annotations

from typing import TypeVar

from sqlalchemy.sql import ClauseElement

Statement = TypeVar("Statement", bound=ClauseElement)

ONCE: dict[int, ClauseElement] = {}  # every statement built once, by its identity
LAST: set[int] = set()  # those that end their command


def once(statement: Statement, last: bool = False) -> Statement:
    """Record `statement` as built once (`last`: ending its command), and return it."""
    ONCE[id(statement)] = statement
    if last:
        LAST.add(id(statement))
    return statement
