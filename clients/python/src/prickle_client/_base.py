"""What `AsyncClient` and its generated verbs (`_verbs.py`) share: the task as a verb returns
it, the shape of an input given as a dict, and the checks that refuse a bad argument before
anything is sent."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from enum import Enum
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ._transport import Transport
from .errors import InvalidInput
from .generated.fragments import TaskDetail

Task = TaskDetail
Shape = Mapping[str, Any]
M = TypeVar("M", bound=BaseModel)
N = TypeVar("N", bound=Enum)


def _shape(model: type[M], given: object) -> M:
    """`given` (the model, or a dict of its shape) as `model`; InvalidInput, as the server
    would answer, when it does not fit (nothing is sent)."""
    try:
        return model.model_validate(given)
    except ValidationError as error:
        raise InvalidInput(str(error), {"code": "invalid_input"}) from error


def _enum(kind: type[N], given: N | str) -> N:
    try:
        return kind(given)
    except ValueError as error:
        names = ", ".join(str(member.value) for member in kind)
        raise InvalidInput(f"{given!r} is none of {names}", {"code": "invalid_input"}) from error


class VerbCalls:
    """What a generated verb method calls: `_verb` (AsyncClient's) makes `call`, which
    `_send`s the verb's document, and returns the task."""

    _api: Transport

    async def _verb(
        self,
        task_id: str,
        verb: str,
        call: Callable[[], Awaitable[Any]],
        pick: Callable[[Any], Task] | None = None,
    ) -> Task:
        raise NotImplementedError

    async def _send(
        self, document: str, operation: str, verb: str, variables: Mapping[str, object]
    ) -> Task:
        """The verb's document (its operation named) sent with `variables`: the task it
        answers."""
        response = await self._api.execute(
            query=document, operation_name=operation, variables=dict(variables)
        )
        return Task.model_validate(self._api.get_data(response)[verb])
