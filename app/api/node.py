"""The Node interface: an object refetched by its id alone."""

from __future__ import annotations

import strawberry


@strawberry.interface(
    description="An object refetched by its id alone (`node`, `nodes`): each id is unique "
    "among all nodes (docs/frontends.md, Relay)."
)
class Node:
    id: strawberry.ID
