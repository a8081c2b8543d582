"""What the generated `Client` (_sync.py) stands on: an `AsyncClient` run on a loop of its own."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Coroutine, Iterator
from typing import Any, TypeVar

from ._async import AsyncClient

T = TypeVar("T")


class SyncBase:
    def __init__(self, url: str, token: str, *, timeout: float = 30.0) -> None:
        self._runner = asyncio.Runner()
        self._client = AsyncClient(url, token, timeout=timeout)

    def __enter__(self) -> SyncBase:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._runner.run(self._client.aclose())
        self._runner.close()

    def _run(self, call: Coroutine[Any, Any, T]) -> T:
        return self._runner.run(call)

    def _iterate(self, items: AsyncIterator[T]) -> Iterator[T]:
        while True:
            try:
                yield self._runner.run(anext(items))  # type: ignore[arg-type]
            except StopAsyncIteration:
                return
