"""What a compiled path works out once per document: a plan per operation (or None when
the operation is outside its subset), the most recently used kept."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from graphql import OperationDefinitionNode

P = TypeVar("P")
KEPT = 256


class Plans(Generic[P]):
    """`make(operation)`, kept by the document's text and the operation's place in it."""

    def __init__(self, make: Callable[[OperationDefinitionNode], P | None]) -> None:
        self.make = make
        self._kept: OrderedDict[Hashable, P | None] = OrderedDict()

    def of(self, operation: OperationDefinitionNode) -> P | None:
        if operation.loc is None:
            return None
        key = (operation.loc.source.body, operation.loc.start)
        if key in self._kept:
            self._kept.move_to_end(key)
            return self._kept[key]
        plan = self._kept[key] = self.make(operation)
        if len(self._kept) > KEPT:
            self._kept.popitem(last=False)
        return plan
