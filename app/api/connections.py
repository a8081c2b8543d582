"""A page of items in Relay's shape: the generic Connection, its edges, its page info, and
the count of all the items, made once and capped."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

import strawberry

from app.domain.reads import Paging
from app.settings import current


@strawberry.type(
    description="Where a page lies among all the items: Relay's names (`hasNextPage`, "
    "`hasPreviousPage`, `startCursor`, `endCursor`); the snake_case ones are deprecated."
)
class PageInfo:
    next_page: bool = strawberry.field(
        name="hasNextPage",
        description="Paging forward (`first`): whether more items follow this page. Paging "
        "backward (`last`): whether `before` was given (the items from it on follow).",
    )
    previous_page: bool = strawberry.field(
        name="hasPreviousPage",
        description="Paging backward (`last`): whether more items come before this page. "
        "Paging forward (`first`): whether `after` was given (the items up to it come before).",
    )
    start: str | None = strawberry.field(
        name="startCursor", description="The cursor of the page's first edge."
    )
    end: str | None = strawberry.field(
        name="endCursor", description="The cursor of the page's last edge."
    )

    @strawberry.field(deprecation_reason="Use pageInfo { hasNextPage } (Relay's name).")
    def has_next_page(self) -> bool:
        return self.next_page

    @strawberry.field(deprecation_reason="Use pageInfo { endCursor } (Relay's name).")
    def end_cursor(self) -> str | None:
        return self.end

    @classmethod
    def of(cls, cursors: list[str], more: bool, paging: Paging[Any]) -> PageInfo:
        """The page info of a page whose edges have these cursors; `more`: whether more
        items lie beyond the page in the direction it was read."""
        return cls(
            next_page=(paging.before is not None) if paging.backward else more,
            previous_page=more if paging.backward else (paging.after is not None),
            start=cursors[0] if cursors else None,
            end=cursors[-1] if cursors else None,
        )


N = TypeVar("N")


@strawberry.type(description="An item of a page, with the cursor to page on from it.")
class Edge(Generic[N]):
    cursor: str
    node: N


Count = Callable[[int], Awaitable[int]]  # what matches, counted up to the limit given

CAPPED = (
    "Whether more match than `total_count_cap`: `total_count` stopped counting there "
    "(then it is the cap)."
)
CAP = "The most `total_count` counts (PRICKLE_COUNT_CAP): counting stops there, so it is cheap."


class Counter:
    """A connection's count, made once however many of its fields ask: at most the cap and
    one more, so that a count costs the same however many tasks match."""

    def __init__(self, count: Count) -> None:
        self.cap = current().count_cap
        self._count = count
        self._made: asyncio.Task[int] | None = None

    async def counted(self) -> int:
        if self._made is None:
            self._made = asyncio.ensure_future(self._count(self.cap + 1))
        return await asyncio.shield(self._made)

    async def total(self) -> int:
        return min(await self.counted(), self.cap)

    async def capped(self) -> bool:
        return await self.counted() > self.cap


@strawberry.type
class Connection(Generic[N]):
    """A page of items in Relay's shape (`edges { cursor node }`, `pageInfo`), with the
    count of all of them."""

    edges: list[Edge[N]]
    info: PageInfo = strawberry.field(name="pageInfo")
    counter: strawberry.Private[Counter]

    @strawberry.field(deprecation_reason="Use pageInfo (Relay's name).")
    def page_info(self) -> PageInfo:
        return self.info

    @strawberry.field(
        description="Every visible item matching the filters, on all pages, up to "
        "`total_count_cap`."
    )
    async def total_count(self) -> int:
        return await self.counter.total()

    @strawberry.field(description=CAPPED)
    async def total_count_capped(self) -> bool:
        return await self.counter.capped()

    @strawberry.field(description=CAP)
    def total_count_cap(self) -> int:
        return self.counter.cap
